//! Turning a run into something a person or a machine reads.
//!
//! Every reporter is a sink of the runner's events: the terminal and the event log print
//! them as they come; the runner's [`Aggregator`](crate::runner::aggregate::Aggregator) builds the final [`RunReport`], which the
//! file reporters (HTML, JUnit, JSON, Markdown) render with the baseline comparison, so one
//! run can write all of them: `--report html=out/report.html --report junit=out/junit.xml ...`.

pub mod baseline;
pub mod baseline_official;
pub mod deterministic;
pub mod expected;
pub mod html;
pub mod human;
pub mod json;
pub mod jsonl;
pub mod junit;
pub mod markdown;
pub mod matrix;
pub mod official_checks;
pub mod sarif;
pub mod summary;
pub mod terminal;

use std::path::{Path, PathBuf};
use std::str::FromStr;

use crate::outcome::{RunReport, RunVerdict};

/// Writes the JSON report (format documented in `reports/results.schema.json`).
pub fn to_json(report: &RunReport) -> String {
    serde_json::to_string_pretty(report).expect("reports always serialize")
}

/// What reporters render from.
#[derive(Clone, Copy, Debug)]
pub struct Input<'a> {
    /// The run's report.
    pub run: &'a RunReport,
    /// The comparison with `--expected-failures`, when given.
    pub baseline: Option<&'a expected::Comparison>,
    /// Times print as placeholders (`--deterministic`).
    pub deterministic: bool,
}

impl Input<'_> {
    /// Whether the run passes, counting the baseline (harness errors never pass).
    pub fn passes(&self) -> bool {
        if self.run.has_errors() {
            return false;
        }
        match self.baseline {
            Some(b) => b.passes(),
            None => self.run.verdict == RunVerdict::Pass,
        }
    }
}

/// The kinds of `--report`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ReportKind {
    /// A standalone HTML page.
    Html,
    /// JUnit XML, for CI test views.
    Junit,
    /// The JSON report (`reports/report.schema.json`).
    Json,
    /// A Markdown summary, e.g. for a pull request comment.
    Markdown,
    /// SARIF 2.1.0 for code scanning ([`sarif`]).
    Sarif,
    /// One JSON event per line, written while the run goes (see [`jsonl`]), not rendered
    /// from the final report.
    Events,
}

impl ReportKind {
    /// The kinds rendered from the final report.
    pub const ALL: [ReportKind; 5] = [
        Self::Html,
        Self::Junit,
        Self::Json,
        Self::Markdown,
        Self::Sarif,
    ];

    /// Whether the report is written while the run goes, from events.
    pub fn is_streamed(self) -> bool {
        self == Self::Events
    }

    /// The kind as `--report` spells it.
    pub fn name(self) -> &'static str {
        match self {
            Self::Html => "html",
            Self::Junit => "junit",
            Self::Json => "json",
            Self::Markdown => "markdown",
            Self::Sarif => "sarif",
            Self::Events => "events",
        }
    }
}

/// One `--report KIND=PATH`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ReportSpec {
    /// What to write.
    pub kind: ReportKind,
    /// Where to write it.
    pub path: PathBuf,
}

impl FromStr for ReportSpec {
    type Err = String;

    fn from_str(s: &str) -> Result<Self, String> {
        let kinds = || {
            ReportKind::ALL
                .iter()
                .chain(&[ReportKind::Events])
                .map(|k| k.name())
                .collect::<Vec<_>>()
                .join(", ")
        };
        let (kind, path) = s.split_once('=').ok_or_else(|| {
            format!(
                "expected KIND=PATH (kinds: {}), e.g. html=out/report.html",
                kinds()
            )
        })?;
        let kind = match kind.trim().to_ascii_lowercase().as_str() {
            "html" => ReportKind::Html,
            "junit" | "xml" => ReportKind::Junit,
            "json" => ReportKind::Json,
            "markdown" | "md" => ReportKind::Markdown,
            "sarif" => ReportKind::Sarif,
            "events" | "jsonl" => ReportKind::Events,
            other => {
                return Err(format!(
                    "unknown report kind {other:?} (kinds: {})",
                    kinds()
                ));
            }
        };
        if path.trim().is_empty() {
            return Err(format!("{}=: the path is empty", kind.name()));
        }
        Ok(ReportSpec {
            kind,
            path: PathBuf::from(path),
        })
    }
}

/// A report that could not be rendered or written.
#[derive(Debug, thiserror::Error)]
pub enum ReportError {
    /// A report could not be rendered.
    #[error("rendering the {kind} report: {message}")]
    Render {
        /// The report kind.
        kind: &'static str,
        /// What went wrong.
        message: String,
    },
    /// A report file could not be written.
    #[error("writing {path}: {source}")]
    Write {
        /// The file.
        path: String,
        /// The I/O error.
        #[source]
        source: std::io::Error,
    },
}

/// Renders one kind of report.
pub fn render(kind: ReportKind, input: &Input<'_>) -> Result<String, ReportError> {
    let err = |message: String| ReportError::Render {
        kind: kind.name(),
        message,
    };
    match kind {
        ReportKind::Html => html::render(input).map_err(|e| err(format!("{e:#}"))),
        ReportKind::Junit => junit::render(input).map_err(|e| err(e.to_string())),
        ReportKind::Json => json::render(input).map_err(|e| err(e.to_string())),
        ReportKind::Markdown => Ok(markdown::render(input)),
        ReportKind::Sarif => sarif::render(input).map_err(|e| err(e.to_string())),
        ReportKind::Events => Err(err(
            "the events report is written while the run goes, not rendered after it".into(),
        )),
    }
}

/// Renders one kind of report of a whole run: every leg of its revision matrix. A run with
/// one leg renders as that leg does ([`render`]), except JSON, which always lists `legs`.
pub fn render_matrix(kind: ReportKind, m: &matrix::Matrix<'_>) -> Result<String, ReportError> {
    let err = |message: String| ReportError::Render {
        kind: kind.name(),
        message,
    };
    match kind {
        ReportKind::Html => html::render_matrix(m).map_err(|e| err(format!("{e:#}"))),
        ReportKind::Junit => junit::render_matrix(m).map_err(|e| err(e.to_string())),
        ReportKind::Json => matrix::json(m).map_err(|e| err(e.to_string())),
        ReportKind::Markdown => Ok(matrix::markdown(m)),
        ReportKind::Sarif => matrix::sarif(m).map_err(|e| err(e.to_string())),
        ReportKind::Events => Err(err(
            "the events report is written while the run goes, not rendered after it".into(),
        )),
    }
}

/// Renders and writes every requested report of a run, creating parent directories.
pub fn write_all(
    specs: &[ReportSpec],
    m: &matrix::Matrix<'_>,
    secrets: &[String],
) -> Result<(), ReportError> {
    let clean = secrets.iter().all(|s| s.is_empty());
    for spec in specs.iter().filter(|s| !s.kind.is_streamed()) {
        if clean && spec.kind == ReportKind::Json {
            write_json(&spec.path, m)?;
            continue;
        }
        let text = crate::transport::http::redact_owned(render_matrix(spec.kind, m)?, secrets);
        write_file(&spec.path, &text)?;
    }
    Ok(())
}

/// The JSON report of `m` written to `path` as it is serialized (nothing to redact).
pub fn write_json(path: &Path, m: &matrix::Matrix<'_>) -> Result<(), ReportError> {
    let werr = |source| ReportError::Write {
        path: path.display().to_string(),
        source,
    };
    if let Some(dir) = path.parent().filter(|d| !d.as_os_str().is_empty()) {
        std::fs::create_dir_all(dir).map_err(werr)?;
    }
    let mut file = std::io::BufWriter::new(std::fs::File::create(path).map_err(werr)?);
    matrix::write_json(m, &mut file).map_err(|e| match e.io_error_kind() {
        Some(kind) => werr(std::io::Error::new(kind, e)),
        None => ReportError::Render {
            kind: ReportKind::Json.name(),
            message: e.to_string(),
        },
    })?;
    std::io::Write::flush(&mut file).map_err(werr)
}

fn write_file(path: &Path, text: &str) -> Result<(), ReportError> {
    let werr = |source| ReportError::Write {
        path: path.display().to_string(),
        source,
    };
    if let Some(dir) = path.parent().filter(|d| !d.as_os_str().is_empty()) {
        std::fs::create_dir_all(dir).map_err(werr)?;
    }
    std::fs::write(path, text).map_err(werr)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn report_specs_parse_kind_and_path() {
        let s: ReportSpec = "html=out/r.html".parse().unwrap();
        assert_eq!(s.kind, ReportKind::Html);
        assert_eq!(s.path, PathBuf::from("out/r.html"));
        let s: ReportSpec = "JUnit=a=b.xml".parse().unwrap();
        assert_eq!(
            (s.kind, s.path),
            (ReportKind::Junit, PathBuf::from("a=b.xml"))
        );
        assert!(
            "pdf=x"
                .parse::<ReportSpec>()
                .unwrap_err()
                .contains("unknown report kind")
        );
        assert!(
            "out.html"
                .parse::<ReportSpec>()
                .unwrap_err()
                .contains("KIND=PATH")
        );
        assert!("json=".parse::<ReportSpec>().is_err());
        let s: ReportSpec = "jsonl=ci/events.jsonl".parse().unwrap();
        assert!(s.kind.is_streamed() && s.kind.name() == "events");
    }
}

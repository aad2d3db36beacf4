//! The revision matrix: a run is one leg per revision it checks (`--protocol-version
//! 2025-11-25,2026-07-28`, `all`, or the default `eras`), each leg the sweep and the suite
//! at that revision. Every file report shows each leg and a verdict over all of them.
//!
//! A leg the server does not speak is kept as such, with what the server said, so a run
//! never passes silently over a revision it could not check.

use std::fmt::Write;

use serde::Serialize;
use serde_json::{Value, json};

use super::Input;
use crate::outcome::{REPORT_FORMAT_VERSION, Role, RunVerdict};
use crate::protocol::Revision;

/// One leg of a run, as the reporters see it.
#[derive(Clone, Copy, Debug)]
pub enum Leg<'a> {
    /// The sweep and the suite ran at this revision.
    Ran(Input<'a>),
    /// The server does not speak the revision; the text says how that showed.
    NotSpoken {
        /// The revision asked for.
        revision: Revision,
        /// What the server said (e.g. the version it negotiated instead).
        reason: &'a str,
    },
}

impl Leg<'_> {
    /// The revision this leg checks (the requested one).
    pub fn revision(&self) -> Revision {
        match self {
            Leg::Ran(input) => input.run.requested_revision,
            Leg::NotSpoken { revision, .. } => *revision,
        }
    }
}

/// Every leg of a run, in revision order.
#[derive(Clone, Debug)]
pub struct Matrix<'a> {
    /// The legs, oldest revision first.
    pub legs: Vec<Leg<'a>>,
}

impl<'a> Matrix<'a> {
    /// The legs that ran.
    pub fn ran(&self) -> impl Iterator<Item = &Input<'a>> {
        self.legs.iter().filter_map(|l| match l {
            Leg::Ran(input) => Some(input),
            Leg::NotSpoken { .. } => None,
        })
    }

    /// The one leg of a run that has exactly one, which reports render as before the matrix.
    pub fn single(&self) -> Option<&Input<'a>> {
        match self.legs.as_slice() {
            [Leg::Ran(input)] => Some(input),
            _ => None,
        }
    }

    /// Whether any leg hit a harness problem (exit 2).
    pub fn has_errors(&self) -> bool {
        self.ran().any(|i| i.run.has_errors())
    }

    /// Whether the run passes: some leg ran and every leg that ran passes (after its
    /// baseline). Legs the server does not speak fail nothing, but a run that checked no
    /// revision at all does not pass.
    pub fn passes(&self) -> bool {
        self.ran().count() > 0 && self.ran().all(|i| i.passes())
    }

    /// The run's verdict over every leg.
    pub fn verdict(&self) -> RunVerdict {
        if self.passes() {
            RunVerdict::Pass
        } else {
            RunVerdict::Fail
        }
    }

    /// Whether times print as placeholders.
    pub fn deterministic(&self) -> bool {
        self.ran().any(|i| i.deterministic)
    }

    /// One row per leg: what ran and how it ended.
    pub fn rows(&self) -> Vec<LegRow> {
        self.legs.iter().map(LegRow::of).collect()
    }
}

/// A leg summed up for the matrix table of every report.
#[derive(Clone, Debug, Serialize)]
pub struct LegRow {
    /// The revision checked.
    pub revision: Revision,
    /// `pass`, `fail`, `error` or `not_spoken`.
    pub status: &'static str,
    /// Scenarios that ran to a verdict (pass, fail or warn) at this revision.
    pub executed: usize,
    /// Scenarios by verdict.
    pub pass: usize,
    /// Failed scenarios (blocked ones included).
    pub fail: usize,
    /// Scenarios with warnings only.
    pub warn: usize,
    /// Skipped scenarios.
    pub skip: usize,
    /// The sweep's failure-level findings.
    pub sweep_failures: usize,
    /// Why the leg did not run.
    pub reason: Option<String>,
    /// A differential leg: the full leg's revision it was compared with.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub differential_from: Option<Revision>,
}

impl LegRow {
    /// The revision as a matrix row names it: a differential leg says so.
    pub fn label(&self) -> String {
        match self.differential_from {
            Some(base) => format!("{} (differential from {base})", self.revision),
            None => self.revision.to_string(),
        }
    }
}

impl LegRow {
    fn of(leg: &Leg<'_>) -> Self {
        match leg {
            Leg::Ran(input) => {
                let t = input.run.tally;
                LegRow {
                    revision: input.run.requested_revision,
                    status: if input.run.has_errors() {
                        "error"
                    } else if input.passes() {
                        "pass"
                    } else {
                        "fail"
                    },
                    executed: t.executed(),
                    pass: t.pass,
                    fail: t.fail + t.blocked,
                    warn: t.warn,
                    skip: t.skip,
                    sweep_failures: input.run.sweep.counts.failures,
                    reason: None,
                    differential_from: input.run.differential_from,
                }
            }
            Leg::NotSpoken { revision, reason } => LegRow {
                revision: *revision,
                status: "not_spoken",
                executed: 0,
                pass: 0,
                fail: 0,
                warn: 0,
                skip: 0,
                sweep_failures: 0,
                reason: Some((*reason).to_owned()),
                differential_from: None,
            },
        }
    }
}

/// The JSON report: the verdict over every leg, and each leg as a single-revision report.
pub fn json(m: &Matrix<'_>) -> Result<String, serde_json::Error> {
    let mut out = Vec::new();
    write_json(m, &mut out)?;
    Ok(String::from_utf8(out).expect("serde_json writes UTF-8"))
}

/// [`json()`] written straight to `w`, never whole in memory (a run's report with its
/// transcripts is megabytes; `--format json -o FILE` without secrets to redact).
pub fn write_json(m: &Matrix<'_>, w: impl std::io::Write) -> Result<(), serde_json::Error> {
    /// A leg: the run's report, or why the revision was not spoken.
    #[derive(Serialize)]
    #[serde(untagged)]
    enum LegJson<'a> {
        Ran(super::json::LegObject<'a>),
        NotSpoken {
            requested_revision: Revision,
            not_spoken: &'a str,
        },
    }
    #[derive(Serialize)]
    struct Report<'a> {
        format_version: u32,
        mcpcheck_version: &'static str,
        #[serde(skip_serializing_if = "Role::is_server")]
        role: Role,
        server: Option<&'a str>,
        verdict: RunVerdict,
        exit_code: u8,
        deterministic: bool,
        revisions: Vec<LegRow>,
        legs: Vec<LegJson<'a>>,
    }
    let legs = m
        .legs
        .iter()
        .map(|leg| match leg {
            Leg::Ran(input) => LegJson::Ran(super::json::LegObject::of(input)),
            Leg::NotSpoken { revision, reason } => LegJson::NotSpoken {
                requested_revision: *revision,
                not_spoken: reason,
            },
        })
        .collect();
    serde_json::to_writer_pretty(
        w,
        &Report {
            format_version: REPORT_FORMAT_VERSION,
            mcpcheck_version: env!("CARGO_PKG_VERSION"),
            role: m.ran().next().map(|i| i.run.role).unwrap_or_default(),
            server: m.ran().next().map(|i| i.run.server.as_str()),
            verdict: m.verdict(),
            exit_code: exit_code(m),
            deterministic: m.deterministic(),
            revisions: m.rows(),
            legs,
        },
    )
}

/// The exit code the run ends with: 2 for a harness error, 1 when it does not pass.
pub fn exit_code(m: &Matrix<'_>) -> u8 {
    if m.has_errors() {
        2
    } else if m.passes() {
        0
    } else {
        1
    }
}

/// The Markdown report: the verdict and a table of legs, then a section per leg.
pub fn markdown(m: &Matrix<'_>) -> String {
    if let Some(one) = m.single() {
        return super::markdown::render(one);
    }
    let mut out = String::new();
    let w = &mut out;
    let verdict = match exit_code(m) {
        0 => "✅ PASS",
        2 => "⚠️ ERROR",
        _ => "❌ FAIL",
    };
    let _ = writeln!(w, "# mcpcheck revision matrix: {verdict}\n");
    let _ = writeln!(w, "{}", markdown_table(&m.rows()));
    for leg in &m.legs {
        match leg {
            Leg::Ran(input) => {
                let body = super::markdown::render(input);
                // Each leg's own heading names its revision, one level down.
                let body = body.replacen("## mcpcheck: ", "", 1);
                let _ = writeln!(w, "## {}: {body}", input.run.requested_revision);
            }
            Leg::NotSpoken { revision, reason } => {
                let _ = writeln!(
                    w,
                    "## {revision}: not spoken\n\n{}\n",
                    super::markdown::escape(reason)
                );
            }
        }
    }
    out
}

fn markdown_table(rows: &[LegRow]) -> String {
    let mut out = String::from(
        "| revision | leg | scenarios executed | pass | fail | warn | skip | sweep failures |\n\
         |---|---|---:|---:|---:|---:|---:|---:|\n",
    );
    for r in rows {
        let _ = writeln!(
            out,
            "| {} | {} | {} | {} | {} | {} | {} | {} |",
            r.label(),
            r.status.replace('_', " "),
            r.executed,
            r.pass,
            r.fail,
            r.warn,
            r.skip,
            r.sweep_failures
        );
    }
    out
}

/// The terminal's closing lines: one per leg, then the verdict over all of them.
pub fn terminal_lines(m: &Matrix<'_>) -> String {
    let mut out = String::from("\nrevision matrix:\n");
    for r in m.rows() {
        let detail = match &r.reason {
            Some(reason) => format!("not spoken: {reason}"),
            None => format!(
                "{}: {} scenarios executed ({} pass, {} fail, {} warn, {} skip), {} sweep failures",
                r.status.to_uppercase(),
                r.executed,
                r.pass,
                r.fail,
                r.warn,
                r.skip,
                r.sweep_failures
            ),
        };
        let _ = writeln!(out, "  {}  {detail}", r.label());
    }
    let verdict = match exit_code(m) {
        0 => "PASS",
        2 => "ERROR",
        _ if m.ran().count() == 0 => "FAIL (the server speaks none of the revisions asked for)",
        _ => "FAIL",
    };
    let _ = writeln!(out, "overall: {verdict} over {} legs", m.legs.len());
    out
}

/// SARIF: one run per leg that ran (each with its own `automationDetails.id`).
pub fn sarif(m: &Matrix<'_>) -> Result<String, serde_json::Error> {
    let mut log: Option<Value> = None;
    for input in m.ran() {
        let one: Value = serde_json::from_str(&super::sarif::render(input)?)?;
        match &mut log {
            None => log = Some(one),
            Some(all) => {
                if let (Some(runs), Some(more)) =
                    (all["runs"].as_array_mut(), one["runs"].as_array())
                {
                    runs.extend(more.iter().cloned());
                }
            }
        }
    }
    let log = log.unwrap_or_else(|| {
        json!({
            "$schema": "https://json.schemastore.org/sarif-2.1.0.json",
            "version": "2.1.0",
            "runs": [],
        })
    });
    serde_json::to_string_pretty(&log)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::outcome::{RunReport, ScenarioOutcome, Verdict};

    fn input(run: &RunReport) -> Input<'_> {
        Input {
            run,
            baseline: None,
            deterministic: true,
        }
    }

    #[test]
    fn the_exit_code_covers_every_leg() {
        let pass = RunReport::empty("srv", Revision::V2025_11_25);
        let mut fail = RunReport::empty("srv", Revision::V2026_07_28);
        let failing = ScenarioOutcome::not_run("tools/x", "x", "", vec![], Verdict::Fail, "test");
        fail.add_scenarios(vec![failing], 1);
        let both = Matrix {
            legs: vec![Leg::Ran(input(&pass)), Leg::Ran(input(&fail))],
        };
        assert_eq!(exit_code(&both), 1);
        assert_eq!(both.rows()[1].status, "fail");
        assert!(terminal_lines(&both).contains("overall: FAIL over 2 legs"));
        // A revision not spoken fails nothing; a run where no leg ran does not pass.
        let spoken_one = Matrix {
            legs: vec![
                Leg::NotSpoken {
                    revision: Revision::V2024_11_05,
                    reason: "negotiated 2025-11-25",
                },
                Leg::Ran(input(&pass)),
            ],
        };
        assert_eq!(exit_code(&spoken_one), 0);
        assert_eq!(spoken_one.rows()[0].status, "not_spoken");
        let none = Matrix {
            legs: vec![Leg::NotSpoken {
                revision: Revision::V2026_07_28,
                reason: "server/discover: no answer",
            }],
        };
        assert_eq!(exit_code(&none), 1);
        assert!(terminal_lines(&none).contains("speaks none of the revisions"));
        let md = markdown(&none);
        assert!(md.contains("## 2026-07-28: not spoken"), "{md}");
    }
}

//! After a run: make it deterministic if asked, compare it with the baseline, write the
//! report files, and decide the exit status.

use crate::cli::args::ReportArgs;
use crate::outcome::RunReport;
use crate::report::baseline::{Baseline, BaselineError, Comparison};
use crate::report::deterministic::{self, Scrubber};
use crate::report::{self, Input, ReportError};

/// Why finishing a run (baseline, reports) failed: exit 2.
#[derive(Debug, thiserror::Error)]
pub enum FinishError {
    /// Reading or writing the expected-failures file failed.
    #[error(transparent)]
    Baseline(#[from] BaselineError),
    /// Writing a report failed.
    #[error(transparent)]
    Report(#[from] ReportError),
}

/// The run after the baseline, ready to print.
#[derive(Debug)]
pub struct Finished {
    /// The run's report.
    pub report: RunReport,
    /// The comparison with `--expected-failures`, when given.
    pub baseline: Option<Comparison>,
    /// Whether `--deterministic` was given (no times or run-to-run noise).
    pub deterministic: bool,
    /// A line per baseline fact worth printing (`--update-baseline` wrote N entries, stale ids).
    pub notes: Vec<String>,
}

impl Finished {
    /// What the reporters render from.
    pub fn input(&self) -> Input<'_> {
        Input {
            run: &self.report,
            baseline: self.baseline.as_ref(),
            deterministic: self.deterministic,
        }
    }
}

/// Applies `--deterministic`, `--expected-failures` / `--update-baseline` and `--report`;
/// every report file's text passes through `redact` (secrets such as a bearer token).
pub fn finish(
    mut report: RunReport,
    args: &ReportArgs,
    schema_dir: Option<&std::path::Path>,
    redact: &dyn Fn(&str) -> String,
) -> Result<Finished, FinishError> {
    report.set_fail_on(args.fail_on);
    if args.deterministic {
        deterministic::apply(&mut report, &Scrubber::for_this_process(schema_dir));
    }
    let mut notes = Vec::new();
    let baseline = match &args.expected_failures {
        None => None,
        Some(path) => {
            let base = if args.update_baseline && !path.exists() {
                Baseline::default()
            } else {
                Baseline::load(path)?
            };
            let base = if args.update_baseline {
                let new = base.updated(&report);
                new.save(path)?;
                notes.push(format!(
                    "baseline: wrote {} entries to {}",
                    new.entries.len(),
                    path.display()
                ));
                new
            } else {
                base
            };
            let c = base.compare(&report);
            notes.push(format!(
                "baseline: {} expected, {} unexpected, {} stale, {} unverified",
                c.expected.len(),
                c.unexpected.len(),
                c.stale.len(),
                c.unverified.len()
            ));
            for f in &c.unexpected {
                notes.push(format!("  unexpected failure {}: {}", f.id, f.what));
            }
            for e in &c.stale {
                notes.push(format!(
                    "  stale entry {} (it no longer fails; remove it or run --update-baseline)",
                    e.id
                ));
            }
            Some(c)
        }
    };
    let done = Finished {
        report,
        baseline,
        deterministic: args.deterministic,
        notes,
    };
    report::write_all(&args.reports, &done.input(), redact)?;
    Ok(done)
}

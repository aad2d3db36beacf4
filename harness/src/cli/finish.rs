//! After a run: make each leg deterministic if asked, compare it with the baseline, write
//! the report files of the whole revision matrix.

use crate::cli::args::ReportArgs;
use crate::outcome::RunReport;
use crate::protocol::Revision;
use crate::report::baseline::{self, Baseline, BaselineError};
use crate::report::deterministic::{self, Scrubber};
use crate::report::expected::Comparison;
use crate::report::matrix::{Leg, Matrix};
use crate::report::{self, Input, ReportError};
use crate::runner::matrix::{LegEnd, NotSpoken};

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

/// One leg after the baseline, ready to print.
#[derive(Debug)]
pub struct Finished {
    /// The leg's report.
    pub report: RunReport,
    /// The comparison with `--expected-failures`, when given.
    pub baseline: Option<Comparison>,
    /// Whether `--deterministic` was given (no times or run-to-run noise).
    pub deterministic: bool,
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

/// The whole run after the baseline: every leg, and the notes worth printing.
#[derive(Debug)]
pub struct Done {
    /// The legs in revision order; `Err` holds a leg not spoken (revision, reason).
    pub legs: Vec<Result<Finished, (Revision, String)>>,
    /// A line per baseline fact worth printing (`--update-baseline` wrote N entries, stale ids).
    pub notes: Vec<String>,
}

impl Done {
    /// The revision matrix the reporters render from.
    pub fn matrix(&self) -> Matrix<'_> {
        Matrix {
            legs: self
                .legs
                .iter()
                .map(|l| match l {
                    Ok(f) => Leg::Ran(f.input()),
                    Err((revision, reason)) => Leg::NotSpoken {
                        revision: *revision,
                        reason,
                    },
                })
                .collect(),
        }
    }
}

/// Applies `--deterministic`, `--expected-failures` / `--update-baseline` (per leg) and
/// `--report`; every report file is cleaned of `secrets` (such as a bearer token).
pub fn finish(
    legs: Vec<LegEnd>,
    args: &ReportArgs,
    schema_dir: Option<&std::path::Path>,
    secrets: &[String],
) -> Result<Done, FinishError> {
    let multi = legs.len() > 1;
    // Each leg: `None` for one that ran (its report in `ran`), else why it did not.
    let mut shape = Vec::new();
    let mut ran = Vec::new();
    for leg in legs {
        match leg {
            LegEnd::Ran(report) => {
                let mut report = *report;
                report.set_fail_on(args.fail_on);
                if args.deterministic {
                    deterministic::apply(&mut report, &Scrubber::for_this_process(schema_dir));
                }
                ran.push(report);
                shape.push(None);
            }
            LegEnd::NotSpoken(NotSpoken { revision, reason }) => {
                shape.push(Some((revision, reason)))
            }
        }
    }
    let mut notes = Vec::new();
    let comparisons = match &args.expected_failures {
        None => vec![None; ran.len()],
        Some(path) => {
            let base = if args.update_baseline && !path.exists() {
                Baseline::default()
            } else {
                Baseline::load(path)?
            };
            let reports: Vec<&RunReport> = ran.iter().collect();
            let base = if args.update_baseline {
                let new = baseline::update_legs(&base, &reports);
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
            let all = baseline::compare_legs(&base, &reports);
            for (c, r) in all.iter().zip(&reports) {
                let leg = if multi {
                    format!(" ({})", r.requested_revision)
                } else {
                    String::new()
                };
                notes.extend(baseline_notes(c, &leg));
            }
            all.into_iter().map(Some).collect()
        }
    };
    let mut ran = ran.into_iter().zip(comparisons);
    let legs = shape
        .into_iter()
        .map(|not_spoken| match not_spoken {
            Some(why) => Err(why),
            None => {
                let (report, baseline) = ran.next().expect("one report per leg that ran");
                Ok(Finished {
                    report,
                    baseline,
                    deterministic: args.deterministic,
                })
            }
        })
        .collect();
    let done = Done { legs, notes };
    report::write_all(&args.reports, &done.matrix(), secrets)?;
    Ok(done)
}

/// What a leg's comparison with the baseline prints.
fn baseline_notes(c: &Comparison, leg: &str) -> Vec<String> {
    let mut notes = vec![format!(
        "baseline{leg}: {} expected, {} unexpected, {} stale, {} unverified",
        c.expected.len(),
        c.unexpected.len(),
        c.stale.len(),
        c.unverified.len()
    )];
    for f in &c.unexpected {
        notes.push(format!("  unexpected failure {}: {}", f.id, f.what));
    }
    for e in &c.stale {
        notes.push(format!(
            "  stale entry {} (it no longer fails; remove it or run --update-baseline)",
            e.id
        ));
    }
    notes
}

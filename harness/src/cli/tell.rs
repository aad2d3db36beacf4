//! The end of `mcpcheck run`, once every leg is finished against the baseline: each leg's
//! `run_finished`, what follows the legs on the terminal, the `--output` file, and the exit
//! code over every leg.

use std::process::ExitCode;

use anyhow::Context;

use super::finish::{Done, Finished};
use super::flags::Format;
use super::plan::{RunPlan, Secrets};
use super::{EXIT_ERROR, EXIT_FINDINGS};
use crate::outcome::RunVerdict;
use crate::outcome::events::{Emitter, Event};
use crate::report::human;
use crate::report::matrix::{self, Matrix};

/// Tells the finished run: each leg's verdict (counting the baseline) to its sinks, what
/// follows the legs to the terminal, the `--output` file, and the exit code.
pub fn tell(plan: &RunPlan, done: &Done, emitters: &[Emitter]) -> anyhow::Result<ExitCode> {
    let ran: Vec<&Finished> = done.legs.iter().filter_map(|l| l.as_ref().ok()).collect();
    for (finished, events) in ran.iter().zip(emitters) {
        let report = &finished.report;
        events.emit(Event::RunFinished {
            verdict: if finished.input().passes() {
                RunVerdict::Pass
            } else {
                RunVerdict::Fail
            },
            tally: report.tally,
            duration_ms: report.duration_ms,
        });
    }
    for j in &plan.sinks.jsonl {
        j.finish()?;
    }
    let matrix = done.matrix();
    let mut after = String::new();
    for f in &ran {
        if let Some(c) = &f.report.snapshot {
            after.push_str(&human::snapshot(c, true, "snapshot "));
        }
    }
    for note in &done.notes {
        after.push_str(note);
        after.push('\n');
    }
    let multi = plan.matrix.is_multi();
    if multi {
        after.push_str(&matrix::terminal_lines(&matrix));
    }
    // The terminal printed each leg's sweep, scenarios and verdict as they ended.
    plan.sinks.terminal.print(&after);
    let output = Output {
        ran: &ran,
        after: &after,
        matrix: &matrix,
        multi,
    };
    output.write(plan, plan.secrets.clone())?;
    Ok(match matrix::exit_code(&matrix) {
        0 => ExitCode::SUCCESS,
        2 => ExitCode::from(EXIT_ERROR),
        _ => ExitCode::from(EXIT_FINDINGS),
    })
}

/// What `--output` (or stdout, for `--format json`) is written from.
struct Output<'a> {
    ran: &'a [&'a Finished],
    /// What the terminal printed after the legs.
    after: &'a str,
    matrix: &'a Matrix<'a>,
    multi: bool,
}

impl Output<'_> {
    /// The whole summary in suite order, for `--format human`, or the matrix as JSON;
    /// cleaned of `secrets` either way.
    fn write(&self, plan: &RunPlan, secrets: Secrets) -> anyhow::Result<()> {
        let clean = secrets.iter().all(|s| s.is_empty());
        let redact = move |text: String| crate::transport::http::redact_owned(text, &secrets);
        let human = || {
            let mut text = String::new();
            for f in self.ran {
                if self.multi {
                    text.push_str(&format!("== {} ==\n", f.report.requested_revision));
                }
                text.push_str(&human::render(&f.report));
            }
            redact(format!("{text}{}", self.after))
        };
        // anstream strips the colors for NO_COLOR, a non-terminal stdout, or a file.
        let json = || {
            crate::report::render_matrix(crate::report::ReportKind::Json, self.matrix).map(&redact)
        };
        match (plan.reports.format, &plan.reports.output) {
            (Format::Human, None) => {}
            (Format::Human, Some(path)) => std::fs::write(path, human())
                .with_context(|| format!("writing {}", path.display()))?,
            (Format::Json, None) => super::out(&format!("{}\n", json()?)),
            // Written as it is serialized when there is nothing to redact.
            (Format::Json, Some(path)) if clean => crate::report::write_json(path, self.matrix)?,
            (Format::Json, Some(path)) => std::fs::write(path, json()?)
                .with_context(|| format!("writing {}", path.display()))?,
        }
        Ok(())
    }
}

//! The live terminal reporter: an [`EventSink`] that prints the run as it goes.
//!
//! The sweep's summary when it ends, then one block per scenario as it finishes (its
//! verdict, each finding with the offending frame and the spec section), a progress bar on
//! a terminal, and with `--verbose` every step and frame as it happens, each tagged with
//! its scenario (with `--jobs N` they interleave). `--quiet` prints only failures. The
//! verdict line comes last, from the final report (see `human::footer`).
//!
//! Colors are ANSI codes written through `anstream`, which strips them for `NO_COLOR`, a
//! non-terminal stdout, or a file.

use std::io::Write;
use std::sync::Mutex;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};

use super::human::{self, Detail};
use crate::outcome::events::{Event, EventSink, StepEnd};
use crate::outcome::{RunReport, Verdict};
use crate::runner::matrix::{MatrixLeg, Narration, NotSpoken, Scope};

/// Rewrites every printed line: redacts secrets, and applies `--deterministic`.
pub type Filter = Box<dyn Fn(&str) -> String + Send + Sync>;

/// The terminal reporter: a progress bar and a block per finished scenario.
pub struct Terminal {
    detail: Detail,
    /// Whether to print at all (not when stdout carries `--format json`): the bar still runs.
    print: bool,
    bar: Option<indicatif::ProgressBar>,
    filter: Filter,
    /// Scenarios planned (from `run_started`).
    planned: AtomicUsize,
    /// Whether anything was printed yet (a first block needs no blank line before it).
    printed: AtomicBool,
    /// One writer at a time, so the blocks of concurrent scenarios never interleave.
    out: Mutex<()>,
}

impl std::fmt::Debug for Terminal {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Terminal")
            .field("detail", &self.detail)
            .field("print", &self.print)
            .finish()
    }
}

impl Terminal {
    /// A reporter printing at `detail`, with a progress `bar` if any, every line through `filter`.
    pub fn new(
        detail: Detail,
        print: bool,
        bar: Option<indicatif::ProgressBar>,
        filter: Filter,
    ) -> Self {
        Terminal {
            detail,
            print,
            bar,
            filter,
            planned: AtomicUsize::new(0),
            printed: AtomicBool::new(false),
            out: Mutex::new(()),
        }
    }

    /// Prints `text` (colored verdict words) to stdout, above the progress bar.
    pub fn print(&self, text: &str) {
        if !self.print || text.is_empty() {
            return;
        }
        let _guard = self.out.lock().unwrap_or_else(|e| e.into_inner());
        let text = if self.printed.swap(true, Ordering::Relaxed) {
            text
        } else {
            text.trim_start_matches('\n')
        };
        let text = human::paint_lines(&(self.filter)(text));
        let write = || {
            let mut out = anstream::stdout().lock();
            // A closed stdout (`| head`) is not worth failing the run for.
            let _ = out.write_all(text.as_bytes());
            let _ = out.flush();
        };
        match &self.bar {
            Some(bar) => bar.suspend(write),
            None => write(),
        }
    }

    fn verbose(&self) -> bool {
        self.detail == Detail::Verbose
    }
}

/// A run of several legs: a heading opens each, and its verdict line closes it.
impl Narration for Terminal {
    fn leg_opens(&self, index: usize, leg: &MatrixLeg) {
        let gap = if index > 0 { "\n" } else { "" };
        self.print(&match leg {
            MatrixLeg::NotSpoken(NotSpoken { revision, reason }) => {
                format!("{gap}== {revision}: not spoken: {reason}\n")
            }
            MatrixLeg::Run(settings) => match settings.scope {
                Scope::Full => format!("{gap}== {} ==\n", settings.probe.session.revision),
                Scope::Differential { base } => format!(
                    "{gap}== {} (differential: what is judged differently than at {base}) ==\n",
                    settings.probe.session.revision
                ),
            },
        });
    }

    fn leg_told(&self, report: &RunReport) {
        self.print(&human::footer(report));
    }
}

impl EventSink for Terminal {
    fn event(&self, event: &Event) {
        match event {
            Event::RunStarted { planned, .. } => {
                self.planned.store(*planned, Ordering::Relaxed);
                if let Some(bar) = &self.bar {
                    bar.set_length(*planned as u64);
                }
            }
            Event::SweepFinished { report, .. } => {
                let planned = self.planned.load(Ordering::Relaxed);
                let text = if self.detail == Detail::Quiet {
                    human::header_failures(report)
                } else if planned > 0 {
                    format!("{}\nscenarios ({planned}):\n", human::header(report))
                } else {
                    human::header(report)
                };
                self.print(&text);
            }
            Event::ScenarioStarted { scenario, .. } => {
                if let Some(bar) = &self.bar {
                    bar.set_message(scenario.clone());
                }
            }
            Event::StepStarted {
                scenario,
                line,
                depth,
                action,
                ..
            } if self.verbose() => {
                let indent = "  ".repeat(*depth);
                self.print(&format!(
                    "    [{scenario}] {indent}▸ {action} (line {line})\n"
                ));
            }
            Event::StepFinished {
                scenario, status, ..
            } if self.verbose() && *status != StepEnd::Passed => {
                let what = match status {
                    StepEnd::Passed => "passed".to_owned(),
                    StepEnd::Failed => "failed".to_owned(),
                    StepEnd::Warned => "warned".to_owned(),
                    StepEnd::Skipped { reason } => format!("skipped: {reason}"),
                    StepEnd::Error { reason } => format!("error: {reason}"),
                };
                self.print(&format!("    [{scenario}]   step {what}\n"));
            }
            Event::FrameSent {
                scenario,
                index,
                text,
                ..
            }
            | Event::FrameReceived {
                scenario,
                index,
                text,
                ..
            }
            | Event::Connection {
                scenario,
                index,
                text,
                ..
            } if self.verbose() => {
                let arrow = match event {
                    Event::FrameSent { .. } => "→",
                    Event::FrameReceived { .. } => "←",
                    _ => "•",
                };
                self.print(&format!(
                    "    [{scenario}]   #{index} {arrow} {}\n",
                    crate::protocol::text::quote(text, 400)
                ));
            }
            Event::ScenarioFinished { outcome, .. } => {
                if let Some(bar) = &self.bar {
                    bar.inc(1);
                }
                let failed = matches!(
                    outcome.verdict,
                    Verdict::Fail | Verdict::Error { .. } | Verdict::Blocked { .. }
                );
                if self.detail != Detail::Quiet || failed {
                    self.print(&human::scenario(outcome));
                }
            }
            Event::RunFinished { .. } => {
                if let Some(bar) = &self.bar {
                    bar.finish_and_clear();
                }
            }
            _ => {}
        }
    }
}

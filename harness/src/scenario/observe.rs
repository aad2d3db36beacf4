//! What a running scenario tells whoever watches it, as it happens: steps started and
//! ended, frames, findings. The executor calls an [`Observer`]; the runner's events are one.
//!
//! The trait keeps the layers in order: the scenario layer defines what it reports and the
//! runner, above it, implements that, so the executor never imports the runner.

use serde::Serialize;

use crate::check::Finding;
use crate::session::Entry;

/// Watches one or more scenario runs. Called from the scenario tasks as things happen, so
/// it must be quick and must not block on anything but its own output.
pub trait Observer: Send + Sync {
    /// Whether anything listens; when not, the executor prepares no reports at all.
    fn listening(&self) -> bool {
        true
    }

    /// A step of `scenario` is about to run.
    fn step_started(&self, scenario: &str, step: StepStart);

    /// A step of `scenario` ended (after the findings it raised were reported).
    fn step_finished(&self, scenario: &str, step: usize, line: usize, end: StepEnd);

    /// The session of `scenario` recorded transcript entry `index`.
    fn frame(&self, scenario: &str, index: usize, entry: &Entry);

    /// A broken rule seen while `scenario` ran.
    fn finding(&self, scenario: &str, owner: Attribution, finding: &Finding);
}

/// Watches nothing: [`Observer::listening`] is false, so nothing is even prepared.
#[derive(Clone, Copy, Debug, Default)]
pub struct Unobserved;

impl Observer for Unobserved {
    fn listening(&self) -> bool {
        false
    }
    fn step_started(&self, _: &str, _: StepStart) {}
    fn step_finished(&self, _: &str, _: usize, _: usize, _: StepEnd) {}
    fn frame(&self, _: &str, _: usize, _: &Entry) {}
    fn finding(&self, _: &str, _: Attribution, _: &Finding) {}
}

/// A step about to run.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct StepStart {
    /// Position among the scenario's executed steps, from 0 (a `for_each` body counts
    /// once per iteration).
    pub step: usize,
    /// The step's line in its scenario file.
    pub line: usize,
    /// How many `for_each` bodies it is inside.
    pub depth: usize,
    /// What it does, in a few words (`request tools/list`).
    pub action: String,
}

/// How a step ended.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
#[serde(tag = "status", rename_all = "snake_case")]
pub enum StepEnd {
    /// It ran and raised nothing.
    Passed,
    /// It raised a MUST-level finding, or stopped the scenario because the server failed.
    Failed,
    /// It raised only SHOULD-level findings.
    Warned,
    /// It did not run (a tool the policy forbids, a capability not declared), and why.
    Skipped {
        /// Why it did not run.
        reason: String,
    },
    /// A scenario-file or harness problem stopped it.
    Error {
        /// The problem.
        reason: String,
    },
}

/// Whom a finding seen during a scenario counts against.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Attribution {
    /// The scenario's own rule or expectation: it decides the scenario's verdict.
    Scenario,
    /// Another rule, seen on the way: it counts for the run, not for this scenario.
    Protocol,
}

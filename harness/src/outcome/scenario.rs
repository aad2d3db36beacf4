//! The verdict on one scenario, its outcome, and how many scenarios ended each way.

use serde::Serialize;

use super::{Entry, Finding};
use crate::transport::StderrExcerpt;

/// The verdict on one scenario.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
#[serde(tag = "verdict", rename_all = "snake_case")]
pub enum Verdict {
    Pass,
    /// A MUST-level expectation broke.
    Fail,
    /// Only SHOULD-level expectations broke.
    Warn,
    /// Not run, and why.
    Skip {
        reason: String,
    },
    /// A harness or setup problem, not the server's fault.
    Error {
        reason: String,
    },
}

/// The outcome of one scenario.
#[derive(Clone, Debug, Serialize)]
pub struct ScenarioOutcome {
    pub id: String,
    pub title: String,
    pub spec: String,
    #[serde(flatten)]
    pub verdict: Verdict,
    /// Broken expectations, and session findings of the scenario's own rule.
    pub findings: Vec<Finding>,
    /// Session findings of other rules: they count for the run, not for this scenario.
    pub protocol: Vec<Finding>,
    /// Checks that could not run (no schema), never counted as passed.
    pub unchecked: Vec<String>,
    /// Steps skipped (a tool the policy forbids), with why.
    pub skipped_steps: Vec<String>,
    pub duration_ms: u64,
    pub transcript: Vec<Entry>,
    /// The server's stderr during this scenario (stdio only).
    pub stderr: StderrExcerpt,
}

/// How many scenarios ended each way.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize)]
pub struct Tally {
    pub pass: usize,
    pub fail: usize,
    pub warn: usize,
    pub skip: usize,
    pub error: usize,
}

impl Tally {
    pub fn of(outcomes: &[ScenarioOutcome]) -> Self {
        let mut t = Tally::default();
        for o in outcomes {
            match o.verdict {
                Verdict::Pass => t.pass += 1,
                Verdict::Fail => t.fail += 1,
                Verdict::Warn => t.warn += 1,
                Verdict::Skip { .. } => t.skip += 1,
                Verdict::Error { .. } => t.error += 1,
            }
        }
        t
    }
}

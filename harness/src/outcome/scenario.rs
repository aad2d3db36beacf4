//! The verdict on one scenario, its outcome, and how many scenarios ended each way.

use serde::Serialize;

use super::{Entry, Finding, Forbidden, Severity};
use crate::transport::StderrExcerpt;

/// The verdict on one scenario.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
#[serde(tag = "verdict", rename_all = "snake_case")]
pub enum Verdict {
    /// Every expectation held.
    Pass,
    /// A MUST-level expectation broke.
    Fail,
    /// Only SHOULD-level expectations broke.
    Warn,
    /// Not run, and why.
    Skip {
        /// Why (a revision, a transport, an undeclared capability, nothing to check).
        reason: String,
    },
    /// A harness or setup problem, not the server's fault.
    Error {
        /// What went wrong.
        reason: String,
    },
    /// Not run because the server already failed in a way this scenario could only run
    /// into again (no handshake, no answers, ...), or the run's deadline passed. Counted
    /// with the failures, never as a pass.
    Blocked {
        /// The finding (or deadline) that blocked it.
        reason: String,
    },
}

impl Verdict {
    /// What a scenario's own findings make of it: `Fail` when one breaks a MUST, `Warn`
    /// when one breaks a SHOULD, `None` when none breaks anything (an `Info` is no verdict).
    pub fn from_findings(findings: &[Finding]) -> Option<Verdict> {
        match findings.iter().map(|f| f.severity).max() {
            Some(Severity::Failure) => Some(Verdict::Fail),
            Some(Severity::Warning) => Some(Verdict::Warn),
            Some(Severity::Info) | None => None,
        }
    }

    /// Why it was skipped, errored or blocked.
    pub fn reason(&self) -> Option<&str> {
        match self {
            Verdict::Skip { reason } | Verdict::Error { reason } | Verdict::Blocked { reason } => {
                Some(reason)
            }
            Verdict::Pass | Verdict::Fail | Verdict::Warn => None,
        }
    }
}

/// The outcome of one scenario.
#[derive(Clone, Debug, Serialize)]
pub struct ScenarioOutcome {
    /// The scenario's id, e.g. `tools/call-unknown`.
    pub id: String,
    /// The scenario's title.
    pub title: String,
    /// The spec section it checks.
    pub spec: String,
    /// Ids of the official suite's scenarios (`@modelcontextprotocol/conformance`) this one
    /// stands for, so a maintainer finds them and an official baseline can name them.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub official: Vec<String>,
    /// The verdict (flattened into the serialized outcome).
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
    /// Why each `tools/call` the tool policy skipped was forbidden (one per call), for
    /// the summary's count and the flag that enables them.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub policy_skips: Vec<Forbidden>,
    /// `tools/call`s of official fixture tools not annotated `readOnlyHint`, made because
    /// the user took the server for the official fixture (`--profile official-fixture`).
    #[serde(skip_serializing_if = "is_zero", default)]
    pub fixture_calls: u32,
    /// Wall time of the scenario, in milliseconds.
    pub duration_ms: u64,
    /// Everything sent and received, and the connection's events, in order.
    pub transcript: Vec<Entry>,
    /// The server's stderr during this scenario (stdio only).
    pub stderr: StderrExcerpt,
}

impl ScenarioOutcome {
    /// The outcome of a scenario that did not run: its `verdict` (a skip, an error, a block)
    /// and nothing else, no findings, no transcript, no time; no stderr was kept, for
    /// `stderr_reason`.
    pub fn not_run(
        id: impl Into<String>,
        title: impl Into<String>,
        spec: impl Into<String>,
        official: Vec<String>,
        verdict: Verdict,
        stderr_reason: impl Into<String>,
    ) -> Self {
        ScenarioOutcome {
            id: id.into(),
            title: title.into(),
            spec: spec.into(),
            official,
            verdict,
            findings: vec![],
            protocol: vec![],
            unchecked: vec![],
            skipped_steps: vec![],
            policy_skips: vec![],
            fixture_calls: 0,
            duration_ms: 0,
            transcript: vec![],
            stderr: StderrExcerpt::NotCaptured {
                reason: stderr_reason.into(),
            },
        }
    }
}

/// How many scenarios ended each way.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize)]
pub struct Tally {
    /// Scenarios that passed.
    pub pass: usize,
    /// Scenarios that failed.
    pub fail: usize,
    /// Scenarios with only warnings.
    pub warn: usize,
    /// Scenarios skipped.
    pub skip: usize,
    /// Scenarios ended by a harness or setup error.
    pub error: usize,
    /// Scenarios blocked by an earlier failure or the deadline (they count as failures).
    pub blocked: usize,
}

impl Tally {
    /// Counts `outcomes` by verdict.
    pub fn of(outcomes: &[ScenarioOutcome]) -> Self {
        let mut t = Tally::default();
        for o in outcomes {
            t.add(&o.verdict);
        }
        t
    }

    /// Scenarios that ran to a verdict of the server (pass, fail or warn): the count the
    /// revision matrix compares across revisions.
    pub fn executed(&self) -> usize {
        self.pass + self.fail + self.warn
    }

    /// Counts one more scenario that ended with `verdict`.
    pub fn add(&mut self, verdict: &Verdict) {
        let slot = match verdict {
            Verdict::Pass => &mut self.pass,
            Verdict::Fail => &mut self.fail,
            Verdict::Warn => &mut self.warn,
            Verdict::Skip { .. } => &mut self.skip,
            Verdict::Error { .. } => &mut self.error,
            Verdict::Blocked { .. } => &mut self.blocked,
        };
        *slot += 1;
    }
}

fn is_zero(n: &u32) -> bool {
    *n == 0
}

#[cfg(test)]
mod tests {
    use super::*;

    fn at(severity: Severity) -> Finding {
        Finding::custom("rule", severity, "spec", "what")
    }

    #[test]
    fn the_worst_finding_decides_and_info_decides_nothing() {
        use Severity::*;
        assert_eq!(Verdict::from_findings(&[]), None);
        assert_eq!(Verdict::from_findings(&[at(Info)]), None);
        assert_eq!(
            Verdict::from_findings(&[at(Info), at(Warning)]),
            Some(Verdict::Warn)
        );
        assert_eq!(
            Verdict::from_findings(&[at(Warning), at(Failure), at(Info)]),
            Some(Verdict::Fail)
        );
    }
}

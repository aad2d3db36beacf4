//! Runs checks against a server and gathers the outcome.
//!
//! A run is the protocol sweep ([`probe`]: handshake, ping, and the list methods of every
//! declared capability) and then the scenario suite ([`suite`]); both emit [`events`] as
//! they go, and the final [`RunReport`] is what the file reporters render.

pub mod auto;
pub mod events;
pub mod partition;
pub mod probe;
pub mod suite;

use serde::Serialize;

use crate::check::{Finding, Severity};
use crate::protocol::Revision;
use crate::session::{Entry, SchemaStatus, ServerProfile};
use crate::transport::ShutdownReport;

/// What happened to one step of a run.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
#[serde(tag = "status", rename_all = "snake_case")]
pub enum StepStatus {
    Passed,
    /// The step broke rules (its findings say which).
    Failed,
    /// The step did not run, and why.
    Skipped {
        reason: String,
    },
}

#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct StepRecord {
    pub name: String,
    #[serde(flatten)]
    pub status: StepStatus,
}

/// Overall verdict of a run, mapped to the exit code by the CLI.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Verdict {
    /// No failure-level findings.
    Pass,
    /// At least one MUST-level rule broken.
    Fail,
}

/// The complete outcome of `mcpcheck run`, as written to the JSON report.
#[derive(Clone, Debug, Serialize)]
pub struct RunReport {
    /// Version of this report format.
    pub format_version: u32,
    pub mcpcheck_version: &'static str,
    pub server: String,
    pub requested_revision: Revision,
    /// The revision the session ran in after negotiation.
    pub revision: Revision,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub profile: Option<ServerProfile>,
    pub verdict: Verdict,
    pub counts: Counts,
    pub steps: Vec<StepRecord>,
    pub findings: Vec<Finding>,
    pub schema: SchemaStatus,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub shutdown: Option<ShutdownReport>,
    pub stderr: StderrSummary,
    pub duration_ms: u64,
    pub transcript: Vec<Entry>,
    /// The scenario suite's outcomes, each from its own server process.
    pub scenarios: Vec<crate::scenario::exec::ScenarioOutcome>,
    pub tally: suite::Tally,
    /// `--snapshot-dir`: the server's snapshot compared with the accepted one.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub snapshot: Option<crate::snapshot::Comparison>,
}

impl RunReport {
    /// Folds the scenario outcomes into the report and its verdict.
    pub fn add_scenarios(
        &mut self,
        outcomes: Vec<crate::scenario::exec::ScenarioOutcome>,
        took_ms: u64,
    ) {
        self.duration_ms += took_ms;
        self.tally = suite::Tally::of(&outcomes);
        let protocol_failure = outcomes
            .iter()
            .flat_map(|o| &o.protocol)
            .any(|f| f.severity == Severity::Failure);
        if self.tally.fail > 0 || protocol_failure {
            self.verdict = Verdict::Fail;
        }
        self.scenarios = outcomes;
    }

    /// Folds a snapshot comparison into the report: an unaccepted change fails the run.
    pub fn add_snapshot(&mut self, comparison: crate::snapshot::Comparison) {
        if comparison.has_changes() {
            self.verdict = Verdict::Fail;
        }
        self.snapshot = Some(comparison);
    }

    /// Whether a scenario hit a harness or scenario-file problem (exit 2).
    pub fn has_errors(&self) -> bool {
        self.tally.error > 0
    }
}

#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize)]
pub struct Counts {
    pub failures: usize,
    pub warnings: usize,
    pub infos: usize,
}

impl Counts {
    pub fn of(findings: &[Finding]) -> Self {
        let n = |s| findings.iter().filter(|f| f.severity == s).count();
        Counts {
            failures: n(Severity::Failure),
            warnings: n(Severity::Warning),
            infos: n(Severity::Info),
        }
    }
}

#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize)]
pub struct StderrSummary {
    pub bytes: u64,
    pub tail: Vec<String>,
}

pub const REPORT_FORMAT_VERSION: u32 = 1;

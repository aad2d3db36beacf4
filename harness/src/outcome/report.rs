//! The complete outcome of `mcpcheck run`: what the file reporters render.

use serde::Serialize;

use super::{
    Entry, Finding, ScenarioOutcome, SchemaStatus, ServerProfile, Severity, SnapshotComparison,
    Tally, Verdict,
};
use crate::protocol::Revision;
use crate::transport::ShutdownReport;

/// What happened to one step of a run.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
#[serde(tag = "status", rename_all = "snake_case")]
pub enum StepStatus {
    /// It ran and broke no rule.
    Passed,
    /// The step broke rules (its findings say which).
    Failed,
    /// The step did not run, and why.
    Skipped {
        /// Why it did not run.
        reason: String,
    },
}

/// One step of the protocol sweep (`initialize`, `ping`, `tools/list`, ...) and how it ended.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct StepRecord {
    /// The step, as the method it exercises.
    pub name: String,
    /// How it ended.
    #[serde(flatten)]
    pub status: StepStatus,
}

/// Overall verdict of a run, mapped to the exit code by the CLI.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum RunVerdict {
    /// No failure-level findings.
    Pass,
    /// At least one MUST-level rule broken.
    Fail,
}

/// The least severity that fails a run (`--fail-on`): MUST-level findings always do;
/// `warning` makes SHOULD-level ones fail it too, for CI that holds a server to both.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum FailOn {
    /// Only MUST-level findings (and failing scenarios) fail the run.
    #[default]
    Failure,
    /// SHOULD-level findings (and warning scenarios) fail it too.
    Warning,
}

impl FailOn {
    /// The least severity that counts as a failure.
    pub fn threshold(self) -> Severity {
        match self {
            FailOn::Failure => Severity::Failure,
            FailOn::Warning => Severity::Warning,
        }
    }

    /// Whether a scenario with `verdict` fails the run.
    pub fn fails(self, verdict: &Verdict) -> bool {
        match verdict {
            Verdict::Fail | Verdict::Blocked { .. } => true,
            Verdict::Warn => self == FailOn::Warning,
            _ => false,
        }
    }
}

/// What the protocol sweep found: its steps and findings, whether its messages were
/// schema-checked, and what its server process left.
#[derive(Clone, Debug, Serialize)]
pub struct SweepRecord {
    /// The sweep's findings by severity.
    pub counts: Counts,
    /// The sweep's steps.
    pub steps: Vec<StepRecord>,
    /// The sweep's findings (a scenario's are in its outcome).
    pub findings: Vec<Finding>,
    /// Whether the sweep's messages were schema-checked.
    pub schema: SchemaStatus,
    /// How the sweep's server process ended (stdio).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub shutdown: Option<ShutdownReport>,
    /// The sweep server's stderr.
    pub stderr: StderrSummary,
}

/// Which side of MCP a run tested.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Role {
    /// `mcpcheck run`: a server.
    #[default]
    Server,
    /// `mcpcheck client`: a client, against mcpcheck's mock servers.
    Client,
}

impl Role {
    /// Whether this is a server run (the JSON leaves `role` out then).
    pub fn is_server(&self) -> bool {
        *self == Role::Server
    }
}

/// The complete outcome of `mcpcheck run`, as written to the JSON report.
#[derive(Clone, Debug, Serialize)]
pub struct RunReport {
    /// Version of this report format.
    pub format_version: u32,
    /// The mcpcheck that wrote the report.
    pub mcpcheck_version: &'static str,
    /// What was tested: a server (left out of the JSON) or a client.
    #[serde(skip_serializing_if = "Role::is_server")]
    pub role: Role,
    /// The server (or, for a client run, the client) command line or URL (secrets redacted).
    pub server: String,
    /// The revision mcpcheck asked for.
    pub requested_revision: Revision,
    /// The revision the session ran in after negotiation.
    pub revision: Revision,
    /// What the server said about itself; none when the handshake failed.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub profile: Option<ServerProfile>,
    /// `--partition K/N` (as `K/N`): this report covers only that share of the scenarios.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub partition: Option<String>,
    /// A differential leg: only the scenarios judged differently here than at this
    /// revision (whose full leg ran the rest) were run.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub differential_from: Option<Revision>,
    /// Pass or fail, before the baseline is applied.
    pub verdict: RunVerdict,
    /// What fails the run (`--fail-on`).
    pub fail_on: FailOn,
    /// What the protocol sweep found (its fields sit at the top level of the JSON).
    #[serde(flatten)]
    pub sweep: SweepRecord,
    /// Wall time of the whole run.
    pub duration_ms: u64,
    /// The sweep's wire transcript.
    pub transcript: Vec<Entry>,
    /// The scenario suite's outcomes, each from its own server process.
    pub scenarios: Vec<ScenarioOutcome>,
    /// Scenarios by verdict.
    pub tally: Tally,
    /// `--snapshot-dir`: the server's snapshot compared with the accepted one.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub snapshot: Option<SnapshotComparison>,
}

impl RunReport {
    /// A report with nothing in it yet: no profile, no steps, no findings, passing.
    pub fn empty(server: impl Into<String>, revision: Revision) -> Self {
        RunReport {
            format_version: REPORT_FORMAT_VERSION,
            mcpcheck_version: env!("CARGO_PKG_VERSION"),
            role: Role::Server,
            server: server.into(),
            requested_revision: revision,
            revision,
            profile: None,
            partition: None,
            differential_from: None,
            verdict: RunVerdict::Pass,
            fail_on: FailOn::default(),
            sweep: SweepRecord {
                counts: Counts::default(),
                steps: Vec::new(),
                findings: Vec::new(),
                schema: SchemaStatus::Skipped {
                    reason: "nothing was checked yet".into(),
                },
                shutdown: None,
                stderr: StderrSummary::default(),
            },
            duration_ms: 0,
            transcript: Vec::new(),
            scenarios: Vec::new(),
            tally: Tally::default(),
            snapshot: None,
        }
    }

    /// Folds the scenario outcomes into the report and its verdict.
    pub fn add_scenarios(&mut self, outcomes: Vec<ScenarioOutcome>, took_ms: u64) {
        self.duration_ms += took_ms;
        self.tally = Tally::of(&outcomes);
        self.scenarios = outcomes;
        self.judge();
    }

    /// Sets what fails the run (`--fail-on`) and judges it again.
    pub fn set_fail_on(&mut self, fail_on: FailOn) {
        self.fail_on = fail_on;
        self.judge();
    }

    /// The verdict from the findings and scenarios, at the `fail_on` threshold. A changed
    /// snapshot, once failed, stays failed.
    fn judge(&mut self) {
        let threshold = self.fail_on.threshold();
        let finding_fails = self
            .sweep
            .findings
            .iter()
            .chain(self.scenarios.iter().flat_map(|o| &o.protocol))
            .any(|f| f.severity >= threshold);
        let scenario_fails = self
            .scenarios
            .iter()
            .any(|o| self.fail_on.fails(&o.verdict));
        let snapshot_changed = self
            .snapshot
            .as_ref()
            .is_some_and(SnapshotComparison::has_changes);
        self.verdict = if finding_fails || scenario_fails || snapshot_changed {
            RunVerdict::Fail
        } else {
            RunVerdict::Pass
        };
    }

    /// Folds a snapshot comparison into the report: an unaccepted change fails the run.
    pub fn add_snapshot(&mut self, comparison: SnapshotComparison) {
        if comparison.has_changes() {
            self.verdict = RunVerdict::Fail;
        }
        self.snapshot = Some(comparison);
    }

    /// Whether a scenario hit a harness or scenario-file problem (exit 2).
    pub fn has_errors(&self) -> bool {
        self.tally.error > 0
    }
}

/// Findings by severity.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize)]
pub struct Counts {
    /// MUST-level findings.
    pub failures: usize,
    /// SHOULD-level findings.
    pub warnings: usize,
    /// Notes that break no rule.
    pub infos: usize,
}

impl Counts {
    /// Counts `findings` by severity.
    pub fn of(findings: &[Finding]) -> Self {
        let n = |s| findings.iter().filter(|f| f.severity == s).count();
        Counts {
            failures: n(Severity::Failure),
            warnings: n(Severity::Warning),
            infos: n(Severity::Info),
        }
    }
}

/// What the server wrote on stderr: how much, and its last lines.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize)]
pub struct StderrSummary {
    /// Bytes written in all.
    pub bytes: u64,
    /// The last lines.
    pub tail: Vec<String>,
}

/// The version of the JSON report's format (`reports/results.schema.json`).
pub const REPORT_FORMAT_VERSION: u32 = 2;

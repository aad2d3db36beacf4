//! What a run found, as plain data: findings, verdicts, scenario outcomes, the run report,
//! and the [`events`] that tell them as they happen.
//!
//! Everything above the transport imports these types and nothing here imports upward, so
//! the runner, the reporters, the fuzzer and the CLI share one vocabulary without reaching
//! into each other. (The transport sits below: a transcript entry holds its HTTP records.)

pub mod events;
mod finding;
mod policy;
mod profile;
mod report;
mod scenario;
mod snapshot;
mod transcript;

pub use finding::{Cause, Finding, Rule, Severity};
pub use policy::{CallGrant, Forbidden, OFFICIAL_FIXTURE_TOOLS, ToolPolicy};
pub use profile::{SchemaStatus, ServerProfile};
pub use report::{
    Counts, FailOn, REPORT_FORMAT_VERSION, Role, RunReport, RunVerdict, StderrSummary, StepRecord,
    StepStatus, SweepRecord,
};
pub use scenario::{ScenarioOutcome, Tally, Verdict};
pub use snapshot::{AreaOutcome, SnapshotComparison, SnapshotStatus};
pub use transcript::{Direction, Entry};

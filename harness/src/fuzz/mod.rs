//! `mcpcheck fuzz`: structure-aware protocol fuzzing of a live server.
//!
//! Cases are generated from the negotiated revision's schema and what the server declares
//! ([`generate`], [`values`]), damaged by [`mutate`], cut into requests as the server will
//! cut them ([`wire`]), and sent over a [`crate::session::Session`] so every answer gets
//! the same checks as in a conformance run. The loop is in [`driver`]; `process` holds
//! the server under fuzz, `case` runs one case, [`oracle`] judges what happened, and
//! `record` counts findings by signature, minimizes each new one ([`minimize`]) and
//! writes it as a scenario file that `mcpcheck run` replays ([`repro`]).

mod case;
pub mod driver;
pub mod generate;
pub mod minimize;
pub mod mutate;
pub mod oracle;
mod process;
mod record;
pub mod repro;
pub mod values;
pub mod wire;

use std::collections::BTreeMap;
use std::path::PathBuf;
use std::time::Duration;

use serde::Serialize;

use crate::outcome::Finding;
use crate::outcome::ToolPolicy;
use crate::protocol::Revision;
use crate::session::SessionConfig;
use crate::transport::target::Target;
pub use driver::run;
pub use oracle::{Oracle, Signature};

/// The fuzzer's random number generator: seeded, portable, fast. Everything random in a
/// run is drawn from one of these, so a seed replays the same inputs.
pub type Rng = rand::rngs::Xoshiro256PlusPlus;

/// When the run stops: after a duration, a number of cases, or whichever comes first.
#[derive(Clone, Copy, Debug, Default)]
pub struct Limits {
    /// Stop after this much fuzzing time.
    pub duration: Option<Duration>,
    /// Stop after this many cases.
    pub iterations: Option<u64>,
}

/// Everything `mcpcheck fuzz` needs.
#[derive(Clone, Debug)]
pub struct FuzzConfig {
    /// A command spawned per "process", or an HTTP endpoint opened per session.
    pub target: Target,
    /// Revision, per-response timeout, start-up allowance.
    pub session: SessionConfig,
    /// When to stop.
    pub limits: Limits,
    /// Seed of the case generator: the same seed generates the same cases.
    pub seed: u64,
    /// Where reproducers go; none: they are not written.
    pub out_dir: Option<PathBuf>,
    /// Print the cases instead of sending them.
    pub dry_run: bool,
    /// Which tools `tools/call` cases may call.
    pub tools: ToolPolicy,
    /// Also call tools annotated `destructiveHint: true`.
    pub allow_destructive: bool,
    /// Resident memory growth (over the first sample after start-up) that is a finding.
    pub memory_limit_mib: u64,
    /// Wall time minimization may take per finding; zero turns minimization off.
    pub minimize_time: Duration,
    /// Cases per server process before a fresh one is started (bounds history and state).
    pub cases_per_process: u64,
}

/// One distinct defect found, with how often it was seen and its reproducer.
#[derive(Clone, Debug, Serialize)]
pub struct FuzzFinding {
    /// What makes this defect distinct from the others.
    pub signature: Signature,
    /// The first sighting, with its frame and spec section.
    pub finding: Finding,
    /// How many times the signature was seen.
    pub count: u64,
    /// Seconds into the run of the first sighting.
    pub first_seen_s: f64,
    /// The reproducer file written, if any.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub reproducer: Option<PathBuf>,
    /// Whether replaying the reproducer failed the same way (`None`: the oracle is not one
    /// a scenario can check, or reproducers were not written).
    pub reproduced: Option<bool>,
    /// Writes after the handshake: before and after minimization.
    pub writes_before: usize,
    /// Writes after the handshake after minimization.
    pub writes_after: usize,
    /// Replays minimization used.
    pub replays: usize,
    /// False when the input had bytes a scenario file cannot carry (invalid UTF-8),
    /// replaced by U+FFFD in the reproducer.
    pub faithful: bool,
    /// Why the reproducer could not be checked, when that is not the oracle's nature (an
    /// HTTP endpoint still down after the crash).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub note: Option<String>,
}

/// What a fuzzing run sent and started, counted.
#[derive(Clone, Debug, Default, Serialize)]
pub struct FuzzCounts {
    /// Cases run (sequences of 1 to 6 writes).
    pub cases: u64,
    /// Fuzz writes sent.
    pub messages: u64,
    /// Liveness probes and discovery requests sent besides.
    pub probes: u64,
    /// (messages + probes) per second of fuzzing (minimization excluded).
    pub messages_per_sec: f64,
    /// Server processes (or HTTP sessions) started.
    pub processes_started: u64,
    /// Writes skipped: they named a tool the policy forbids, or reused an id.
    pub skipped: u64,
    /// `tools/call`s that outlived the timeout while the server still answered `ping`:
    /// long-running tools are legitimate; they were cancelled, not reported.
    pub slow_tool_calls: u64,
    /// HTTP only: requests the server refused with an HTTP error status and no JSON-RPC
    /// response, which the spec allows for input it cannot accept (not findings).
    pub http_rejected: u64,
}

/// The outcome of a fuzzing run (`--format json` writes it).
#[derive(Clone, Debug, Serialize)]
pub struct FuzzReport {
    /// Version of this report's JSON shape.
    pub format_version: u32,
    /// The mcpcheck version that wrote it.
    pub mcpcheck_version: &'static str,
    /// The server command line or URL.
    pub server: String,
    /// `stdio`, `streamable-http` or `sse`.
    pub transport: &'static str,
    /// The generator's seed (rerun with it to generate the same cases).
    pub seed: u64,
    /// The revision fuzzed.
    pub revision: Revision,
    /// Wall time of the run, in milliseconds.
    pub duration_ms: u64,
    /// What was sent and started, counted (its fields sit at the JSON's top level).
    #[serde(flatten)]
    pub counts: FuzzCounts,
    /// Sends per method of the revision's table (zero: never sent).
    pub methods: BTreeMap<String, u64>,
    /// Calls per tool the policy allows.
    pub tools: BTreeMap<String, u64>,
    /// Distinct defects found, each once.
    pub findings: Vec<FuzzFinding>,
    /// Why the run ended before its limits (an HTTP endpoint that stopped answering).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub stopped: Option<String>,
}

impl FuzzReport {
    /// Whether any defect was found (exit 1).
    pub fn has_findings(&self) -> bool {
        !self.findings.is_empty()
    }
}

/// The current [`FuzzReport::format_version`].
pub const FUZZ_REPORT_FORMAT_VERSION: u32 = 1;

/// Why a run could not go on (never the server's fault alone: that is a finding).
#[derive(Debug, thiserror::Error)]
pub enum FuzzError {
    /// The revision's schema is missing, and cases are generated from it.
    #[error("no schema for {revision}, and the fuzzer generates from it: {reason}")]
    NoSchema {
        /// The revision asked for.
        revision: Revision,
        /// Why its schema is not there.
        reason: String,
    },
    /// The server could not be started.
    #[error("could not start the server: {0}")]
    Spawn(#[from] crate::transport::TransportError),
    /// The handshake failed, and why.
    #[error("the server did not complete the handshake, so there is nothing to fuzz: {0}")]
    Handshake(String),
    /// A reproducer file could not be written.
    #[error("writing a reproducer to {path}: {source}")]
    Write {
        /// The file.
        path: PathBuf,
        /// The I/O error.
        #[source]
        source: std::io::Error,
    },
}

//! A client session with one server: the `Session` type, its settings and what it leaves
//! behind. Every inbound frame passes its intake, so no path skips the checks.
//!
//! The work is split by responsibility: `correlate` (requests and responses by id),
//! `handshake`, `intake` (recording, checking), `framing` (stdio anomalies), `anomaly`
//! (HTTP stream anomalies), `raw` (raw writes), `server_requests`, `validate` (schemas),
//! `shutdown`, `error` (failed requests as findings), `kept` (findings, capped per rule),
//! `sent` (what the client asked so far), `watch` (scenarios waiting on the shutdown),
//! [`transcript`] (the wire record) and [`stateless`] (2026-07-28). The rules themselves
//! are pure functions in [`crate::check`].

mod anomaly;
mod barrier;
mod correlate;
mod error;
mod framing;
pub mod gate;
mod handshake;
mod intake;
mod kept;
pub mod mock;
mod pace;
mod raw;
mod raw_http;
mod requests;
#[cfg(test)]
mod scripted;
mod sent;
mod server_requests;
mod shutdown;
pub mod stateless;
pub mod transcript;
mod validate;
mod watch;
mod window;

use std::collections::VecDeque;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use serde_json::{Value, json};

use crate::check::progress::ProgressHistory;
use crate::outcome::{Direction, Finding, SchemaStatus, ServerProfile};
use crate::protocol::{ErrorObject, Message, Outcome, RequestId, Revision};
use crate::schema::SchemaStore;
use crate::transport::{ExitInfo, ShutdownReport, Transport};
pub use error::SessionError;
pub use gate::{Refused, ToolGate};
pub use pace::Pace;
pub use raw::{RawRequest, raw_requests};
pub use raw_http::{RawHttp, RawHttpError};
pub use server_requests::input_response;
pub use transcript::Transcript;
pub use watch::{Late, ShutdownWatch};

/// How long to wait for the rest of stdout after the process exits, before judging.
const EXIT_GRACE: Duration = Duration::from_millis(500);

/// Settings for one session.
#[derive(Clone, Debug)]
pub struct SessionConfig {
    /// The revision to request (and speak until the server answers otherwise).
    pub revision: Revision,
    /// How long to wait for each response.
    pub timeout: Duration,
    /// How long to wait for the `initialize` response, which includes the server's start-up.
    pub startup_timeout: Duration,
    /// `capabilities` sent in `initialize`. Empty by default: the server then must not
    /// send roots, sampling or elicitation requests.
    pub client_capabilities: Value,
    /// What the user allowed to be called: every `tools/call` the session writes passes
    /// its [`ToolGate`] first.
    pub calls: crate::outcome::CallGrant,
    /// The run's answer times, shared by its sessions: once the server has lost an answer,
    /// waits for the next ones are bounded by how fast it answers.
    pub pace: Pace,
}

impl Default for SessionConfig {
    fn default() -> Self {
        SessionConfig {
            revision: Revision::DEFAULT,
            timeout: Duration::from_secs(10),
            startup_timeout: Duration::from_secs(30),
            client_capabilities: json!({}),
            calls: crate::outcome::CallGrant::default(),
            pace: Pace::default(),
        }
    }
}

/// A response the server gave to one of our requests.
#[derive(Clone, Debug, PartialEq)]
pub struct Reply {
    /// Transcript index of the response frame.
    pub frame: Option<usize>,
    /// The result or error the server gave.
    pub outcome: Outcome,
    /// The response was not valid JSON-RPC (already reported) and was read leniently;
    /// checks of its details would only repeat that finding.
    pub salvaged: bool,
}

impl Reply {
    /// The result, unless the server answered with an error.
    pub fn result(&self) -> Option<&Value> {
        match &self.outcome {
            Outcome::Result(r) => Some(r),
            Outcome::Error(_) => None,
        }
    }

    /// The error, unless the server answered with a result.
    pub fn error(&self) -> Option<&ErrorObject> {
        match &self.outcome {
            Outcome::Error(e) => Some(e),
            Outcome::Result(_) => None,
        }
    }
}

/// Overrides of the handshake, for negotiation tests.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Handshake {
    /// The version to request instead of the session's revision (may be one that does not exist).
    pub protocol_version: Option<String>,
    /// Client capabilities instead of the session's.
    pub capabilities: Option<Value>,
    /// Leave out `notifications/initialized`.
    pub skip_initialized: bool,
}

/// However much progress a request reports, it gets at most this many timeouts in all.
const MAX_TIMEOUT_EXTENSIONS: u32 = 30;

/// A message the server sent on its own (notification or request), kept for scenarios.
#[derive(Clone, Debug, PartialEq)]
pub struct Unsolicited {
    /// Transcript index of its frame.
    pub frame: Option<usize>,
    /// The message.
    pub message: Message,
}

/// Everything a finished session leaves behind.
#[derive(Debug)]
pub struct SessionRecord {
    /// Everything sent and received.
    pub transcript: Transcript,
    /// What the server did wrong, in the order seen.
    pub findings: Vec<Finding>,
    /// Whether schema checks ran.
    pub schema: SchemaStatus,
    /// How the server went away (none if the session never got that far).
    pub shutdown: Option<ShutdownReport>,
    /// Bytes the server wrote to stderr (stdio only).
    pub stderr_bytes: u64,
    /// Its last stderr lines.
    pub stderr_tail: Vec<String>,
}

/// Messages the server sent on its own kept for scenarios to look at.
const MAX_UNSOLICITED: usize = 10_000;

/// The most server request ids a session keeps; past them (a flood), the server's
/// cancellations are no longer judged.
const SERVER_REQUESTS_KEPT: usize = 4096;

/// A client session with one server over one transport: every request sent, every
/// frame received and checked, every finding, until [`Session::finish`].
pub struct Session {
    transport: Box<dyn Transport>,
    /// Decides every `tools/call` before it leaves; shared with raw HTTP exchanges.
    gate: Arc<Mutex<ToolGate>>,
    /// Schema validation: the store, and what it checked or could not.
    schema: validate::SchemaRecord,
    config: SessionConfig,
    /// The revision spoken now: requested until the server answers `initialize`.
    revision: Revision,
    transcript: Transcript,
    /// The findings so far, capped per rule.
    findings: kept::Kept,
    /// Every request sent, by id: allocation, the awaited, the answered, the given up.
    requests: requests::RequestBook,
    /// The last `progress` value seen per progress token.
    progress: ProgressHistory,
    /// The unterminated end of the raw bytes sent so far: a request split across writes
    /// (the fuzzer's split frames) is read when its line is complete, as the server reads it.
    raw_partial_line: Vec<u8>,
    unsolicited: VecDeque<Unsolicited>,
    /// What the messages sent so far asked of the server.
    sent: sent::Sent,
    /// The ids of the requests the server sent, up to [`SERVER_REQUESTS_KEPT`]: a
    /// cancellation it sends must name one of them.
    server_requests: Vec<RequestId>,
    /// What the server process has shown of its state: up, output closed, exited.
    peer: PeerState,
    profile: Option<ServerProfile>,
    /// The session's default handshake (`initialize`, or `server/discover` at
    /// 2026-07-28), once done: what the scenarios that share the session see of it.
    opening: Option<handshake::OpeningReply>,
    /// Scenarios that handed the session back and wait for what its shutdown shows of
    /// their rule (`watch::ShutdownWatch`), and where the shutdown began.
    watchers: watch::Watchers,
}

impl std::fmt::Debug for Session {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Session")
            .field("server", &self.transport.describe())
            .field("revision", &self.revision)
            .finish()
    }
}

/// What a session has seen of the server's state. Each only ever turns on: a server that
/// answered stays up, a closed output stays closed, an exit is final.
#[derive(Debug, Default)]
struct PeerState {
    /// A reply has been waited for (the start-up allowance is spent).
    up: bool,
    /// The server's output ended: it can send nothing more.
    stdout_closed: bool,
    /// How the server process ended, once it has.
    exit: Option<ExitInfo>,
}

impl PeerState {
    /// Neither its output closed nor the process ended.
    fn alive(&self) -> bool {
        !self.stdout_closed && self.exit.is_none()
    }
}

impl Session {
    /// A session over `transport`, checking against `schemas`; times count from `started`.
    pub fn new(
        transport: Box<dyn Transport>,
        schemas: Arc<SchemaStore>,
        config: SessionConfig,
        started: Instant,
    ) -> Self {
        Session {
            transport,
            gate: Arc::new(Mutex::new(ToolGate::new(config.calls.clone()))),
            schema: validate::SchemaRecord::new(schemas),
            revision: config.revision,
            config,
            transcript: Transcript::new(started),
            findings: kept::Kept::default(),
            requests: requests::RequestBook::default(),
            progress: ProgressHistory::default(),
            raw_partial_line: Vec::new(),
            unsolicited: VecDeque::new(),
            sent: sent::Sent::default(),
            server_requests: Vec::new(),
            peer: PeerState::default(),
            profile: None,
            opening: None,
            watchers: watch::Watchers::default(),
        }
    }

    /// Takes the timeouts of `config` (a probe opened the session with its own short ones,
    /// and it goes on as a leg's sweep).
    pub fn set_waits(&mut self, config: &SessionConfig) {
        self.config.timeout = config.timeout;
        self.config.startup_timeout = config.startup_timeout;
    }

    /// The revision spoken now (the requested one until the server answers otherwise).
    pub fn revision(&self) -> Revision {
        self.revision
    }

    /// True once the server can send nothing more (its output closed).
    pub fn is_closed(&self) -> bool {
        self.peer.stdout_closed
    }

    /// What the server said about itself, once the handshake (or discover) is done.
    pub fn profile(&self) -> Option<&ServerProfile> {
        self.profile.as_ref()
    }

    /// The answer to the session's default handshake, once done (its frame left out).
    pub fn handshake_reply(&self) -> Option<&Reply> {
        self.opening.as_ref().map(|o| &o.reply)
    }

    /// The findings so far.
    pub fn findings(&self) -> &[Finding] {
        &self.findings
    }

    /// The transcript so far.
    pub fn transcript(&self) -> &Transcript {
        &self.transcript
    }

    /// Tells `events` every transcript entry recorded from now on, as a frame of `scenario`.
    pub fn tell_transcript(&mut self, events: crate::outcome::events::Emitter, scenario: String) {
        self.transcript.tell(events, scenario);
    }

    /// A handle on the server's stderr record (stdio only); it outlives the session.
    pub fn stderr_log(&self) -> Option<crate::transport::StderrLog> {
        self.transport.stderr().cloned()
    }

    /// The server in a few words (its command line, or its URL).
    pub fn describe_server(&self) -> String {
        self.transport.describe()
    }

    /// The HTTP connection, for raw exchanges (HTTP transports only): every body sent
    /// through it passes the session's tool-call gate.
    pub fn http(&self) -> Option<RawHttp> {
        Some(RawHttp::new(self.transport.http()?, self.gate.clone()))
    }

    /// Lets `bytes` leave if the tool-call gate allows every `tools/call` in them.
    fn admit(&self, bytes: &[u8]) -> Result<(), SessionError> {
        gate::lock(&self.gate)
            .admit(bytes)
            .map_err(SessionError::Refused)
    }

    /// Tells the tool-call gate the server's whole tool list, read on an earlier session
    /// of the same server (the fuzzer lists tools once, then opens many sessions).
    pub fn know_tools(&mut self, tools: &[Value]) {
        let listing = json!({ "tools": tools });
        gate::lock(&self.gate).learn(&gate::ListPage::First, &listing);
    }

    /// Whether the tool-call gate would let `bytes` leave (nothing counted), for a caller
    /// that registers what it sends before sending it (the fuzzer).
    pub fn check_calls(&self, bytes: &[u8]) -> Result<(), Refused> {
        gate::lock(&self.gate).judge(bytes).map(drop)
    }

    /// Calls the gate let through only because the user took the server for the
    /// official conformance fixture (`--profile official-fixture`), so far.
    pub fn fixture_calls(&self) -> u32 {
        gate::lock(&self.gate).fixture_calls()
    }

    /// Records bytes sent outside the transport (a scenario's raw exchange).
    pub fn record_sent(&mut self, text: String) -> Option<usize> {
        self.transcript.push(Direction::Sent, text)
    }

    /// Records an HTTP exchange made outside the transport (a scenario's raw exchange).
    pub fn record_http(&mut self, record: crate::transport::http::HttpRecord) -> Option<usize> {
        self.transcript.push_http(record)
    }

    /// Records what a scenario step measured, as an event in the transcript.
    pub fn record_event(&mut self, text: String) -> Option<usize> {
        self.transcript.push(Direction::Event, text)
    }

    /// The server process's resident memory in KiB, when mcpcheck started it (stdio) and
    /// the system tells (Linux `/proc`).
    pub fn server_rss_kib(&self) -> Option<u64> {
        crate::transport::rss_kib(self.transport.pid()?)
    }

    /// Records a finding raised outside the session (by a runner check).
    pub fn add_finding(&mut self, finding: Finding) {
        self.keep_finding(finding);
    }

    /// Keeps a finding (up to the cap of its rule), and the frame it points at.
    fn keep_finding(&mut self, finding: Finding) {
        let frame = finding.frame;
        if self.findings.keep(finding)
            && let Some(frame) = frame
        {
            self.transcript.pin(frame);
        }
    }

    /// Keeps a message the server sent on its own for the scenario's next look, dropping
    /// the oldest past [`MAX_UNSOLICITED`] (a flood of notifications is not kept whole).
    fn keep_unsolicited(&mut self, message: Unsolicited) {
        if self.unsolicited.len() >= MAX_UNSOLICITED {
            self.unsolicited.pop_front();
        }
        self.unsolicited.push_back(message);
    }

    /// Messages the server sent on its own, oldest first.
    pub fn take_unsolicited(&mut self) -> Vec<Unsolicited> {
        self.unsolicited.drain(..).collect()
    }

    /// The schema of the revision spoken now, if one is at hand.
    pub fn schema(&self) -> Arc<Result<crate::schema::SchemaSet, String>> {
        self.schema.get(self.revision)
    }

    /// The client's request to close stdin early (a scenario testing exit behaviour).
    pub async fn close_input(&mut self) {
        self.watchers.input_closed(self.findings.len());
        self.transport.close_input().await;
    }

    /// Stderr lines for crash evidence: from a panic or traceback if there is one.
    pub fn stderr_tail(&self, n: usize) -> Vec<String> {
        self.transport
            .stderr()
            .map(|s| s.crash_excerpt(n))
            .unwrap_or_default()
    }

    /// The slowest line the server wrote, if the transport times lines (stdio).
    pub fn slowest_line(&self) -> Option<crate::transport::SlowLine> {
        self.transport.slowest_line()
    }

    /// The server's stderr record, if it is a process mcpcheck started.
    pub fn stderr(&self) -> Option<&crate::transport::StderrLog> {
        self.transport.stderr()
    }

    /// Records a finding, pinned to transcript entry `frame` when there is one.
    fn push_at(&mut self, finding: Finding, frame: Option<usize>) {
        self.keep_finding(match frame {
            Some(i) => finding.at_frame(i),
            None => finding,
        });
    }

    /// Records what a check found (none, one or several), pinned to `frame`.
    fn push_all(&mut self, findings: impl IntoIterator<Item = Finding>, frame: Option<usize>) {
        for finding in findings {
            self.push_at(finding, frame);
        }
    }
}

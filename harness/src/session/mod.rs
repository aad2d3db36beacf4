//! A client session with one server: sends requests, correlates responses by id, answers
//! the server's own requests, and checks every inbound frame as it arrives.
//!
//! Checking happens here, at the single point every frame passes, so no path through the
//! harness can receive a message without validating it.

pub mod stateless;
pub mod transcript;

use std::collections::{HashMap, HashSet, VecDeque};
use std::sync::Arc;
use std::time::{Duration, Instant};

use serde_json::{Value, json};

use crate::check::{Finding, Severity, rules};
use crate::protocol::{
    Classified, ErrorObject, InvalidReason, Message, Outcome, RequestId, Response, Revision,
    classify, codes, notification_json, request_json, response_json,
};
use crate::schema::{SchemaStore, Target};
use crate::transport::{
    ExitInfo, FramingIssue, Inbound, RawFrame, ShutdownReport, ShutdownStage, Transport,
    TransportError,
};
pub use transcript::{Direction, Entry, Transcript};

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
}

impl Default for SessionConfig {
    fn default() -> Self {
        SessionConfig {
            revision: Revision::LATEST_HANDSHAKE,
            timeout: Duration::from_secs(10),
            startup_timeout: Duration::from_secs(30),
            client_capabilities: json!({}),
        }
    }
}

/// A response the server gave to one of our requests.
#[derive(Clone, Debug, PartialEq)]
pub struct Reply {
    /// Transcript index of the response frame.
    pub frame: Option<usize>,
    pub outcome: Outcome,
    /// The response was not valid JSON-RPC (already reported) and was read leniently;
    /// checks of its details would only repeat that finding.
    pub salvaged: bool,
}

impl Reply {
    pub fn result(&self) -> Option<&Value> {
        match &self.outcome {
            Outcome::Result(r) => Some(r),
            Outcome::Error(_) => None,
        }
    }

    pub fn error(&self) -> Option<&ErrorObject> {
        match &self.outcome {
            Outcome::Error(e) => Some(e),
            Outcome::Result(_) => None,
        }
    }
}

/// Why a request got no reply.
#[derive(Debug, thiserror::Error)]
pub enum SessionError {
    #[error("`{method}` got no response within {after:?}")]
    Timeout { method: String, after: Duration },
    #[error("the server ended ({}) before answering `{method}`", exit.as_ref().map(|e| e.to_string()).unwrap_or_else(|| "closed its output".into()))]
    Closed {
        method: String,
        exit: Option<ExitInfo>,
    },
    #[error("could not send `{method}`: {source}")]
    Send {
        method: String,
        #[source]
        source: TransportError,
    },
}

/// What the server said about itself in `initialize`.
#[derive(Clone, Debug, Default, PartialEq, serde::Serialize)]
pub struct ServerProfile {
    /// The version string the server answered with, verbatim.
    pub protocol_version: Option<String>,
    pub capabilities: Value,
    pub server_info: Value,
    pub instructions: Option<String>,
    /// 2026-07-28: the `supportedVersions` of `server/discover` (empty for handshake revisions).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub supported_versions: Vec<String>,
}

impl ServerProfile {
    /// Whether the server declared a capability (`tools`, `resources`, ...).
    pub fn declares(&self, capability: &str) -> bool {
        self.capabilities
            .get(capability)
            .is_some_and(|c| !c.is_null())
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

/// Whether schema checks ran.
#[derive(Clone, Debug, PartialEq, Eq, serde::Serialize)]
#[serde(tag = "status", rename_all = "snake_case")]
pub enum SchemaStatus {
    /// Every inbound message was validated; `messages` were checked.
    Checked {
        revision: Revision,
        source: String,
        pinned: bool,
        messages: usize,
    },
    /// No schema was at hand: schema checks were skipped, not passed.
    Skipped { reason: String },
    /// The user turned schema checks off (`--no-schema`).
    Disabled { reason: String },
}

#[derive(Debug)]
struct Pending {
    method: String,
    /// The revision in force when the request was sent (decides its result schema).
    revision: Revision,
    /// The request's `_meta.progressToken`: progress on it restarts the timeout.
    progress_token: Option<Value>,
}

/// However much progress a request reports, it gets at most this many timeouts in all.
const MAX_TIMEOUT_EXTENSIONS: u32 = 30;

/// A message the server sent on its own (notification or request), kept for scenarios.
#[derive(Clone, Debug, PartialEq)]
pub struct Unsolicited {
    pub frame: Option<usize>,
    pub message: Message,
}

/// Everything a finished session leaves behind.
#[derive(Debug)]
pub struct SessionRecord {
    pub transcript: Transcript,
    pub findings: Vec<Finding>,
    pub schema: SchemaStatus,
    pub shutdown: Option<ShutdownReport>,
    pub stderr_bytes: u64,
    pub stderr_tail: Vec<String>,
}

pub struct Session {
    transport: Box<dyn Transport>,
    schemas: Arc<SchemaStore>,
    config: SessionConfig,
    /// The revision spoken now: requested until the server answers `initialize`.
    revision: Revision,
    transcript: Transcript,
    findings: Vec<Finding>,
    next_id: i64,
    pending: HashMap<RequestId, Pending>,
    replies: HashMap<RequestId, Reply>,
    answered: HashSet<RequestId>,
    /// Pending requests that reported progress since their timeout clock last started.
    progressed: HashSet<RequestId>,
    /// The last `progress` value seen per progress token (its JSON text).
    last_progress: HashMap<String, f64>,
    /// Progress tokens of raw-sent requests not yet registered with `expect_reply`.
    raw_progress_tokens: HashMap<RequestId, Value>,
    /// The unterminated end of the raw bytes sent so far: a request split across writes
    /// (the fuzzer's split frames) is read when its line is complete, as the server reads it.
    raw_partial_line: Vec<u8>,
    /// Requests given up on after their timeout. A late answer is still checked (id type,
    /// schema) but no longer awaited.
    expired: HashMap<RequestId, Pending>,
    unsolicited: VecDeque<Unsolicited>,
    initialized_sent: bool,
    /// A reply has been waited for (the start-up allowance is spent).
    server_up: bool,
    stdout_closed: bool,
    exit: Option<ExitInfo>,
    schema_checked: usize,
    schema_skipped: Option<String>,
    schema_source: Option<(String, bool)>,
    profile: Option<ServerProfile>,
}

impl std::fmt::Debug for Session {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Session")
            .field("server", &self.transport.describe())
            .field("revision", &self.revision)
            .finish()
    }
}

impl Session {
    pub fn new(
        transport: Box<dyn Transport>,
        schemas: Arc<SchemaStore>,
        config: SessionConfig,
        started: Instant,
    ) -> Self {
        Session {
            transport,
            schemas,
            revision: config.revision,
            config,
            transcript: Transcript::new(started),
            findings: Vec::new(),
            next_id: 1,
            pending: HashMap::new(),
            replies: HashMap::new(),
            answered: HashSet::new(),
            expired: HashMap::new(),
            progressed: HashSet::new(),
            last_progress: HashMap::new(),
            raw_progress_tokens: HashMap::new(),
            raw_partial_line: Vec::new(),
            unsolicited: VecDeque::new(),
            initialized_sent: false,
            server_up: false,
            stdout_closed: false,
            exit: None,
            schema_checked: 0,
            schema_skipped: None,
            schema_source: None,
            profile: None,
        }
    }

    pub fn revision(&self) -> Revision {
        self.revision
    }

    /// True once the server can send nothing more (its output closed).
    pub fn is_closed(&self) -> bool {
        self.stdout_closed
    }

    pub fn profile(&self) -> Option<&ServerProfile> {
        self.profile.as_ref()
    }

    pub fn findings(&self) -> &[Finding] {
        &self.findings
    }

    pub fn transcript(&self) -> &Transcript {
        &self.transcript
    }

    /// Reports every transcript entry recorded from now on to `observer`, as it happens.
    pub fn observe_transcript(&mut self, observer: transcript::Observer) {
        self.transcript.observe(observer);
    }

    /// A handle on the server's stderr record (stdio only); it outlives the session.
    pub fn stderr_log(&self) -> Option<crate::transport::StderrLog> {
        self.transport.stderr().cloned()
    }

    pub fn describe_server(&self) -> String {
        self.transport.describe()
    }

    /// The HTTP connection, for raw exchanges (HTTP transports only).
    pub fn http(&self) -> Option<crate::transport::http::HttpHandle> {
        self.transport.http()
    }

    /// Records bytes sent outside the transport (a scenario's raw exchange).
    pub fn record_sent(&mut self, text: String) -> Option<usize> {
        self.transcript.push(Direction::Sent, text)
    }

    /// Records an HTTP exchange made outside the transport (a scenario's raw exchange).
    pub fn record_http(&mut self, record: crate::transport::http::HttpRecord) -> Option<usize> {
        self.transcript.push_http(record)
    }

    /// Records a finding raised outside the session (by a runner check).
    pub fn add_finding(&mut self, finding: Finding) {
        self.findings.push(finding);
    }

    /// Messages the server sent on its own, oldest first.
    pub fn take_unsolicited(&mut self) -> Vec<Unsolicited> {
        self.unsolicited.drain(..).collect()
    }

    /// The next id mcpcheck would use.
    pub fn allocate_id(&mut self) -> RequestId {
        // Skip ids a scenario chose itself, so the two never collide.
        loop {
            let id = RequestId::int(self.next_id);
            self.next_id += 1;
            if !self.pending.contains_key(&id)
                && !self.answered.contains(&id)
                && !self.expired.contains_key(&id)
            {
                return id;
            }
        }
    }

    /// Sends a request and waits for its response.
    pub async fn request(
        &mut self,
        method: &str,
        params: Option<Value>,
    ) -> Result<Reply, SessionError> {
        let id = self.allocate_id();
        self.request_with_id(id, method, params).await
    }

    /// Sends a request with a chosen id (for id-echo checks) and waits for its response.
    pub async fn request_with_id(
        &mut self,
        id: RequestId,
        method: &str,
        params: Option<Value>,
    ) -> Result<Reply, SessionError> {
        self.send_request(id.clone(), method, params).await?;
        self.wait_reply(&id).await
    }

    /// Sends a request without waiting (for concurrency); collect with [`wait_reply`](Self::wait_reply).
    pub async fn send_request(
        &mut self,
        id: RequestId,
        method: &str,
        params: Option<Value>,
    ) -> Result<(), SessionError> {
        // The stateless revision carries version, capabilities and client info per request.
        let params = if self.config.revision.has_handshake() {
            params
        } else {
            stateless::with_meta(
                params,
                &stateless::request_meta(
                    self.config.revision.as_str(),
                    &self.config.client_capabilities,
                ),
            )
        };
        let bytes = request_json(&id, method, params.as_ref());
        let progress_token = params
            .as_ref()
            .and_then(|p| p.pointer("/_meta/progressToken"))
            .cloned();
        self.pending.insert(
            id,
            Pending {
                method: method.to_owned(),
                revision: self.revision,
                progress_token,
            },
        );
        self.transcript
            .push(Direction::Sent, String::from_utf8_lossy(&bytes));
        match self.transport.send(bytes).await {
            Ok(()) => Ok(()),
            Err(source) => Err(self.send_failed(method, source).await),
        }
    }

    /// A failed write: unless the server merely stopped reading, it is gone, so wait a
    /// moment for its exit status, which names what happened better than a broken pipe.
    async fn send_failed(&mut self, method: &str, source: TransportError) -> SessionError {
        if !matches!(source, TransportError::WriteTimeout(_)) {
            self.wait_exit(Duration::from_secs(1)).await;
        }
        SessionError::Send {
            method: method.to_owned(),
            source,
        }
    }

    /// Sends a notification.
    pub async fn notify(
        &mut self,
        method: &str,
        params: Option<Value>,
    ) -> Result<(), SessionError> {
        let bytes = notification_json(method, params.as_ref());
        self.transcript
            .push(Direction::Sent, String::from_utf8_lossy(&bytes));
        match self.transport.send(bytes).await {
            Ok(()) => Ok(()),
            Err(source) => Err(self.send_failed(method, source).await),
        }
    }

    /// Sends one message's bytes as given, framed by the transport like a request (the
    /// fuzzer over HTTP): a POST refused with an HTTP error status and no JSON-RPC
    /// response fails with [`TransportError::Rejected`], where `send_raw` takes it silently.
    pub async fn send_frame(&mut self, bytes: Vec<u8>) -> Result<(), SessionError> {
        self.transcript
            .push(Direction::Sent, String::from_utf8_lossy(&bytes));
        self.note_raw_progress_tokens(&bytes);
        match self.transport.send(bytes).await {
            Ok(()) => Ok(()),
            Err(source @ TransportError::Rejected { .. }) => Err(SessionError::Send {
                method: "(fuzz input)".into(),
                source,
            }),
            Err(source) => Err(self.send_failed("(raw bytes)", source).await),
        }
    }

    /// Sends bytes exactly as given (framing tests).
    pub async fn send_raw(&mut self, bytes: Vec<u8>) -> Result<(), SessionError> {
        self.transcript
            .push(Direction::Sent, String::from_utf8_lossy(&bytes));
        self.note_raw_line_progress_tokens(&bytes);
        match self.transport.send_raw(bytes).await {
            Ok(()) => Ok(()),
            Err(source) => Err(self.send_failed("(raw bytes)", source).await),
        }
    }

    /// Waits for the response to `id`, processing everything else that arrives meanwhile.
    pub async fn wait_reply(&mut self, id: &RequestId) -> Result<Reply, SessionError> {
        let method = self
            .pending
            .get(id)
            .map(|p| p.method.clone())
            .unwrap_or_default();
        // A server may need time to start: the first request gets the startup allowance
        // (in 2026-07-28 that is server/discover, or whatever a scenario sends first).
        let timeout = if method == "initialize" || !self.server_up {
            self.config.startup_timeout.max(self.config.timeout)
        } else {
            self.config.timeout
        };
        // Only once: a server silent from the start does not stretch every later wait.
        self.server_up = true;
        let mut deadline = tokio::time::Instant::now() + timeout;
        let mut extensions = 0;
        loop {
            if let Some(reply) = self.replies.remove(id) {
                return Ok(reply);
            }
            // A client may restart its timeout when the request reports progress
            // (spec: basic/lifecycle#timeouts), so long-running tools are not hangs.
            if self.progressed.remove(id) && extensions < MAX_TIMEOUT_EXTENSIONS {
                extensions += 1;
                deadline = tokio::time::Instant::now() + timeout;
            }
            if self.stdout_closed {
                self.pending.remove(id);
                self.await_exit_info().await;
                return Err(SessionError::Closed {
                    method,
                    exit: self.exit.clone(),
                });
            }
            match tokio::time::timeout_at(deadline, self.transport.recv()).await {
                Ok(Some(item)) => self.ingest(item).await,
                Ok(None) => self.stdout_closed = true,
                Err(_) => {
                    if let Some(p) = self.pending.remove(id) {
                        self.expired.insert(id.clone(), p);
                    }
                    self.cancel_after_timeout(id, &method).await;
                    return Err(SessionError::Timeout {
                        method,
                        after: timeout,
                    });
                }
            }
        }
    }

    /// Processes whatever arrives for `window`: used to see that nothing (or something)
    /// comes, and to collect notifications.
    pub async fn pump(&mut self, window: Duration) {
        let deadline = tokio::time::Instant::now() + window;
        while !self.stdout_closed {
            match tokio::time::timeout_at(deadline, self.transport.recv()).await {
                Ok(Some(item)) => self.ingest(item).await,
                Ok(None) => self.stdout_closed = true,
                Err(_) => break,
            }
        }
    }

    async fn await_exit_info(&mut self) {
        if self.exit.is_some() {
            return;
        }
        let deadline = tokio::time::Instant::now() + EXIT_GRACE;
        while self.exit.is_none() {
            match tokio::time::timeout_at(deadline, self.transport.recv()).await {
                Ok(Some(item)) => self.ingest(item).await,
                _ => break,
            }
        }
    }

    /// Runs the `initialize` handshake: request, result, `notifications/initialized`.
    pub async fn initialize(&mut self) -> Result<ServerProfile, SessionError> {
        self.initialize_with(&Handshake::default())
            .await
            .map(|(profile, _)| profile)
    }

    /// The handshake with overrides (scenarios test negotiation with them). Returns the
    /// server's profile and the raw reply, for checks on the result.
    pub async fn initialize_with(
        &mut self,
        handshake: &Handshake,
    ) -> Result<(ServerProfile, Reply), SessionError> {
        if !self.config.revision.has_handshake() {
            return self.discover_with(handshake).await;
        }
        let requested = handshake
            .protocol_version
            .clone()
            .unwrap_or_else(|| self.config.revision.as_str().to_owned());
        let capabilities = handshake
            .capabilities
            .clone()
            .unwrap_or_else(|| self.config.client_capabilities.clone());
        let params = json!({
            "protocolVersion": requested,
            "capabilities": capabilities,
            "clientInfo": { "name": "mcpcheck", "version": env!("CARGO_PKG_VERSION") },
        });
        let reply = self.request("initialize", Some(params)).await?;
        let result = reply.result().cloned().unwrap_or(Value::Null);
        let profile = ServerProfile {
            protocol_version: result
                .get("protocolVersion")
                .and_then(Value::as_str)
                .map(str::to_owned),
            capabilities: result.get("capabilities").cloned().unwrap_or(Value::Null),
            server_info: result.get("serverInfo").cloned().unwrap_or(Value::Null),
            instructions: result
                .get("instructions")
                .and_then(Value::as_str)
                .map(str::to_owned),
            supported_versions: Vec::new(),
        };
        if let Some(error) = reply.error() {
            // A negotiation test may expect exactly this; only the default handshake judges it.
            if handshake.protocol_version.is_none() {
                let finding = Finding::new(
                    &rules::LIFECYCLE_VERSION,
                    self.revision,
                    format!(
                        "`initialize` failed with error {} \"{}\"; the server may speak only the stateless revision (2026-07-28), which has no handshake: `--protocol-version auto` asks it what it supports",
                        error.code, error.message
                    ),
                );
                self.push_at(finding, reply.frame);
            }
        } else if handshake.protocol_version.is_none() {
            self.negotiate(&profile, reply.frame);
        } else if let Some(rev) = profile
            .protocol_version
            .as_deref()
            .and_then(|v| v.parse::<Revision>().ok())
        {
            // Speak whatever was agreed, so later results are validated against it.
            self.revision = rev;
        }
        self.profile = Some(profile.clone());
        if !handshake.skip_initialized {
            self.notify("notifications/initialized", None).await?;
            self.initialized_sent = true;
        }
        Ok((profile, reply))
    }

    /// Registers a request that was sent some other way (raw bytes), so its response is
    /// correlated and checked like any other.
    pub fn expect_reply(&mut self, id: RequestId, method: &str) {
        // A progress token in raw bytes already sent (or sent next) belongs to this request.
        let progress_token = self.raw_progress_tokens.remove(&id);
        self.pending.insert(
            id,
            Pending {
                method: method.to_owned(),
                revision: self.revision,
                progress_token,
            },
        );
    }

    /// [`Self::note_raw_progress_tokens`] for bytes that continue the raw line stream (stdio):
    /// only complete lines are read, the rest waits for the write that ends it.
    fn note_raw_line_progress_tokens(&mut self, bytes: &[u8]) {
        /// A longer unterminated line is no request any server reads (frame limits).
        const MAX_PARTIAL: usize = 64 << 20;
        let Some(last_newline) = bytes.iter().rposition(|b| *b == b'\n') else {
            if self.raw_partial_line.len() + bytes.len() <= MAX_PARTIAL {
                self.raw_partial_line.extend_from_slice(bytes);
            } else {
                self.raw_partial_line.clear();
            }
            return;
        };
        let mut complete = std::mem::take(&mut self.raw_partial_line);
        complete.extend_from_slice(&bytes[..=last_newline]);
        self.note_raw_progress_tokens(&complete);
        let rest = &bytes[last_newline + 1..];
        if rest.len() <= MAX_PARTIAL {
            self.raw_partial_line.extend_from_slice(rest);
        }
    }

    /// Notes the progress tokens of requests inside raw bytes, so that progress for them
    /// counts as progress of a request in progress (`progress.active-token`).
    fn note_raw_progress_tokens(&mut self, bytes: &[u8]) {
        for line in bytes.split(|b| *b == b'\n') {
            let Ok(value) = serde_json::from_slice::<Value>(line) else {
                continue;
            };
            let items = match value {
                Value::Array(items) => items,
                one => vec![one],
            };
            for item in items {
                let token = item.pointer("/params/_meta/progressToken").cloned();
                let id = match item.get("id") {
                    Some(Value::String(s)) => RequestId::String(s.clone()),
                    Some(Value::Number(n)) => RequestId::Number(n.to_string()),
                    _ => continue,
                };
                if let Some(token) = token {
                    match self.pending.get_mut(&id) {
                        Some(p) => p.progress_token = Some(token),
                        None => {
                            self.raw_progress_tokens.insert(id, token);
                        }
                    }
                }
            }
        }
    }

    /// Waits up to `window` for the response to `id` without treating its absence as a
    /// failure (no timeout finding, no cancellation): for "nothing comes back" checks.
    pub async fn poll_reply(&mut self, id: &RequestId, window: Duration) -> Option<Reply> {
        let deadline = tokio::time::Instant::now() + window;
        loop {
            if let Some(reply) = self.replies.remove(id) {
                return Some(reply);
            }
            if self.stdout_closed {
                return None;
            }
            match tokio::time::timeout_at(deadline, self.transport.recv()).await {
                Ok(Some(item)) => self.ingest(item).await,
                Ok(None) => self.stdout_closed = true,
                Err(_) => return None,
            }
        }
    }

    /// Waits up to `window` for the server process to end.
    pub async fn wait_exit(&mut self, window: Duration) -> Option<ExitInfo> {
        let deadline = tokio::time::Instant::now() + window;
        while self.exit.is_none() {
            match tokio::time::timeout_at(deadline, self.transport.recv()).await {
                Ok(Some(item)) => self.ingest(item).await,
                Ok(None) => {
                    self.stdout_closed = true;
                    // Output is closed; the exit itself may still be on its way.
                    if tokio::time::Instant::now() >= deadline {
                        break;
                    }
                    tokio::time::sleep(Duration::from_millis(10)).await;
                }
                Err(_) => break,
            }
        }
        self.exit.clone()
    }

    /// The schema of the revision spoken now, if one is at hand.
    pub fn schema(&self) -> Arc<Result<crate::schema::SchemaSet, String>> {
        self.schemas.get(self.revision)
    }

    /// The client's request to close stdin early (a scenario testing exit behaviour).
    pub async fn close_input(&mut self) {
        self.transport.close_input().await;
    }

    fn negotiate(&mut self, profile: &ServerProfile, frame: Option<usize>) {
        let requested = self.config.revision;
        match profile.protocol_version.as_deref() {
            Some(v) if v == requested.as_str() => {}
            Some(v) => match v.parse::<Revision>() {
                Ok(other) if other.has_handshake() => {
                    let f = Finding::new(
                        &rules::LIFECYCLE_VERSION_DOWNGRADE,
                        requested,
                        format!(
                            "requested {requested}, the server answered {other}; the session continues in {other}"
                        ),
                    );
                    self.push_at(f, frame);
                    self.revision = other;
                }
                _ => {
                    let f = Finding::new(
                        &rules::LIFECYCLE_VERSION,
                        requested,
                        format!("requested {requested}, the server answered \"{v}\", which is not a handshake revision of MCP"),
                    )
                    .pointer("/result/protocolVersion")
                    .expected(format!("\"{requested}\", or another revision the server supports"));
                    self.push_at(f, frame);
                }
            },
            // A missing version is a schema violation, already reported.
            None => {}
        }
    }

    fn push_at(&mut self, finding: Finding, frame: Option<usize>) {
        self.findings.push(match frame {
            Some(i) => finding.at_frame(i),
            None => finding,
        });
    }

    /// Handles one inbound item: records it, checks it, correlates it.
    async fn ingest(&mut self, item: Inbound) {
        match item {
            Inbound::Frame(frame) => {
                let index = self.transcript.push(Direction::Received, frame.text());
                self.ingest_frame(&frame, index).await;
            }
            Inbound::Framing(issue) => self.ingest_framing(issue).await,
            Inbound::Closed => {
                self.stdout_closed = true;
                self.transcript
                    .push(Direction::Event, "server closed its output");
            }
            Inbound::Exited(exit) => {
                self.transcript
                    .push(Direction::Event, format!("server process ended: {exit}"));
                self.exit = Some(exit);
            }
            Inbound::Http(record) => {
                // A transport rule broken mid-exchange (SSE resumption): a finding.
                let finding = match &record {
                    crate::transport::http::HttpRecord::Violation { rule, problem } => {
                        rules::by_id(rule).map(|r| Finding::new(r, self.revision, problem.clone()))
                    }
                    _ => None,
                };
                let index = self.transcript.push_http(record);
                if let Some(f) = finding {
                    self.push_at(f, index);
                }
            }
        }
    }

    async fn ingest_framing(&mut self, issue: FramingIssue) {
        let rev = self.revision;
        match issue {
            FramingIssue::MultiLine { lines, frame } => {
                let index = self.transcript.push(Direction::Received, frame.text());
                let f = Finding::new(
                    &rules::STDIO_NEWLINE,
                    rev,
                    format!("a message was written across {lines} lines"),
                )
                .expected("one JSON message per line, no embedded newlines")
                .evidence(quote(frame.text(), 400));
                self.push_at(f, index);
                // Recovered so one framing defect does not turn every later step into a timeout.
                self.ingest_frame(&frame, index).await;
            }
            FramingIssue::NotJson {
                line,
                error,
                offset,
            } => {
                let index = self.transcript.push(Direction::Received, line.clone());
                let f = Finding::new(
                    &rules::STDIO_STDOUT_ONLY_MESSAGES,
                    rev,
                    format!("stdout carried a line that is not a JSON-RPC message ({error})"),
                )
                .evidence(format!("byte {offset}: {}", quote(&line, 400)))
                .expected("only MCP messages on stdout; logs go to stderr");
                self.push_at(f, index);
            }
            FramingIssue::InvalidUtf8 {
                offset,
                valid_up_to,
                prefix,
            } => {
                let text = String::from_utf8_lossy(&prefix).into_owned();
                let index = self.transcript.push(Direction::Received, text.clone());
                let f = Finding::new(
                    &rules::STDIO_UTF8,
                    rev,
                    format!("a line is not valid UTF-8 (bad byte at position {valid_up_to})"),
                )
                .evidence(format!("byte {offset}: {}", quote(&text, 200)));
                self.push_at(f, index);
            }
            FramingIssue::Oversize {
                offset,
                len,
                limit,
                prefix,
            } => {
                let text = String::from_utf8_lossy(&prefix).into_owned();
                let index = self.transcript.push(
                    Direction::Event,
                    format!("skipped a {len}-byte line (limit {limit})"),
                );
                let f = Finding::new(
                    &rules::FRAME_TOO_LARGE,
                    rev,
                    format!(
                        "a {len}-byte line exceeded the {limit}-byte frame limit and was skipped"
                    ),
                )
                .evidence(format!("byte {offset}: {}", quote(&text, 200)))
                .expected("raise --max-frame-size if such messages are intended");
                self.push_at(f, index);
            }
            FramingIssue::Unterminated { offset, len } => {
                let index = self.transcript.push(
                    Direction::Event,
                    format!("output ended inside a {len}-byte line with no newline"),
                );
                let f = Finding::new(
                    &rules::STDIO_UNTERMINATED,
                    rev,
                    format!(
                        "the last {len} bytes of output (from byte {offset}) had no terminating newline"
                    ),
                );
                self.push_at(f, index);
            }
        }
    }

    async fn ingest_frame(&mut self, frame: &RawFrame, index: Option<usize>) {
        match classify(&frame.value, frame.text()) {
            Classified::Single(Ok(message)) => {
                self.ingest_message(message, &frame.value, index, "").await
            }
            Classified::Single(Err(invalid)) => {
                self.report_invalid(&invalid.reason, &invalid.pointer, index);
                self.salvage(&frame.value, index);
            }
            Classified::Batch(items) => {
                if !self.revision.allows_batches() {
                    let f = Finding::new(
                        &rules::JSONRPC_BATCH,
                        self.revision,
                        format!("the server sent a batch of {} messages", items.len()),
                    )
                    .expected("single JSON-RPC messages (batches exist only in 2025-03-26)");
                    self.push_at(f, index);
                }
                for (i, item) in items.into_iter().enumerate() {
                    let element = frame.value.get(i).cloned().unwrap_or(Value::Null);
                    match item {
                        Ok(message) => {
                            Box::pin(self.ingest_message(
                                message,
                                &element,
                                index,
                                &format!("/{i}"),
                            ))
                            .await
                        }
                        Err(invalid) => {
                            self.report_invalid(&invalid.reason, &invalid.pointer, index);
                            self.salvage(&element, index);
                        }
                    }
                }
            }
        }
    }

    fn report_invalid(&mut self, reason: &InvalidReason, pointer: &str, index: Option<usize>) {
        use InvalidReason as R;
        let rule = match reason {
            R::MissingJsonrpc | R::WrongJsonrpc(_) => &rules::JSONRPC_VERSION,
            R::BothResultAndError | R::NeitherMethodNorResult => &rules::JSONRPC_RESULT_XOR_ERROR,
            R::ErrorNotObject(_)
            | R::ErrorCodeNotInteger(_)
            | R::ErrorCodeMissing
            | R::ErrorMessageNotString(_)
            | R::ErrorMessageMissing => &rules::JSONRPC_ERROR_SHAPE,
            R::IdWrongType(_) | R::IdNullInRequest | R::ResultWithNullId | R::ResponseWithoutId => {
                &rules::JSONRPC_ID_TYPE
            }
            R::NotAnObject(_)
            | R::EmptyBatch
            | R::MethodNotString(_)
            | R::ParamsNotStructured(_) => &rules::JSONRPC_MESSAGE,
        };
        let f = Finding::new(rule, self.revision, reason.to_string()).pointer(pointer);
        self.push_at(f, index);
    }

    /// After an invalid frame, still resolves the request it plainly answers, so a
    /// server with one defect gets judged on the rest instead of timing out everywhere.
    fn salvage(&mut self, value: &Value, index: Option<usize>) {
        let Some(id) = value.get("id").and_then(|id| {
            serde_json::from_value::<Box<serde_json::value::RawValue>>(id.clone()).ok()
        }) else {
            return;
        };
        let Some(id) = RequestId::from_raw(&id) else {
            return;
        };
        let outcome = match (value.get("result"), value.get("error")) {
            (Some(r), _) => Outcome::Result(r.clone()),
            (None, Some(e)) => Outcome::Error(ErrorObject {
                code: e.get("code").and_then(Value::as_i64).unwrap_or(0),
                message: e
                    .get("message")
                    .and_then(Value::as_str)
                    .unwrap_or_default()
                    .to_owned(),
                data: e.get("data").cloned(),
            }),
            (None, None) => return,
        };
        if let Some(key) = self.match_pending(&id)
            && let Some((_, late)) = self.take_pending(&key)
        {
            self.answered.insert(key.clone());
            if !late {
                self.replies.insert(
                    key,
                    Reply {
                        frame: index,
                        outcome,
                        salvaged: true,
                    },
                );
            }
        }
    }

    /// The pending request `id` answers: exactly, or (a finding later) the same text
    /// under another JSON type.
    fn match_pending(&self, id: &RequestId) -> Option<RequestId> {
        if self.pending.contains_key(id) || self.expired.contains_key(id) {
            return Some(id.clone());
        }
        self.pending
            .keys()
            .chain(self.expired.keys())
            .find(|k| k.same_text_other_type(id))
            .cloned()
    }

    /// Takes the request `key` answers out of the waiting (or timed-out) set. The flag
    /// says whether it had already timed out.
    fn take_pending(&mut self, key: &RequestId) -> Option<(Pending, bool)> {
        if let Some(p) = self.pending.remove(key) {
            return Some((p, false));
        }
        self.expired.remove(key).map(|p| (p, true))
    }

    /// After a timeout the client should cancel the request (spec: `basic/lifecycle#timeouts`);
    /// `initialize` is never cancelled.
    async fn cancel_after_timeout(&mut self, id: &RequestId, method: &str) {
        if method == "initialize" || self.stdout_closed {
            return;
        }
        let params = json!({ "requestId": id.to_value(), "reason": "mcpcheck: timed out waiting for the response" });
        let _ = self.notify("notifications/cancelled", Some(params)).await;
    }

    async fn ingest_message(
        &mut self,
        message: Message,
        value: &Value,
        index: Option<usize>,
        base: &str,
    ) {
        match message {
            Message::Response(response) => self.ingest_response(response, value, index, base),
            Message::Notification(n) => {
                self.check_schema(value, index, base, Some(&n.method), Kind::Notification);
                if n.method == "notifications/progress"
                    && let Some(params) = n.params.as_ref()
                {
                    self.check_progress(params, index, base);
                }
                self.check_list_changed(&n.method, index, base);
                self.unsolicited.push_back(Unsolicited {
                    frame: index,
                    message: Message::Notification(n),
                });
            }
            Message::Request(request) => {
                self.check_schema(value, index, base, Some(&request.method), Kind::Request);
                self.answer_server_request(&request, index).await;
                self.unsolicited.push_back(Unsolicited {
                    frame: index,
                    message: Message::Request(request),
                });
            }
        }
    }

    /// Progress must name a request still in progress (a timed-out one may still be
    /// running on the server) and must increase per token
    /// (`basic/utilities/progress`); progress also restarts that request's timeout.
    fn check_progress(&mut self, params: &Value, index: Option<usize>, base: &str) {
        let Some(token) = params.get("progressToken") else {
            return; // the schema check reports the missing member
        };
        let rev = self.revision;
        let active = self
            .pending
            .iter()
            .find(|(_, p)| p.progress_token.as_ref() == Some(token))
            .map(|(id, _)| id.clone());
        let timed_out = self
            .expired
            .values()
            .any(|p| p.progress_token.as_ref() == Some(token));
        match active {
            Some(id) => {
                self.progressed.insert(id);
            }
            None if timed_out => {}
            None => {
                let f = Finding::new(
                    &rules::PROGRESS_ACTIVE_TOKEN,
                    rev,
                    format!(
                        "notifications/progress for token {token}, which no request in progress carries (never sent, or already answered)"
                    ),
                )
                .pointer(format!("{base}/params/progressToken"));
                self.push_at(f, index);
                return;
            }
        }
        let Some(progress) = params.get("progress").and_then(Value::as_f64) else {
            return;
        };
        let key = token.to_string();
        if let Some(&last) = self.last_progress.get(&key)
            && progress <= last
        {
            let f = Finding::new(
                &rules::PROGRESS_INCREASING,
                rev,
                format!(
                    "notifications/progress for token {token} went from {last} to {progress}; it must increase with each notification"
                ),
            )
            .pointer(format!("{base}/params/progress"))
            .expected(format!("a progress above {last}"));
            self.push_at(f, index);
        }
        self.last_progress.insert(key, progress);
    }

    /// `notifications/{tools,prompts,resources}/list_changed` needs `listChanged: true` in
    /// the matching server capability (`basic/lifecycle#operation`).
    /// Likewise `notifications/message` needs the `logging` capability
    /// (`server/utilities/logging#capabilities`).
    fn check_list_changed(&mut self, method: &str, index: Option<usize>, base: &str) {
        let (area, sub) = match method
            .strip_prefix("notifications/")
            .and_then(|m| m.strip_suffix("/list_changed"))
        {
            Some(a @ ("tools" | "prompts" | "resources")) => (a, Some("listChanged")),
            _ if method == "notifications/message" => ("logging", None),
            _ => return,
        };
        let Some(profile) = &self.profile else {
            return;
        };
        let cap = profile.capabilities.get(area).filter(|c| !c.is_null());
        let declared = match sub {
            Some(sub) => cap.and_then(|c| c.get(sub)).and_then(Value::as_bool) == Some(true),
            None => cap.is_some(),
        };
        if declared {
            return;
        }
        let rev = self.revision;
        let needed = match sub {
            Some(sub) => format!("{area}.{sub}: true"),
            None => area.to_owned(),
        };
        let mut f = Finding::new(
            &rules::LIFECYCLE_SERVER_CAPABILITY,
            rev,
            format!("the server sent `{method}` without declaring `capabilities.{needed}`"),
        )
        .pointer(format!("{base}/method"))
        .expected(format!("no `{method}`, or `{needed}` at initialize"));
        if rev < Revision::V2025_06_18 {
            // "Both parties SHOULD ... only use capabilities that were successfully
            // negotiated" until 2025-06-18 made it a MUST.
            f.severity = crate::check::Severity::Warning;
        }
        self.push_at(f, index);
    }

    fn ingest_response(
        &mut self,
        response: Response,
        value: &Value,
        index: Option<usize>,
        base: &str,
    ) {
        let rev = self.revision;
        if response.id_omitted && rev < Revision::V2025_11_25 {
            let f = Finding::new(&rules::JSONRPC_ID_TYPE, rev, "an error response omits `id`; before 2025-11-25 it must be present (null when the request id could not be read)")
                .pointer(format!("{base}/id"))
                .expected("\"id\": null");
            self.push_at(f, index);
        }
        let Some(id) = response.id.clone() else {
            // A null id answers a request whose id could not be read; nothing to correlate.
            if let Outcome::Error(_) = &response.outcome {
                self.check_error_schema(value, index, base);
            }
            self.unsolicited.push_back(Unsolicited {
                frame: index,
                message: Message::Response(response),
            });
            return;
        };
        let Some(key) = self.match_pending(&id) else {
            let why = if self.answered.contains(&id) {
                format!("a second response to request {id}, which was already answered")
            } else {
                format!("a response with id {id}, which matches no request mcpcheck sent")
            };
            let f =
                Finding::new(&rules::JSONRPC_UNKNOWN_ID, rev, why).pointer(format!("{base}/id"));
            self.push_at(f, index);
            self.unsolicited.push_back(Unsolicited {
                frame: index,
                message: Message::Response(response),
            });
            return;
        };
        if key != id {
            let f = Finding::new(
                &rules::JSONRPC_ID_ECHOED,
                rev,
                format!(
                    "request id {key} was answered with id {id}: same text, different JSON type"
                ),
            )
            .pointer(format!("{base}/id"))
            .expected(format!("{key}"));
            self.push_at(f, index);
        }
        let (pending, late) = self.take_pending(&key).expect("matched above");
        if late {
            self.transcript.push(
                Direction::Event,
                format!(
                    "late response to request {key} ({}), after its timeout",
                    pending.method
                ),
            );
        }
        match &response.outcome {
            Outcome::Result(result) => {
                let mut result_def = self.result_definition(pending.revision, &pending.method);
                if !pending.revision.has_handshake() {
                    result_def = self.check_result_type(result, index, base).or(result_def);
                }
                if let Some(def) = result_def {
                    self.validate(
                        pending.revision,
                        &Target::Definition(def),
                        result,
                        index,
                        &format!("{base}/result"),
                    );
                }
            }
            Outcome::Error(_) => self.check_error_schema(value, index, base),
        }
        self.answered.insert(key.clone());
        if !late {
            self.replies.insert(
                key,
                Reply {
                    frame: index,
                    outcome: response.outcome,
                    salvaged: false,
                },
            );
        }
    }

    fn result_definition(&self, revision: Revision, method: &str) -> Option<String> {
        let set = self.schemas.get(revision);
        let set = set.as_ref().as_ref().ok()?;
        set.methods()
            .client_requests
            .get(method)
            .map(|(_, result)| result.clone())
    }

    fn check_error_schema(&mut self, value: &Value, index: Option<usize>, base: &str) {
        if let Some(error) = value.get("error") {
            self.validate(
                self.revision,
                &Target::ErrorObject,
                error,
                index,
                &format!("{base}/error"),
            );
        }
    }

    /// Validates a server notification or request against the definition its method
    /// names in this revision; an undefined method is a finding of its own.
    fn check_schema(
        &mut self,
        value: &Value,
        index: Option<usize>,
        base: &str,
        method: Option<&str>,
        kind: Kind,
    ) {
        let rev = self.revision;
        let set = self.schemas.get(rev);
        let Ok(set) = set.as_ref() else {
            self.note_schema_skip(rev);
            return;
        };
        let method = method.unwrap_or_default();
        let def = match kind {
            Kind::Notification => set.methods().server_notifications.get(method),
            Kind::Request => set.methods().server_requests.get(method),
        }
        .cloned();
        match def {
            Some(def) => self.validate(rev, &Target::Definition(def), value, index, base),
            None => {
                let what = match kind {
                    Kind::Notification => "notification",
                    Kind::Request => "request",
                };
                let f = Finding::new(&rules::SCHEMA_KNOWN_METHOD, rev, format!("the server sent a `{method}` {what}, which {rev} does not define for servers"))
                    .pointer(format!("{base}/method"));
                self.push_at(f, index);
            }
        }
    }

    fn note_schema_skip(&mut self, revision: Revision) {
        if self.schema_skipped.is_none() {
            let set = self.schemas.get(revision);
            if let Err(reason) = set.as_ref() {
                self.schema_skipped = Some(reason.clone());
            }
        }
    }

    /// Validates `instance` (found at `pointer` in the frame) and records violations.
    fn validate(
        &mut self,
        revision: Revision,
        target: &Target,
        instance: &Value,
        index: Option<usize>,
        pointer: &str,
    ) {
        let set = self.schemas.get(revision);
        let set = match set.as_ref() {
            Ok(set) => set,
            Err(_) => {
                self.note_schema_skip(revision);
                return;
            }
        };
        if self.schema_source.is_none() {
            self.schema_source = Some((set.located.path.display().to_string(), set.located.pinned));
        }
        match set.validate(target, instance) {
            Ok(violations) => {
                self.schema_checked += 1;
                for v in violations {
                    let f = Finding::new(
                        &rules::SCHEMA_VALID,
                        revision,
                        format!(
                            "{target} at `{}`: {}",
                            display_pointer(&v.instance_pointer),
                            v.message
                        ),
                    )
                    .pointer(format!("{pointer}{}", v.instance_pointer))
                    .expected(format!("{target} (schema path {})", v.schema_path));
                    self.push_at(f, index);
                }
            }
            Err(reason) => self.schema_skipped = Some(reason),
        }
    }

    async fn answer_server_request(
        &mut self,
        request: &crate::protocol::Request,
        index: Option<usize>,
    ) {
        let rev = self.revision;
        let caps = self.config.client_capabilities.clone();
        let needs = match request.method.as_str() {
            "roots/list" => Some("roots"),
            "sampling/createMessage" => Some("sampling"),
            "elicitation/create" => Some("elicitation"),
            _ => None,
        };
        if request.method != "ping" && !self.initialized_sent {
            let f = Finding::new(
                &rules::LIFECYCLE_REQUEST_BEFORE_INITIALIZED,
                rev,
                format!(
                    "the server sent a `{}` request before `notifications/initialized`",
                    request.method
                ),
            );
            self.push_at(f, index);
        }
        let outcome = match (request.method.as_str(), needs) {
            ("ping", _) => Outcome::Result(json!({})),
            (_, Some(cap)) if caps.get(cap).is_none() => {
                let f = Finding::new(
                    &rules::LIFECYCLE_UNDECLARED_CLIENT_CAPABILITY,
                    rev,
                    format!(
                        "the server sent `{}`, but mcpcheck did not declare the `{cap}` capability",
                        request.method
                    ),
                );
                self.push_at(f, index);
                Outcome::Error(ErrorObject {
                    code: codes::METHOD_NOT_FOUND,
                    message: format!("client does not support {cap}"),
                    data: None,
                })
            }
            ("roots/list", _) => Outcome::Result(json!({ "roots": [] })),
            _ => Outcome::Error(ErrorObject {
                code: codes::METHOD_NOT_FOUND,
                message: "method not supported by mcpcheck".into(),
                data: None,
            }),
        };
        let bytes = response_json(&request.id, &outcome);
        self.transcript
            .push(Direction::Sent, String::from_utf8_lossy(&bytes));
        // If the server is gone the next wait reports it; nothing to add here.
        let _ = self.transport.send(bytes).await;
    }

    /// Ends the session with the transport's shutdown sequence and returns the record.
    pub async fn finish(mut self) -> SessionRecord {
        let report = self.transport.shutdown().await;
        // Whatever the server wrote on the way out is still checked.
        while let Ok(Some(item)) = tokio::time::timeout(EXIT_GRACE, self.transport.recv()).await {
            self.ingest(item).await;
        }
        let rev = self.revision;
        self.transcript.push(
            Direction::Event,
            format!("shutdown: {:?} after {:?}", report.stage, report.took),
        );
        match report.stage {
            ShutdownStage::Terminated => self.findings.push(Finding::new(
                &rules::STDIO_SHUTDOWN,
                rev,
                "the server did not exit after its stdin was closed; it needed SIGTERM",
            )),
            ShutdownStage::Killed => self.findings.push(Finding::new(
                &rules::STDIO_SHUTDOWN,
                rev,
                "the server ignored both the closing of stdin and SIGTERM; it had to be killed with SIGKILL",
            )),
            _ => {}
        }
        let schema = match (&self.schema_skipped, &self.schema_source) {
            _ if self.schemas.is_disabled() => SchemaStatus::Disabled {
                reason: crate::schema::DISABLED.to_owned(),
            },
            (Some(reason), _) if self.schema_checked == 0 => SchemaStatus::Skipped {
                reason: reason.clone(),
            },
            (_, Some((source, pinned))) => SchemaStatus::Checked {
                revision: rev,
                source: source.clone(),
                pinned: *pinned,
                messages: self.schema_checked,
            },
            (Some(reason), None) => SchemaStatus::Skipped {
                reason: reason.clone(),
            },
            (None, None) => SchemaStatus::Skipped {
                reason: "no message needed a schema check".into(),
            },
        };
        let (stderr_bytes, stderr_tail) = match self.transport.stderr() {
            Some(log) => (log.total_bytes(), log.last_lines(20)),
            None => (0, Vec::new()),
        };
        SessionRecord {
            transcript: self.transcript,
            findings: self.findings,
            schema,
            shutdown: Some(report),
            stderr_bytes,
            stderr_tail,
        }
    }

    /// Stderr lines for crash evidence: from a panic or traceback if there is one.
    pub fn stderr_tail(&self, n: usize) -> Vec<String> {
        self.transport
            .stderr()
            .map(|s| s.crash_excerpt(n))
            .unwrap_or_default()
    }

    /// The server's stderr record, if it is a process mcpcheck started.
    pub fn stderr(&self) -> Option<&crate::transport::StderrLog> {
        self.transport.stderr()
    }

    /// Turns a failed request into the finding it represents.
    pub fn finding_for(&self, error: &SessionError) -> Finding {
        let rev = self.revision;
        match error {
            SessionError::Timeout { method, after } => {
                let f = Finding::new(
                    &rules::SESSION_TIMEOUT,
                    rev,
                    format!(
                        "`{method}` got no response within {}",
                        humantime::format_duration(*after)
                    ),
                );
                match self.transport.partial_line() {
                    Some((len, bytes)) => f
                        .evidence(format!(
                            "the server's output stops inside a line: {len} bytes with no terminating newline: {}",
                            quote(&String::from_utf8_lossy(&bytes), 300)
                        ))
                        .expected("each message terminated by a newline"),
                    None => f,
                }
            }
            SessionError::Closed { method, exit } => {
                let how = exit
                    .as_ref()
                    .map(|e| e.to_string())
                    .unwrap_or_else(|| "closed its output".into());
                let tail = self.stderr_tail(10);
                let f = Finding::new(
                    &rules::SESSION_EXITED,
                    rev,
                    format!(
                        "the server ended ({how}) while `{method}` was waiting for its response"
                    ),
                );
                if tail.is_empty() {
                    f
                } else {
                    f.evidence(format!("stderr:\n{}", tail.join("\n")))
                }
            }
            SessionError::Send {
                method,
                source: TransportError::WriteTimeout(after),
            } => Finding::new(
                &rules::SESSION_NOT_READING,
                rev,
                format!(
                    "writing `{method}` blocked for {}: the server is not reading its input",
                    humantime::format_duration(*after)
                ),
            ),
            SessionError::Send { method, source } => {
                let message = match &self.exit {
                    Some(exit) => {
                        format!("the server ended ({exit}) before `{method}` could be sent")
                    }
                    None => format!("could not send `{method}`: the server is gone ({source})"),
                };
                let tail = self.stderr_tail(10);
                let f = Finding::new(&rules::SESSION_EXITED, rev, message);
                if tail.is_empty() {
                    f
                } else {
                    f.evidence(format!("stderr:\n{}", tail.join("\n")))
                }
            }
        }
    }

    /// Whether the finding list has anything at failure level.
    pub fn has_failures(&self) -> bool {
        self.findings
            .iter()
            .any(|f| f.severity == Severity::Failure)
    }
}

#[derive(Clone, Copy)]
enum Kind {
    Notification,
    Request,
}

fn display_pointer(p: &str) -> &str {
    if p.is_empty() { "/" } else { p }
}

pub use crate::protocol::text::quote;

#[cfg(test)]
mod tests {
    use super::*;
    use crate::schema::SearchPath;
    use crate::snapshot::stream::StreamTransport;
    use tokio::io::AsyncWriteExt;

    /// Found by `mcpcheck fuzz` against the reference: a split-frame mutation sent a
    /// `tools/call` in two writes, its progress token was looked for in each write alone
    /// and never registered, and the server's (correct) progress was reported as
    /// `progress.active-token`. The replay, which sends the line whole, did not reproduce it.
    #[tokio::test]
    async fn a_request_split_across_raw_writes_keeps_its_progress_token() {
        let (client_io, server_io) = tokio::io::duplex(64 * 1024);
        let (_server_read, mut server_write) = tokio::io::split(server_io);
        let (client_read, client_write) = tokio::io::split(client_io);
        let transport = StreamTransport::new(client_read, client_write, "split-frame test");
        let mut session = Session::new(
            Box::new(transport),
            Arc::new(SchemaStore::new(SearchPath::default())),
            SessionConfig::default(),
            Instant::now(),
        );
        let id = RequestId::Number("7".into());
        session.expect_reply(id.clone(), "tools/call");
        let first = br#"{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"slow","#;
        let second = b"\"_meta\":{\"progressToken\":\"tok-7\"}}}\n{\"jsonrpc\":\"2.0\",";
        let third = b"\"id\":8,\"method\":\"ping\"}\n";
        for part in [&first[..], second, third] {
            session.send_raw(part.to_vec()).await.expect("sent");
        }
        server_write
            .write_all(b"{\"jsonrpc\":\"2.0\",\"method\":\"notifications/progress\",\"params\":{\"progressToken\":\"tok-7\",\"progress\":1}}\n{\"jsonrpc\":\"2.0\",\"id\":7,\"result\":{\"content\":[]}}\n")
            .await
            .expect("written");
        let reply = session.poll_reply(&id, Duration::from_secs(10)).await;
        assert!(reply.is_some(), "the response arrives");
        let stray: Vec<_> = session
            .findings()
            .iter()
            .filter(|f| f.rule == rules::PROGRESS_ACTIVE_TOKEN.id)
            .collect();
        assert!(stray.is_empty(), "{stray:#?}");
    }
}

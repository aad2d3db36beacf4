//! The Streamable HTTP transport (spec: `basic/transports#streamable-http`, 2025-03-26 on).
//!
//! Every outbound message is its own POST. What comes back (a JSON body, an SSE stream
//! carrying the response and interleaved server messages, or `202 Accepted`) is turned
//! into the same [`Inbound`] items the stdio transport yields, plus an [`Inbound::Http`]
//! record of each exchange for the transcript. The session id from the `initialize`
//! response and the negotiated protocol version are sent on every later request.
//!
//! An SSE stream that ends before the response it carries is resumed (see [`resume`]):
//! GET with `Last-Event-ID`, after the server's `retry`, a bounded number of times within
//! the request timeout (spec 2025-03-26 on: basic/transports#resumability-and-redelivery;
//! 2025-11-25 adds the server-initiated close and the client's polling).
//!
//! 2026-07-28 has no resumption, and a request is cancelled by closing its stream
//! (basic/patterns/cancellation#transport-specific-cancellation): a `notifications/cancelled`
//! for a request whose stream is open closes that stream instead of being POSTed. A
//! `subscriptions/listen` stream carries notifications and no response
//! (basic/patterns/subscriptions): it is read for as long as the session lasts, never
//! resumed, and ends when the client cancels it, the server closes it, or the session ends.

use std::collections::{HashMap, HashSet};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use futures_util::StreamExt;
use reqwest::header::{HeaderMap, HeaderName, HeaderValue};
use serde::Serialize;
use serde_json::Value;
use tokio::sync::{mpsc, oneshot};
use tokio::task::JoinHandle;

use super::framing::RawFrame;
use super::{BoxFuture, Inbound, ShutdownReport, ShutdownStage, StderrLog, Transport};
use crate::protocol::Revision;

pub const SESSION_HEADER: &str = "mcp-session-id";
pub const VERSION_HEADER: &str = "mcp-protocol-version";
/// 2026-07-28: the request's `method`, mirrored into a header.
pub const METHOD_HEADER: &str = "mcp-method";
/// 2026-07-28: `params.name` / `params.uri` of `tools/call`, `prompts/get`, `resources/read`.
pub const NAME_HEADER: &str = "mcp-name";
/// The `Accept` header every POST carries (spec: "listing both").
pub const POST_ACCEPT: &str = "application/json, text/event-stream";

/// Bytes of a non-SSE body kept in the transcript.
const BODY_QUOTE: usize = 64 * 1024;
/// How long `send` waits for response headers before letting the exchange finish in the
/// background: long enough to keep messages in order, short enough not to serialize
/// requests a slow server answers with a JSON body.
const HEAD_WAIT: Duration = Duration::from_secs(2);
const INBOUND_CAPACITY: usize = 4096;
/// Reconnections of one stream before mcpcheck gives up on it.
pub const MAX_RESUMES: u32 = 5;
/// The wait before a reconnection when the server sent no `retry` (the SSE standard leaves
/// the default to the client).
pub const DEFAULT_RETRY: Duration = Duration::from_millis(500);
/// The longest `retry` honoured; a longer one ends the resumption.
const MAX_RETRY: Duration = Duration::from_secs(30);
/// How long closing a stream may take to be recorded (its reader notices at once).
const CLOSE_WAIT: Duration = Duration::from_millis(500);
/// The 2026-07-28 method whose response stream is a long-lived notification stream.
const LISTEN: &str = "subscriptions/listen";

/// Where and how to reach a Streamable HTTP server.
#[derive(Clone, Debug)]
pub struct HttpOptions {
    /// The MCP endpoint, e.g. `http://127.0.0.1:8808/mcp`.
    pub url: reqwest::Url,
    /// Extra headers sent on every request (`--header`, and `Authorization` from
    /// `--bearer-env`).
    pub headers: Vec<(HeaderName, HeaderValue)>,
    /// Values never written to a transcript or report (bearer tokens).
    pub secrets: Vec<String>,
    /// Connect and response-header timeout of one exchange.
    pub timeout: Duration,
    /// Largest body or SSE event mcpcheck reads.
    pub max_frame: usize,
    /// 2026-07-28: the version for `MCP-Protocol-Version` on requests whose `_meta` leaves
    /// it out (a malformed-request scenario); the headers are sent on every request.
    pub stateless_version: Option<String>,
    /// PEM CA certificates trusted beside the system's roots (`--cacert`), checked when read.
    pub ca_pem: Option<Vec<u8>>,
}

/// Errors of the HTTP transport.
#[derive(Debug, thiserror::Error)]
pub enum HttpError {
    #[error("{url}: the URL must start with http:// or https://")]
    Scheme { url: String },
    #[error("{url}: mcpcheck only connects to loopback addresses (127.0.0.1, ::1, localhost)")]
    NotLoopback { url: String },
    #[error("cannot build the HTTP client: {0}")]
    Client(String),
    #[error("{method} {url}: {reason}")]
    Exchange {
        method: String,
        url: String,
        reason: String,
    },
}

impl HttpOptions {
    /// Checks the URL (scheme, loopback host) and builds the options.
    pub fn new(url: &str) -> Result<Self, HttpError> {
        let parsed = reqwest::Url::parse(url).map_err(|_| HttpError::Scheme { url: url.into() })?;
        if !matches!(parsed.scheme(), "http" | "https") {
            return Err(HttpError::Scheme { url: url.into() });
        }
        let host = parsed.host_str().unwrap_or("");
        let bare = host.trim_start_matches('[').trim_end_matches(']');
        let loopback = match bare.parse::<std::net::IpAddr>() {
            Ok(ip) => ip.is_loopback(),
            Err(_) => host.eq_ignore_ascii_case("localhost"),
        };
        if !loopback {
            return Err(HttpError::NotLoopback { url: url.into() });
        }
        Ok(HttpOptions {
            url: parsed,
            headers: Vec::new(),
            secrets: Vec::new(),
            timeout: Duration::from_secs(10),
            max_frame: super::framing::DEFAULT_MAX_FRAME,
            stateless_version: None,
            ca_pem: None,
        })
    }

    /// Replaces every secret in `text` with `[REDACTED]`.
    pub fn redact(&self, text: &str) -> String {
        redact(text, &self.secrets)
    }
}

/// Replaces every occurrence of each secret with `[REDACTED]`.
pub fn redact(text: &str, secrets: &[String]) -> String {
    let mut out = text.to_owned();
    for s in secrets.iter().filter(|s| !s.is_empty()) {
        if out.contains(s.as_str()) {
            out = out.replace(s.as_str(), "[REDACTED]");
        }
    }
    out
}

/// One HTTP event, as the transcript records it.
#[derive(Clone, Debug, PartialEq, Serialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum HttpRecord {
    /// A request and its response head (and body, unless it is an SSE stream).
    Exchange {
        method: String,
        url: String,
        request_headers: Vec<(String, String)>,
        status: u16,
        response_headers: Vec<(String, String)>,
        #[serde(skip_serializing_if = "Option::is_none")]
        body: Option<String>,
    },
    /// One event of an SSE stream (its data, if a message, follows as a received frame).
    SseEvent {
        stream: String,
        #[serde(skip_serializing_if = "String::is_empty")]
        id: String,
        event: String,
        #[serde(skip_serializing_if = "Option::is_none")]
        retry_ms: Option<u64>,
        data_bytes: usize,
        /// The data, for raw scenario exchanges (the transport's messages are frames).
        #[serde(skip_serializing_if = "Option::is_none")]
        data: Option<String>,
    },
    /// An SSE stream ended (or broke).
    StreamEnd { stream: String, reason: String },
    /// mcpcheck reconnects to a stream that ended before its response: a GET with
    /// `Last-Event-ID` after `wait_ms` (the server's `retry`, else the default).
    Resume {
        stream: String,
        last_event_id: String,
        attempt: u32,
        wait_ms: u64,
    },
    /// The server broke a transport rule mcpcheck checks as the exchange goes (rule id of
    /// `check::rules`); the session turns it into a finding.
    Violation { rule: String, problem: String },
    /// A request that got no HTTP response at all.
    Failed {
        method: String,
        url: String,
        error: String,
    },
    /// Something in a response that is not a JSON-RPC message where one belongs.
    Invalid { context: String, problem: String },
}

impl HttpRecord {
    /// One line for the human transcript.
    pub fn summary(&self) -> String {
        match self {
            HttpRecord::Exchange {
                method,
                url,
                status,
                response_headers,
                ..
            } => {
                let ct = header_of(response_headers, "content-type").unwrap_or("-");
                format!("HTTP {method} {url} -> {status} ({ct})")
            }
            HttpRecord::SseEvent {
                stream, id, event, ..
            } => format!("SSE {stream}: event {event:?} id {id:?}"),
            HttpRecord::StreamEnd { stream, reason } => format!("SSE {stream} ended: {reason}"),
            HttpRecord::Resume {
                stream,
                last_event_id,
                attempt,
                wait_ms,
            } => format!(
                "SSE {stream}: resuming with GET, Last-Event-ID {last_event_id:?} (attempt {attempt}, after {wait_ms} ms)"
            ),
            HttpRecord::Violation { rule, problem } => format!("HTTP [{rule}] {problem}"),
            HttpRecord::Failed { method, url, error } => {
                format!("HTTP {method} {url} failed: {error}")
            }
            HttpRecord::Invalid { context, problem } => format!("HTTP {context}: {problem}"),
        }
    }
}

fn header_of<'a>(headers: &'a [(String, String)], name: &str) -> Option<&'a str> {
    headers
        .iter()
        .find(|(k, _)| k.eq_ignore_ascii_case(name))
        .map(|(_, v)| v.as_str())
}

/// Session state shared by the transport's tasks and by raw scenario exchanges.
#[derive(Debug, Default)]
struct State {
    session_id: Option<String>,
    /// The negotiated revision, once `initialize` was answered.
    revision: Option<String>,
    /// Id of the `initialize` request in flight, to spot its response.
    initialize_id: Option<Value>,
    /// The standalone GET stream was opened (or refused) already.
    get_opened: bool,
    streams: u64,
    /// Every SSE event id received in this session, with the stream that carried it first:
    /// ids "MUST be globally unique across all streams within that session".
    event_ids: HashMap<String, String>,
}

/// A handle on an HTTP connection for raw exchanges (scenario `http` steps): the client,
/// the endpoint, the headers, and the session's current id and version.
#[derive(Clone, Debug)]
pub struct HttpHandle {
    client: reqwest::Client,
    options: Arc<HttpOptions>,
    state: Arc<Mutex<State>>,
}

impl HttpHandle {
    pub fn client(&self) -> &reqwest::Client {
        &self.client
    }
    pub fn options(&self) -> &HttpOptions {
        &self.options
    }
    pub fn session_id(&self) -> Option<String> {
        self.lock().session_id.clone()
    }
    /// Whether an `initialize` was answered on this connection.
    pub fn initialized(&self) -> bool {
        self.lock().revision.is_some()
    }
    /// The `MCP-Protocol-Version` value the transport sends, if any.
    pub fn protocol_version_header(&self) -> Option<String> {
        version_header(&self.lock())
    }
    /// A handle for a connection that has no session state (the legacy SSE transport).
    pub(crate) fn detached(client: reqwest::Client, options: HttpOptions) -> Self {
        HttpHandle {
            client,
            options: Arc::new(options),
            state: Arc::new(Mutex::new(State::default())),
        }
    }
    fn lock(&self) -> std::sync::MutexGuard<'_, State> {
        self.state.lock().unwrap_or_else(|e| e.into_inner())
    }
    /// Request headers as recorded (secrets redacted).
    pub fn record_headers(&self, headers: &HeaderMap) -> Vec<(String, String)> {
        record_headers(headers, &self.options)
    }
    /// Whether streams of this session may be resumed with `Last-Event-ID` (2025-03-26
    /// to 2025-11-25; the stateless revision has no resumption).
    pub fn resumable(&self) -> bool {
        let rev = self.lock().revision.clone();
        self.options.stateless_version.is_none()
            && rev
                .and_then(|r| r.parse::<Revision>().ok())
                .is_none_or(|r| r < Revision::V2026_07_28)
    }
    /// Notes an SSE event id received on `stream`; returns the stream that carried the
    /// same id before, if any.
    pub fn note_event_id(&self, id: &str, stream: &str) -> Option<String> {
        let mut s = self.lock();
        match s.event_ids.get(id) {
            Some(first) => Some(first.clone()),
            None => {
                s.event_ids.insert(id.to_owned(), stream.to_owned());
                None
            }
        }
    }
    /// A request to the endpoint with the common headers, the session id and the version
    /// header.
    pub fn request(&self, method: reqwest::Method, accept: &str) -> reqwest::RequestBuilder {
        let mut req = self
            .client
            .request(method, self.options.url.clone())
            .header(reqwest::header::ACCEPT, accept);
        for (k, v) in &self.options.headers {
            req = req.header(k, v);
        }
        let state = self.lock();
        if let Some(id) = &state.session_id {
            req = req.header(SESSION_HEADER, id);
        }
        if let Some(v) = version_header(&state) {
            req = req.header(VERSION_HEADER, v);
        }
        req
    }
}

/// The version header is sent from 2025-06-18 on (the header does not exist before).
fn version_header(state: &State) -> Option<String> {
    let rev = state.revision.as_deref()?;
    match rev.parse::<Revision>() {
        Ok(r) if r >= Revision::V2025_06_18 => Some(rev.to_owned()),
        Ok(_) => None,
        // An unknown version string: send what was negotiated, verbatim.
        Err(_) => Some(rev.to_owned()),
    }
}

pub(crate) fn record_headers(headers: &HeaderMap, options: &HttpOptions) -> Vec<(String, String)> {
    headers
        .iter()
        .map(|(k, v)| {
            let value = String::from_utf8_lossy(v.as_bytes()).into_owned();
            let value = if matches!(
                k.as_str(),
                "authorization" | "proxy-authorization" | "cookie"
            ) {
                "[REDACTED]".to_owned()
            } else {
                options.redact(&value)
            };
            (k.as_str().to_owned(), value)
        })
        .collect()
}

/// The HTTP client every exchange uses: no redirects, no proxies (targets are loopback).
pub(crate) fn client(options: &HttpOptions) -> Result<reqwest::Client, HttpError> {
    super::install_crypto_provider();
    let mut builder = reqwest::Client::builder()
        .connect_timeout(options.timeout)
        .redirect(reqwest::redirect::Policy::none())
        .no_proxy();
    if let Some(pem) = &options.ca_pem {
        let certs = reqwest::Certificate::from_pem_bundle(pem)
            .map_err(|e| HttpError::Client(format!("--cacert: {}", error_chain(&e))))?;
        builder = builder.tls_certs_merge(certs);
    }
    builder
        .build()
        .map_err(|e| HttpError::Client(error_chain(&e)))
}

/// A Streamable HTTP connection to one server session.
#[derive(Debug)]
pub struct HttpTransport {
    handle: HttpHandle,
    tx: Option<mpsc::Sender<Inbound>>,
    inbound: mpsc::Receiver<Inbound>,
    tasks: Vec<JoinHandle<()>>,
    /// 2026-07-28 requests in flight that mcpcheck can cancel by closing their stream, by
    /// request id (as JSON text).
    cancellable: HashMap<String, Cancellable>,
    /// Whether to open the standalone GET stream after the handshake.
    open_get: bool,
}

/// The exchange of a 2026-07-28 request, which mcpcheck cancels by closing its SSE stream
/// (basic/patterns/cancellation#transport-specific-cancellation).
#[derive(Debug)]
struct Cancellable {
    close: oneshot::Sender<()>,
    task: JoinHandle<()>,
}

/// Why a stream's reader stopped on mcpcheck's side.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum ClientClose {
    /// The session cancelled the request.
    Cancelled,
    /// The transport shut down (or was dropped) with the stream still open.
    Shutdown,
}

impl HttpTransport {
    pub fn new(options: HttpOptions) -> Result<Self, HttpError> {
        let client = client(&options)?;
        let (tx, inbound) = mpsc::channel(INBOUND_CAPACITY);
        Ok(HttpTransport {
            handle: HttpHandle {
                client,
                options: Arc::new(options),
                state: Arc::new(Mutex::new(State::default())),
            },
            tx: Some(tx),
            inbound,
            tasks: Vec::new(),
            cancellable: HashMap::new(),
            open_get: true,
        })
    }

    pub fn handle(&self) -> HttpHandle {
        self.handle.clone()
    }

    /// Builds a request with the common headers, the session id and the version header.
    fn request(&self, method: reqwest::Method, accept: &str) -> reqwest::RequestBuilder {
        self.handle.request(method, accept)
    }

    /// POSTs one body. `strict`: a request answered without any message fails the send
    /// (raw bytes are exempt: an HTTP error status is a valid answer to malformed input).
    async fn post(&mut self, body: Vec<u8>, strict: bool) -> Result<(), super::TransportError> {
        let tx = self.tx.clone().ok_or_else(|| {
            super::TransportError::InputClosed(std::io::ErrorKind::BrokenPipe.into())
        })?;
        let parsed: Option<Value> = serde_json::from_slice(&body).ok();
        if let Some(open) = parsed.as_ref().and_then(|m| self.cancelled_stream(m)) {
            // 2026-07-28 basic/patterns/cancellation#transport-specific-cancellation: over
            // Streamable HTTP "closing the SSE response stream is the cancellation signal"
            // and "no notifications/cancelled message is required or expected".
            let _ = open.close.send(());
            let mut task = open.task;
            if tokio::time::timeout(CLOSE_WAIT, &mut task).await.is_err() {
                task.abort();
            }
            return Ok(());
        }
        let is_initialize = parsed
            .as_ref()
            .is_some_and(|v| v.get("method").and_then(Value::as_str) == Some("initialize"));
        let is_initialized_note = parsed.as_ref().is_some_and(|v| {
            v.get("method").and_then(Value::as_str) == Some("notifications/initialized")
        });
        let is_request = parsed
            .as_ref()
            .is_some_and(|v| v.get("method").is_some() && v.get("id").is_some());
        let stateless = parsed
            .as_ref()
            .and_then(|m| stateless_headers(m, self.handle.options.stateless_version.as_deref()));
        if is_initialize {
            let mut s = self.handle.lock();
            s.initialize_id = parsed.as_ref().and_then(|v| v.get("id").cloned());
            // A new handshake starts a new session.
            s.session_id = None;
            s.revision = None;
        }
        let mut req = self
            .request(reqwest::Method::POST, POST_ACCEPT)
            .header(reqwest::header::CONTENT_TYPE, "application/json")
            .body(body);
        let is_stateless = stateless.is_some();
        for (name, value) in stateless.into_iter().flatten() {
            req = req.header(name, value);
        }
        let (head_tx, head_rx) = oneshot::channel();
        let handle = self.handle.clone();
        let awaited = parsed
            .as_ref()
            .filter(|_| is_request)
            .and_then(|v| v.get("id").cloned());
        // A 2026-07-28 request (it carries the request metadata headers) can be cancelled
        // by closing its stream; a listen's stream carries no response.
        let cancel = awaited
            .as_ref()
            .filter(|_| is_stateless)
            .map(|id| (id.to_string(), oneshot::channel()));
        let listen = parsed
            .as_ref()
            .is_some_and(|v| v.get("method").and_then(Value::as_str) == Some(LISTEN));
        let mut track = StreamTrack::new(awaited);
        track.listen = listen && is_request;
        let (close_tx, close_rx) = match cancel {
            Some((key, (close_tx, close_rx))) => (Some((key, close_tx)), Some(close_rx)),
            None => (None, None),
        };
        track.close = close_rx;
        let task = tokio::spawn(exchange(
            handle,
            req,
            tx,
            Some(head_tx),
            is_initialize,
            track,
        ));
        match close_tx {
            Some((key, close)) => {
                self.cancellable.retain(|_, c| !c.task.is_finished());
                if let Some(old) = self.cancellable.insert(key, Cancellable { close, task }) {
                    // A reused id: the earlier exchange keeps running, uncancellable.
                    self.tasks.push(old.task);
                }
            }
            None => self.tasks.push(task),
        }
        let head = tokio::time::timeout(HEAD_WAIT, head_rx).await;
        match head {
            Ok(Ok(Head::Failed(error))) => Err(super::TransportError::Http(error)),
            Ok(Ok(Head::NoHeaders(after))) => Err(super::TransportError::NoResponseHeaders(after)),
            // A request whose complete answer held no message will never be answered:
            // say so now rather than let the session wait out its timeout.
            Ok(Ok(Head::Body {
                status,
                messages: 0,
            })) if is_request && strict => Err(super::TransportError::Rejected { status }),
            Ok(Ok(Head::Body { status, .. })) if status == 202 && is_initialized_note => {
                if self.open_get {
                    self.open_get_stream();
                }
                Ok(())
            }
            _ => Ok(()),
        }
    }

    /// The open stream a `notifications/cancelled` message cancels, taken out of the map:
    /// only 2026-07-28 requests are tracked, and one whose exchange ended has nothing to
    /// close (its cancellation is then POSTed like any notification).
    fn cancelled_stream(&mut self, message: &Value) -> Option<Cancellable> {
        if message.get("id").is_some()
            || message.get("method").and_then(Value::as_str) != Some("notifications/cancelled")
        {
            return None;
        }
        let key = message.pointer("/params/requestId")?.to_string();
        let open = self.cancellable.remove(&key)?;
        if open.task.is_finished() {
            return None;
        }
        Some(open)
    }

    /// Opens the standalone GET stream for server-initiated messages, once.
    fn open_get_stream(&mut self) {
        {
            let mut s = self.handle.lock();
            if s.get_opened {
                return;
            }
            s.get_opened = true;
        }
        let Some(tx) = self.tx.clone() else { return };
        let req = self.request(reqwest::Method::GET, "text/event-stream");
        let handle = self.handle.clone();
        self.tasks.push(tokio::spawn(exchange(
            handle,
            req,
            tx,
            None,
            false,
            StreamTrack::new(None),
        )));
    }

    /// Disables the standalone GET stream (scenarios that test GET themselves).
    pub fn without_get_stream(mut self) -> Self {
        self.open_get = false;
        self
    }
}

/// Runs one exchange to its end: sends the request, records the response head, then
/// delivers the body's messages. `head` learns whether any HTTP response came. An SSE
/// stream that ends before the response `track` awaits is resumed, unless it is a listen
/// stream or mcpcheck closed it.
async fn exchange(
    handle: HttpHandle,
    req: reqwest::RequestBuilder,
    tx: mpsc::Sender<Inbound>,
    head: Option<oneshot::Sender<Head>>,
    is_initialize: bool,
    mut track: StreamTrack,
) {
    let started = tokio::time::Instant::now();
    let options = handle.options.clone();
    let (client, request) = req.build_split();
    let request = match request {
        Ok(r) => r,
        Err(e) => {
            let error = e.to_string();
            let _ = tx
                .send(Inbound::Http(HttpRecord::Failed {
                    method: "?".into(),
                    url: options.url.to_string(),
                    error: error.clone(),
                }))
                .await;
            if let Some(h) = head {
                let _ = h.send(Head::Failed(error));
            }
            return;
        }
    };
    let method = request.method().to_string();
    let url = request.url().to_string();
    let request_headers = record_headers(request.headers(), &options);
    let response = tokio::time::timeout(options.timeout, client.execute(request)).await;
    let response = match response {
        Ok(Ok(r)) => r,
        Ok(Err(e)) => {
            let error = options.redact(&error_chain(&e));
            let _ = tx
                .send(Inbound::Http(HttpRecord::Failed {
                    method,
                    url,
                    error: error.clone(),
                }))
                .await;
            if let Some(h) = head {
                let _ = h.send(Head::Failed(error));
            }
            return;
        }
        Err(_) => {
            let error = format!("no response headers within {:?}", options.timeout);
            let _ = tx
                .send(Inbound::Http(HttpRecord::Failed {
                    method,
                    url,
                    error: error.clone(),
                }))
                .await;
            if let Some(h) = head {
                let _ = h.send(Head::NoHeaders(options.timeout));
            }
            return;
        }
    };
    let status = response.status().as_u16();
    let response_headers = record_headers(response.headers(), &options);
    if is_initialize && let Some(id) = response.headers().get(SESSION_HEADER) {
        handle.lock().session_id = Some(String::from_utf8_lossy(id.as_bytes()).into_owned());
    }
    let content_type = header_of(&response_headers, "content-type")
        .unwrap_or("")
        .to_ascii_lowercase();
    let sse = content_type.starts_with("text/event-stream");
    if sse {
        if let Some(h) = head {
            let _ = h.send(Head::Streaming);
        }
        let stream_name = {
            let mut s = handle.lock();
            s.streams += 1;
            format!("#{} ({method})", s.streams)
        };
        let _ = tx
            .send(Inbound::Http(HttpRecord::Exchange {
                method,
                url,
                request_headers,
                status,
                response_headers,
                body: None,
            }))
            .await;
        read_sse(
            &handle,
            response.bytes_stream(),
            &stream_name,
            &tx,
            &mut track,
        )
        .await;
        // basic/patterns/subscriptions#graceful-closure (2026-07-28): a listen stream
        // legitimately ends without a response ("an abrupt transport drop, which carries
        // no response"), and one mcpcheck closed was cancelled: neither is resumed.
        if track.awaited.is_some() && !track.listen && track.client_close.is_none() {
            if track.closed {
                closed_before_response(&handle, &stream_name, &tx, &track).await;
            }
            let deadline = started + options.timeout;
            resume(&handle, &stream_name, &tx, &mut track, deadline).await;
        }
        return;
    }
    let body = read_body(response, options.max_frame).await;
    let (text, note) = match &body {
        Ok(b) => (String::from_utf8_lossy(b).into_owned(), None),
        Err(e) => (String::new(), Some(e.clone())),
    };
    let quoted = if text.len() > BODY_QUOTE {
        let mut cut = BODY_QUOTE;
        while !text.is_char_boundary(cut) {
            cut -= 1;
        }
        format!("{}... ({} bytes)", &text[..cut], text.len())
    } else {
        text.clone()
    };
    let _ = tx
        .send(Inbound::Http(HttpRecord::Exchange {
            method: method.clone(),
            url,
            request_headers,
            status,
            response_headers,
            body: (!text.is_empty()).then(|| options.redact(&quoted)),
        }))
        .await;
    let mut messages = 0;
    if let Some(problem) = note {
        let _ = tx
            .send(Inbound::Http(HttpRecord::Invalid {
                context: format!("{method} response body"),
                problem,
            }))
            .await;
        if let Some(h) = head {
            let _ = h.send(Head::Body { status, messages });
        }
        return;
    }
    // A JSON body carries one message (or a batch); an error status may carry a JSON-RPC
    // error without an id. Anything else is only evidence in the transcript.
    if content_type.starts_with("application/json") || (!text.trim().is_empty() && status >= 400) {
        match serde_json::from_str::<Value>(text.trim()) {
            // An HTTP error may carry "a JSON-RPC error response that has no id"
            // (basic/transports): evidence in the transcript, not a message to correlate.
            Ok(value) if status >= 400 && value.get("id").is_none() => {}
            Ok(value) => {
                messages += 1;
                deliver(&handle, value, text.trim(), &tx).await
            }
            Err(e) if content_type.starts_with("application/json") => {
                let _ = tx
                    .send(Inbound::Http(HttpRecord::Invalid {
                        context: format!("{method} response body"),
                        problem: format!("not JSON: {e}"),
                    }))
                    .await;
            }
            Err(_) => {}
        }
    }
    if let Some(h) = head {
        let _ = h.send(Head::Body { status, messages });
    }
}

/// What `send` learns of its exchange.
#[derive(Debug)]
enum Head {
    /// No HTTP response at all.
    Failed(String),
    /// No response headers within the timeout (the server may be wedged, not gone).
    NoHeaders(Duration),
    /// An SSE stream started; messages follow.
    Streaming,
    /// A complete non-stream response carrying `messages` JSON-RPC messages.
    Body { status: u16, messages: usize },
}

/// Reads a whole body, up to `max` bytes.
pub(crate) async fn read_body(response: reqwest::Response, max: usize) -> Result<Vec<u8>, String> {
    let mut stream = response.bytes_stream();
    let mut out = Vec::new();
    while let Some(chunk) = stream.next().await {
        let chunk = chunk.map_err(|e| format!("reading the body failed: {}", error_chain(&e)))?;
        out.extend_from_slice(&chunk);
        if out.len() > max {
            return Err(format!("the body exceeded {max} bytes"));
        }
    }
    Ok(out)
}

/// What mcpcheck knows of one logical SSE stream across its connections.
#[derive(Debug)]
struct StreamTrack {
    /// Id of the request whose response the stream carries; `None` once it arrived (or
    /// for a stream that answers no request).
    awaited: Option<Value>,
    /// The last event id received (the `Last-Event-ID` to resume with).
    last_id: Option<String>,
    /// The server's latest `retry`.
    retry: Option<Duration>,
    /// Event ids received on this stream, to spot a replay of one.
    ids: HashSet<String>,
    /// Reconnections so far (0: the first connection).
    resumes: u32,
    /// The server closed the last connection (rather than it breaking).
    closed: bool,
    /// A 2026-07-28 `subscriptions/listen` stream: notifications only, no response due.
    listen: bool,
    /// Fires (or is dropped) when mcpcheck closes the stream; only 2026-07-28 requests.
    close: Option<oneshot::Receiver<()>>,
    /// Set once mcpcheck closed the stream.
    client_close: Option<ClientClose>,
}

impl StreamTrack {
    fn new(awaited: Option<Value>) -> Self {
        StreamTrack {
            awaited,
            last_id: None,
            retry: None,
            ids: HashSet::new(),
            resumes: 0,
            closed: false,
            listen: false,
            close: None,
            client_close: None,
        }
    }
}

/// Reads an SSE stream: each event is recorded, each `message` event's data delivered as
/// a frame. On a resumed connection (`track.resumes > 0`), an event id already received or a
/// response to another request is a violation of basic/transports#resumability-and-redelivery.
/// Generic over the body's chunks, so it can be fed from memory ([`read_sse_chunks`]).
async fn read_sse<B, E>(
    handle: &HttpHandle,
    body: impl futures_util::Stream<Item = Result<B, E>> + Unpin + Send + 'static,
    stream: &str,
    tx: &mpsc::Sender<Inbound>,
    track: &mut StreamTrack,
) where
    B: AsRef<[u8]> + Send + 'static,
    E: std::fmt::Display + Send + 'static,
{
    use eventsource_stream::Eventsource;
    let max = handle.options.max_frame;
    let mut events =
        super::sse_body::sse_body(body, super::sse_body::event_limit(max)).eventsource();
    // The SSE last-event-id buffer persists: an event without an `id` field repeats the
    // previous one, which is no new id.
    let mut previous = String::new();
    let reason = loop {
        let next = match track.close.as_mut() {
            Some(close) => tokio::select! {
                ev = events.next() => ev,
                signal = close => {
                    let why = if signal.is_ok() { ClientClose::Cancelled } else { ClientClose::Shutdown };
                    track.client_close = Some(why);
                    track.close = None;
                    break client_close_reason(why, track);
                }
            },
            None => events.next().await,
        };
        match next {
            None if track.listen && track.awaited.is_some() => {
                track.closed = true;
                break "the server closed the listen stream without a subscriptions/listen response (2026-07-28 basic/patterns/subscriptions#graceful-closure: an abrupt end, not a graceful one)".to_owned();
            }
            None => {
                track.closed = true;
                break "the server closed the stream".to_owned();
            }
            Some(Err(e)) => break format!("broken stream: {e}"),
            Some(Ok(ev)) => {
                let record = HttpRecord::SseEvent {
                    stream: stream.to_owned(),
                    id: ev.id.clone(),
                    event: ev.event.clone(),
                    retry_ms: ev.retry.map(|d| d.as_millis() as u64),
                    data_bytes: ev.data.len(),
                    data: None,
                };
                if tx.send(Inbound::Http(record)).await.is_err() {
                    return;
                }
                if ev.retry.is_some() {
                    track.retry = ev.retry;
                }
                if !ev.id.is_empty() && ev.id != previous {
                    check_event_id(handle, stream, &ev.id, track, tx).await;
                    track.last_id = Some(ev.id.clone());
                }
                previous = ev.id.clone();
                // Only `message` events carry messages; an empty one primes resumption
                // (spec 2025-11-25: "an event ID and an empty data field").
                if ev.event != "message" || ev.data.trim().is_empty() {
                    continue;
                }
                if ev.data.len() > max {
                    let _ = tx
                        .send(Inbound::Http(HttpRecord::Invalid {
                            context: format!("SSE {stream}"),
                            problem: format!(
                                "an event of {} bytes exceeds the frame limit",
                                ev.data.len()
                            ),
                        }))
                        .await;
                    continue;
                }
                match serde_json::from_str::<Value>(&ev.data) {
                    Ok(value) => {
                        check_replayed_message(&value, stream, track, tx).await;
                        deliver(handle, value, &ev.data, tx).await
                    }
                    Err(e) => {
                        let _ = tx
                            .send(Inbound::Http(HttpRecord::Invalid {
                                context: format!("SSE {stream}"),
                                problem: format!(
                                    "event data is not a JSON-RPC message ({e}): {}",
                                    crate::session::quote(&ev.data, 200)
                                ),
                            }))
                            .await;
                    }
                }
            }
        }
    };
    let _ = tx
        .send(Inbound::Http(HttpRecord::StreamEnd {
            stream: stream.to_owned(),
            reason,
        }))
        .await;
}

/// The transcript's reason when mcpcheck closes a stream (dropping the response closes the
/// connection, which is what the server sees).
fn client_close_reason(why: ClientClose, track: &StreamTrack) -> String {
    let what = if track.listen {
        "the subscription"
    } else {
        "the request"
    };
    match why {
        ClientClose::Cancelled => format!(
            "mcpcheck closed the stream to cancel {what} (2026-07-28 basic/patterns/cancellation#transport-specific-cancellation)"
        ),
        ClientClose::Shutdown => {
            format!("mcpcheck closed the stream at the end of the session, ending {what}")
        }
    }
}

/// Rule ids of the checks made while reading streams.
const RULE_EVENT_ID_UNIQUE: &str = crate::check::rules::HTTP_SSE_EVENT_ID_UNIQUE.id;
const RULE_REPLAY_SAME_STREAM: &str = crate::check::rules::HTTP_SSE_REPLAY_SAME_STREAM.id;

/// Notes an event id in the session's set; on a resumed stream, an id the stream carried
/// before is an event delivered twice ("replay messages that would have been sent after the
/// last event ID"). Ids shared between streams are judged by the `http/sse-event-ids-unique`
/// scenario, not here, so each rule fails in one place.
async fn check_event_id(
    handle: &HttpHandle,
    stream: &str,
    id: &str,
    track: &mut StreamTrack,
    tx: &mpsc::Sender<Inbound>,
) {
    handle.note_event_id(id, stream);
    let fresh = track.ids.insert(id.to_owned());
    if track.resumes > 0 && !fresh {
        violation(tx, RULE_EVENT_ID_UNIQUE, format!(
                    "after resuming stream {stream} with Last-Event-ID, the server replayed event {id:?}, which it had delivered before"
                )).await;
    }
}

/// Hands the session a broken transport rule, as an [`HttpRecord::Violation`].
async fn violation(tx: &mpsc::Sender<Inbound>, rule: &str, problem: String) {
    let _ = tx
        .send(Inbound::Http(HttpRecord::Violation {
            rule: rule.into(),
            problem,
        }))
        .await;
}

/// Before 2025-11-25, "the server SHOULD NOT close the SSE stream before sending a
/// JSON-RPC response" (basic/transports#sending-messages-to-the-server); 2025-11-25 lets it
/// close the connection after an event id, for the client to poll.
async fn closed_before_response(
    handle: &HttpHandle,
    stream: &str,
    tx: &mpsc::Sender<Inbound>,
    track: &StreamTrack,
) {
    let revision = handle.lock().revision.clone();
    let Some(revision) = revision.and_then(|r| r.parse::<Revision>().ok()) else {
        return;
    };
    let Some(id) = &track.awaited else { return };
    if revision >= Revision::V2025_11_25 {
        return;
    }
    violation(
        tx,
        crate::check::rules::HTTP_SSE_CLOSED_BEFORE_RESPONSE.id,
        format!(
            "the server closed SSE stream {stream} before sending the response to request {id}; in {revision} it SHOULD NOT (polling a closed stream came in 2025-11-25)"
        ),
    )
    .await;
}

/// On a resumed stream, a response to another request comes from another stream
/// ("MUST NOT replay messages that would have been delivered on a different stream").
async fn check_replayed_message(
    value: &Value,
    stream: &str,
    track: &mut StreamTrack,
    tx: &mpsc::Sender<Inbound>,
) {
    let is_response = value.get("result").is_some() || value.get("error").is_some();
    let Some(id) = value.get("id").filter(|_| is_response) else {
        return;
    };
    if track.awaited.as_ref() == Some(id) {
        track.awaited = None;
    } else if track.resumes > 0 {
        violation(tx, RULE_REPLAY_SAME_STREAM, format!(
                    "after resuming stream {stream} with Last-Event-ID, the server sent the response to request {id}, which was not sent on that stream"
                )).await;
    }
}

/// Resumes a stream that ended before its response: GET with `Last-Event-ID` after the
/// server's `retry` (the client "MUST respect the retry field", 2025-11-25), at most
/// [`MAX_RESUMES`] times and not past `deadline`. Without an event id there is nothing to
/// resume from, and the session's own timeout reports the missing response.
async fn resume(
    handle: &HttpHandle,
    stream: &str,
    tx: &mpsc::Sender<Inbound>,
    track: &mut StreamTrack,
    deadline: tokio::time::Instant,
) {
    // 2026-07-28: "Resumable SSE streams via Last-Event-ID are not supported."
    if !handle.resumable() {
        return;
    }
    while track.awaited.is_some() {
        let Some(last) = track.last_id.clone() else {
            return;
        };
        let end = |reason: String| HttpRecord::StreamEnd {
            stream: stream.to_owned(),
            reason,
        };
        if track.resumes >= MAX_RESUMES {
            let _ = tx
                .send(Inbound::Http(end(format!(
                    "mcpcheck gave up resuming after {MAX_RESUMES} reconnections without the response"
                ))))
                .await;
            return;
        }
        let wait = track.retry.unwrap_or(DEFAULT_RETRY);
        if wait > MAX_RETRY || tokio::time::Instant::now() + wait >= deadline {
            let _ = tx
                .send(Inbound::Http(end(format!(
                    "not resumed: a wait of {} ms would pass the request timeout",
                    wait.as_millis()
                ))))
                .await;
            return;
        }
        track.resumes += 1;
        let _ = tx
            .send(Inbound::Http(HttpRecord::Resume {
                stream: stream.to_owned(),
                last_event_id: last.clone(),
                attempt: track.resumes,
                wait_ms: wait.as_millis() as u64,
            }))
            .await;
        tokio::time::sleep(wait).await;
        let req = handle
            .request(reqwest::Method::GET, "text/event-stream")
            .header("last-event-id", last);
        let (client, request) = req.build_split();
        let Ok(request) = request else { return };
        let method = request.method().to_string();
        let url = request.url().to_string();
        let request_headers = record_headers(request.headers(), &handle.options);
        let response = match tokio::time::timeout_at(deadline, client.execute(request)).await {
            Ok(Ok(r)) => r,
            Ok(Err(e)) => {
                let _ = tx
                    .send(Inbound::Http(HttpRecord::Failed {
                        method,
                        url,
                        error: handle.options.redact(&error_chain(&e)),
                    }))
                    .await;
                continue;
            }
            Err(_) => {
                let _ = tx
                    .send(Inbound::Http(HttpRecord::Failed {
                        method,
                        url,
                        error: "no response headers before the request timeout".into(),
                    }))
                    .await;
                return;
            }
        };
        let status = response.status().as_u16();
        let response_headers = record_headers(response.headers(), &handle.options);
        let sse = header_of(&response_headers, "content-type")
            .is_some_and(|ct| ct.to_ascii_lowercase().starts_with("text/event-stream"));
        if !sse || status != 200 {
            // 405: the server offers no stream to resume (allowed); anything else is
            // judged by the `http/*` scenarios.
            let body = read_body(response, BODY_QUOTE)
                .await
                .ok()
                .map(|b| handle.options.redact(&String::from_utf8_lossy(&b)))
                .filter(|b| !b.is_empty());
            let _ = tx
                .send(Inbound::Http(HttpRecord::Exchange {
                    method,
                    url,
                    request_headers,
                    status,
                    response_headers,
                    body,
                }))
                .await;
            return;
        }
        let _ = tx
            .send(Inbound::Http(HttpRecord::Exchange {
                method,
                url,
                request_headers,
                status,
                response_headers,
                body: None,
            }))
            .await;
        if tokio::time::timeout_at(
            deadline,
            read_sse(handle, response.bytes_stream(), stream, tx, track),
        )
        .await
        .is_err()
        {
            let _ = tx
                .send(Inbound::Http(end(
                    "mcpcheck stopped reading at the request timeout".into(),
                )))
                .await;
            return;
        }
    }
}

/// Runs the SSE reader over a body that arrived in `chunks` and returns what the session
/// would receive, in order (event records, frames, problems, the stream's end). The entry
/// point of the `sse_events` cargo-fuzz target and its proptest twin: the same code as a
/// live stream, without a server.
pub async fn read_sse_chunks(chunks: Vec<Vec<u8>>, max_frame: usize) -> Vec<Inbound> {
    static CLIENT: std::sync::OnceLock<Option<reqwest::Client>> = std::sync::OnceLock::new();
    let Ok(mut options) = HttpOptions::new("http://127.0.0.1:9/mcp") else {
        return Vec::new();
    };
    options.max_frame = max_frame;
    // Never used to connect: building one per call would dominate a fuzzing run.
    let Some(client) = CLIENT.get_or_init(|| client(&options).ok()).clone() else {
        return Vec::new();
    };
    let handle = HttpHandle {
        client,
        options: Arc::new(options),
        state: Arc::new(Mutex::new(State::default())),
    };
    let (tx, mut rx) = mpsc::channel(INBOUND_CAPACITY);
    let body =
        futures_util::stream::iter(chunks.into_iter().map(Ok::<_, std::convert::Infallible>));
    let read = async move {
        let mut track = StreamTrack::new(None);
        read_sse(&handle, body, "#1 (POST)", &tx, &mut track).await;
    };
    let collect = async {
        let mut out = Vec::new();
        while let Some(item) = rx.recv().await {
            out.push(item);
        }
        out
    };
    let ((), out) = tokio::join!(read, collect);
    out
}

/// Hands one message to the session, noting the negotiated revision on the way.
pub(crate) async fn deliver(
    handle: &HttpHandle,
    value: Value,
    text: &str,
    tx: &mpsc::Sender<Inbound>,
) {
    {
        let mut s = handle.lock();
        if let Some(init) = &s.initialize_id
            && value.get("id") == Some(init)
            && let Some(v) = value
                .pointer("/result/protocolVersion")
                .and_then(Value::as_str)
        {
            s.revision = Some(v.to_owned());
            s.initialize_id = None;
        }
    }
    let frame = RawFrame {
        offset: 0,
        bytes: text.as_bytes().to_vec(),
        value,
    };
    let _ = tx.send(Inbound::Frame(frame)).await;
}

/// Why an endpoint cannot be tested at all, judged from the records of a failed
/// `initialize`: no HTTP response, a status or content type no MCP endpoint gives, or a
/// demand for credentials. `None` when the server answered like an MCP server (whose
/// failure is then a conformance finding).
pub fn setup_problem<'a>(records: impl IntoIterator<Item = &'a HttpRecord>) -> Option<String> {
    let first = records
        .into_iter()
        .find(|r| matches!(r, HttpRecord::Failed { .. } | HttpRecord::Exchange { .. }))?;
    match first {
        HttpRecord::Failed { url, error, .. } if tls_problem(error) => Some(format!(
            "TLS handshake with {url} failed: {error}; if the server's certificate is self-signed or from a private CA, give that CA with --cacert FILE (PEM)"
        )),
        HttpRecord::Failed { url, error, .. } => Some(format!("cannot reach {url}: {error}")),
        HttpRecord::Exchange {
            method,
            url,
            status,
            response_headers,
            ..
        } => {
            let ct = header_of(response_headers, "content-type").unwrap_or("");
            // The HTTP+SSE transport starts with a GET that must open an SSE stream.
            if method == "GET" {
                let sse = ct.to_ascii_lowercase().starts_with("text/event-stream");
                return (*status != 200 || !sse).then(|| {
                    format!(
                        "{url} answered the GET with {status} ({ct:?}): not an HTTP+SSE endpoint"
                    )
                });
            }
            let ct_lower = ct.to_ascii_lowercase();
            let mcp_type = ct_lower.starts_with("application/json")
                || ct_lower.starts_with("text/event-stream");
            match status {
                401 | 403 => Some(format!(
                    "{url} answered `initialize` with {status}: it needs credentials (--bearer-env VAR or --header \"Authorization: ...\")"
                )),
                404 | 405 => Some(format!(
                    "{url} answered `initialize` with {status}: not an MCP endpoint (is the path right? for a 2024-11-05 HTTP+SSE server give its SSE URL, with --transport auto or sse)"
                )),
                300..=399 => Some(format!(
                    "{url} answered `initialize` with a redirect ({status}); give the final URL"
                )),
                200..=299 if !mcp_type => Some(format!(
                    "{url} answered `initialize` with {status} and content type {ct:?}: not an MCP endpoint"
                )),
                _ => None,
            }
        }
        _ => None,
    }
}

/// Whether a request error is a failed TLS handshake (rustls and webpki wording).
fn tls_problem(error: &str) -> bool {
    let e = error.to_ascii_lowercase();
    e.contains("certificate") || e.contains("tls") || e.contains("handshake")
}

/// An error with its sources, for messages ("error sending request: connection refused").
pub fn error_chain(e: &dyn std::error::Error) -> String {
    let mut text = e.to_string();
    let mut source = e.source();
    while let Some(s) = source {
        let t = s.to_string();
        if !text.contains(&t) {
            text.push_str(": ");
            text.push_str(&t);
        }
        source = s.source();
    }
    text
}

impl Transport for HttpTransport {
    fn send(&mut self, message: Vec<u8>) -> BoxFuture<'_, Result<(), super::TransportError>> {
        Box::pin(self.post(message, true))
    }

    fn send_raw(&mut self, bytes: Vec<u8>) -> BoxFuture<'_, Result<(), super::TransportError>> {
        // Over HTTP, raw bytes are a POST body as given.
        Box::pin(self.post(bytes, false))
    }

    fn recv(&mut self) -> BoxFuture<'_, Option<Inbound>> {
        Box::pin(self.inbound.recv())
    }

    fn shutdown(&mut self) -> BoxFuture<'_, ShutdownReport> {
        Box::pin(async move {
            let start = std::time::Instant::now();
            // Spec: clients SHOULD end the session with DELETE (the server MAY answer 405).
            if self.handle.session_id().is_some()
                && let Some(tx) = self.tx.clone()
            {
                let req = self.request(reqwest::Method::DELETE, POST_ACCEPT);
                // Bounded: a server could answer DELETE with a stream that never ends.
                let wait = self.handle.options.timeout;
                let _ = tokio::time::timeout(
                    wait,
                    exchange(
                        self.handle.clone(),
                        req,
                        tx,
                        None,
                        false,
                        StreamTrack::new(None),
                    ),
                )
                .await;
            }
            // Streams still open (a listen, typically) are closed by mcpcheck, which ends
            // them for the server (basic/patterns/subscriptions#cancellation); their
            // readers record that before the session stops reading.
            // One deadline for all of them: a server that never answered many requests
            // does not stretch the shutdown.
            let deadline = tokio::time::Instant::now() + CLOSE_WAIT;
            let tasks: Vec<JoinHandle<()>> = self
                .cancellable
                .drain()
                .map(|(_, c)| {
                    drop(c.close);
                    c.task
                })
                .collect();
            for mut task in tasks {
                if tokio::time::timeout_at(deadline, &mut task).await.is_err() {
                    task.abort();
                }
            }
            for t in self.tasks.drain(..) {
                t.abort();
            }
            self.tx = None;
            ShutdownReport {
                stage: ShutdownStage::Disconnected,
                exit: None,
                took: start.elapsed(),
            }
        })
    }

    fn stderr(&self) -> Option<&StderrLog> {
        None
    }

    fn describe(&self) -> String {
        self.handle.options.url.to_string()
    }

    fn http(&self) -> Option<HttpHandle> {
        Some(self.handle.clone())
    }
}

impl Drop for HttpTransport {
    fn drop(&mut self) {
        for t in &self.tasks {
            t.abort();
        }
        for c in self.cancellable.values() {
            c.task.abort();
        }
    }
}

/// The request metadata headers of 2026-07-28 (basic/transports/streamable-http#request-metadata)
/// for a request whose `_meta` carries `io.modelcontextprotocol/protocolVersion`:
/// `MCP-Protocol-Version` (the same value), `Mcp-Method`, and `Mcp-Name` where required.
/// Without that `_meta` field, `fallback` (the stateless session's version) is used;
/// handshake-era sessions have neither and get `None`.
pub fn stateless_headers(
    message: &Value,
    fallback: Option<&str>,
) -> Option<Vec<(&'static str, String)>> {
    message.get("id")?;
    let version = message
        .pointer("/params/_meta/io.modelcontextprotocol~1protocolVersion")
        .and_then(Value::as_str)
        .or(fallback)?;
    let method = message.get("method")?.as_str()?;
    let mut headers = vec![
        (VERSION_HEADER, header_value(version)),
        (METHOD_HEADER, header_value(method)),
    ];
    let name = match method {
        "tools/call" | "prompts/get" => message.pointer("/params/name"),
        "resources/read" => message.pointer("/params/uri"),
        _ => None,
    };
    if let Some(name) = name.and_then(Value::as_str) {
        headers.push((NAME_HEADER, header_value(name)));
    }
    Some(headers)
}

/// A header value as 2026-07-28 "Value Encoding" says: as-is when it is visible ASCII,
/// space or tab without surrounding whitespace, else `=?base64?...?=` (also for a plain
/// value that looks like that sentinel).
fn header_value(value: &str) -> String {
    use base64::Engine as _;
    let plain = value
        .bytes()
        .all(|b| b == b'\t' || (0x20..=0x7e).contains(&b))
        && value.trim() == value
        && !(value.starts_with("=?base64?") && value.ends_with("?="));
    if plain {
        value.to_owned()
    } else {
        format!(
            "=?base64?{}?=",
            base64::engine::general_purpose::STANDARD.encode(value)
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn stateless_request_headers_mirror_the_body() {
        let meta = serde_json::json!({ "io.modelcontextprotocol/protocolVersion": "2026-07-28" });
        let call = serde_json::json!({ "jsonrpc": "2.0", "id": 1, "method": "tools/call",
            "params": { "name": "get_weather", "_meta": meta } });
        assert_eq!(
            stateless_headers(&call, None).unwrap(),
            vec![
                (VERSION_HEADER, "2026-07-28".to_owned()),
                (METHOD_HEADER, "tools/call".to_owned()),
                (NAME_HEADER, "get_weather".to_owned()),
            ]
        );
        let read = serde_json::json!({ "jsonrpc": "2.0", "id": 2, "method": "resources/read",
            "params": { "uri": "file:///a b", "_meta": meta } });
        assert_eq!(stateless_headers(&read, None).unwrap()[2].1, "file:///a b");
        let list = serde_json::json!({ "jsonrpc": "2.0", "id": 3, "method": "tools/list",
            "params": { "_meta": meta } });
        assert_eq!(stateless_headers(&list, None).unwrap().len(), 2);
        // Handshake-era requests and notifications get none.
        let old = serde_json::json!({ "jsonrpc": "2.0", "id": 4, "method": "tools/list" });
        assert_eq!(stateless_headers(&old, None), None);
        // A stateless session sends the headers even when a scenario drops the _meta field.
        assert_eq!(
            stateless_headers(&old, Some("2026-07-28")).unwrap()[0],
            (VERSION_HEADER, "2026-07-28".to_owned())
        );
        let note =
            serde_json::json!({ "jsonrpc": "2.0", "method": "x", "params": { "_meta": meta } });
        assert_eq!(stateless_headers(&note, None), None);
    }

    #[test]
    fn header_values_are_encoded_like_the_spec_examples() {
        assert_eq!(header_value("us-west1"), "us-west1");
        assert_eq!(
            header_value("Hello, 世界"),
            "=?base64?SGVsbG8sIOS4lueVjA==?="
        );
        assert_eq!(header_value(" padded "), "=?base64?IHBhZGRlZCA=?=");
        assert_eq!(header_value("line1\nline2"), "=?base64?bGluZTEKbGluZTI=?=");
        assert_eq!(
            header_value("=?base64?literal?="),
            "=?base64?PT9iYXNlNjQ/bGl0ZXJhbD89?="
        );
    }

    #[test]
    fn only_loopback_urls() {
        assert!(HttpOptions::new("http://127.0.0.1:1/mcp").is_ok());
        assert!(HttpOptions::new("http://[::1]:1/mcp").is_ok());
        assert!(HttpOptions::new("http://localhost:1/mcp").is_ok());
        assert!(matches!(
            HttpOptions::new("http://example.com/mcp"),
            Err(HttpError::NotLoopback { .. })
        ));
        assert!(matches!(
            HttpOptions::new("http://10.0.0.1/mcp"),
            Err(HttpError::NotLoopback { .. })
        ));
        assert!(matches!(
            HttpOptions::new("ftp://127.0.0.1/x"),
            Err(HttpError::Scheme { .. })
        ));
    }

    #[test]
    fn redacts_every_occurrence() {
        let s = vec!["s3cret".to_owned()];
        assert_eq!(redact("a s3cret b s3cret", &s), "a [REDACTED] b [REDACTED]");
        assert_eq!(redact("nothing", &s), "nothing");
    }

    #[test]
    fn version_header_from_2025_06_18() {
        let mut s = State::default();
        assert_eq!(version_header(&s), None);
        s.revision = Some("2025-03-26".into());
        assert_eq!(version_header(&s), None);
        s.revision = Some("2025-06-18".into());
        assert_eq!(version_header(&s).as_deref(), Some("2025-06-18"));
    }
}

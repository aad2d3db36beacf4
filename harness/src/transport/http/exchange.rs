//! The Streamable HTTP transport itself: every outbound message is one POST, and what comes
//! back (a JSON body, an SSE stream, `202 Accepted`) becomes [`Inbound`] items in order.

use std::collections::HashMap;
use std::time::Duration;

use serde_json::Value;
use tokio::sync::{mpsc, oneshot};
use tokio::task::JoinHandle;

use super::body::{deliver, note_error_status, read_body};
use super::diagnose::error_chain;
use super::handle::{HttpHandle, client};
use super::headers::{POST_ACCEPT, SESSION_HEADER, header_of, record_headers, stateless_headers};
use super::record::{HttpRecord, StreamAnomaly};
use super::resume::{closed_before_response, resume};
use super::sse_stream::{StreamTrack, read_sse};
use super::{BODY_QUOTE, HttpError, HttpOptions, INBOUND_CAPACITY};
use crate::protocol::text::clip;
use crate::transport::{
    BoxFuture, Inbound, Quiet, ShutdownReport, ShutdownStage, StderrLog, Transport, TransportError,
};

/// How long `send` waits for response headers before letting the exchange finish in the
/// background: long enough to keep messages in order, short enough not to serialize
/// requests a slow server answers with a JSON body.
const HEAD_WAIT: Duration = Duration::from_secs(2);

/// How long closing a stream may take to be recorded (its reader notices at once).
const CLOSE_WAIT: Duration = Duration::from_millis(500);
/// The 2026-07-28 method whose response stream is a long-lived notification stream.
const LISTEN: &str = "subscriptions/listen";

/// A Streamable HTTP connection to one server session.
#[derive(Debug)]
pub struct HttpTransport {
    handle: HttpHandle,
    tx: Option<mpsc::Sender<Inbound>>,
    inbound: mpsc::Receiver<Inbound>,
    tasks: Vec<JoinHandle<()>>,
    /// The standalone GET stream's exchange, once opened, and what its response head was.
    get_stream: Option<GetStream>,
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
    /// A `subscriptions/listen`: its stream carries notifications for as long as it is open.
    listen: bool,
}

/// The standalone GET stream's exchange.
#[derive(Debug)]
struct GetStream {
    task: JoinHandle<()>,
    /// Its response head, until it is known.
    head: Option<oneshot::Receiver<Head>>,
    /// The server answered with an SSE stream.
    streaming: bool,
}

impl GetStream {
    /// Whether the server may still send on it; `None` while its answer is not known.
    fn open(&mut self) -> Option<bool> {
        if let Some(head) = &mut self.head {
            match head.try_recv() {
                Ok(h) => {
                    self.streaming = matches!(h, Head::Streaming);
                    self.head = None;
                }
                Err(oneshot::error::TryRecvError::Closed) => self.head = None,
                Err(oneshot::error::TryRecvError::Empty) if !self.task.is_finished() => {
                    return None;
                }
                Err(oneshot::error::TryRecvError::Empty) => self.head = None,
            }
        }
        Some(self.streaming && !self.task.is_finished())
    }
}

impl HttpTransport {
    /// A transport for `options`; fails on a URL that is not loopback, or a bad client setting.
    pub fn new(options: HttpOptions) -> Result<Self, HttpError> {
        let client = client(&options)?;
        let (tx, inbound) = mpsc::channel(INBOUND_CAPACITY);
        Ok(HttpTransport {
            handle: HttpHandle::new(client, options),
            tx: Some(tx),
            inbound,
            tasks: Vec::new(),
            get_stream: None,
            cancellable: HashMap::new(),
            open_get: true,
        })
    }

    /// A handle on the transport's state, for raw exchanges beside it.
    pub fn handle(&self) -> HttpHandle {
        self.handle.clone()
    }

    /// Builds a request with the common headers, the session id and the version header.
    fn request(&self, method: reqwest::Method, accept: &str) -> reqwest::RequestBuilder {
        self.handle.request(method, accept)
    }

    /// POSTs one body. `strict`: a request answered without any message fails the send
    /// (raw bytes are exempt: an HTTP error status is a valid answer to malformed input).
    async fn post(&mut self, body: Vec<u8>, strict: bool) -> Result<(), TransportError> {
        let tx = self
            .tx
            .clone()
            .ok_or_else(|| TransportError::InputClosed(std::io::ErrorKind::BrokenPipe.into()))?;
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
        let track_listen = track.listen;
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
                let open = Cancellable {
                    close,
                    task,
                    listen: track_listen,
                };
                if let Some(old) = self.cancellable.insert(key, open) {
                    // A reused id: the earlier exchange keeps running, uncancellable.
                    self.tasks.push(old.task);
                }
            }
            None => self.tasks.push(task),
        }
        let head = tokio::time::timeout(HEAD_WAIT, head_rx).await;
        match head {
            Ok(Ok(Head::Failed(error))) => Err(error),
            // A request whose complete answer held no message will never be answered:
            // say so now rather than let the session wait out its timeout.
            Ok(Ok(Head::Body {
                status,
                messages: 0,
            })) if is_request && strict => Err(TransportError::Rejected { status }),
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
        let (head_tx, head) = oneshot::channel();
        let task = tokio::spawn(exchange(
            handle,
            req,
            tx,
            Some(head_tx),
            false,
            StreamTrack::new(None),
        ));
        self.get_stream = Some(GetStream {
            task,
            head: Some(head),
            streaming: false,
        });
    }

    /// Disables the standalone GET stream (a test that serves one POST and nothing else).
    #[cfg(test)]
    pub(crate) fn without_get_stream(mut self) -> Self {
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
    let (response, record) = match send(&handle, req, &tx).await {
        Ok(sent) => sent,
        Err(failure) => {
            if let Some(h) = head {
                let _ = h.send(Head::Failed(failure));
            }
            return;
        }
    };
    if is_initialize && let Some(id) = response.headers().get(SESSION_HEADER) {
        handle.lock().session_id = Some(String::from_utf8_lossy(id.as_bytes()).into_owned());
    }
    let content_type = record.declared_type().to_ascii_lowercase();
    if content_type.starts_with("text/event-stream") {
        if let Some(h) = head {
            let _ = h.send(Head::Streaming);
        }
        let stream_name = {
            let mut s = handle.lock();
            s.streams += 1;
            format!("#{} ({})", s.streams, record.method)
        };
        track.status = record.status;
        let unbuffered = response
            .headers()
            .get("x-accel-buffering")
            .is_some_and(|v| v.as_bytes().eq_ignore_ascii_case(b"no"));
        let first_buffered =
            !unbuffered && !std::mem::replace(&mut handle.lock().buffering_noted, true);
        let _ = tx.send(Inbound::Http(record.into_record(None))).await;
        if first_buffered {
            let anomaly = StreamAnomaly::SseBufferable {
                stream: stream_name.clone(),
            };
            let _ = tx.send(Inbound::Http(HttpRecord::Anomaly(anomaly))).await;
        }
        stream(&handle, response, &stream_name, &tx, &mut track, started).await;
        return;
    }
    let body = read_body(response, handle.options.max_frame).await;
    let (text, note) = match &body {
        Ok(b) => (String::from_utf8_lossy(b).into_owned(), None),
        Err(e) => (String::new(), Some(e.clone())),
    };
    let quoted = clip(&text, BODY_QUOTE);
    let quoted = (!text.is_empty()).then(|| handle.options.redact(&quoted));
    let (method, status) = (record.method.clone(), record.status);
    let declared_type = record.declared_type().to_owned();
    let _ = tx.send(Inbound::Http(record.into_record(quoted))).await;
    let delivered = match note {
        Some(problem) => {
            let _ = tx
                .send(Inbound::Http(HttpRecord::Invalid {
                    context: format!("{method} response body"),
                    problem,
                }))
                .await;
            Delivered::default()
        }
        None => {
            let body = Body {
                method: &method,
                status,
                declared_type: &declared_type,
                content_type: &content_type,
                text: text.trim(),
            };
            body.deliver(&handle, track.awaited.as_ref(), &tx).await
        }
    };
    // A request's response comes on its own POST's answer (basic/transports#sending-
    // messages-to-the-server); a complete JSON answer without it means none will come.
    if let Some(id) = track.awaited.take()
        && !delivered.answered
    {
        let why = format!("was answered with HTTP {status} and no response to request {id}");
        let _ = tx.send(Inbound::Unanswered { id, why }).await;
    }
    if let Some(h) = head {
        let messages = delivered.count;
        let _ = h.send(Head::Body { status, messages });
    }
}

/// Whether a message (or batch) holds the response to request `id`.
fn answers(message: &Value, id: &Value) -> bool {
    let is_answer = |m: &Value| {
        m.get("id") == Some(id) && (m.get("result").is_some() || m.get("error").is_some())
    };
    match message {
        Value::Array(items) => items.iter().any(is_answer),
        message => is_answer(message),
    }
}

/// What a complete body delivered.
#[derive(Clone, Copy, Debug, Default)]
struct Delivered {
    /// JSON-RPC messages (a batch counts once).
    count: usize,
    /// The response to the request the POST carried was among them.
    answered: bool,
}

/// An exchange's request and response head, as its record will show them.
struct Exchanged {
    method: String,
    url: String,
    request_headers: Vec<(String, String)>,
    status: u16,
    response_headers: Vec<(String, String)>,
}

impl Exchanged {
    /// The response's `Content-Type` as the server wrote it (empty when it wrote none).
    fn declared_type(&self) -> &str {
        header_of(&self.response_headers, "content-type").unwrap_or("")
    }

    fn into_record(self, body: Option<String>) -> HttpRecord {
        HttpRecord::Exchange {
            method: self.method,
            url: self.url,
            request_headers: self.request_headers,
            status: self.status,
            response_headers: self.response_headers,
            body,
        }
    }
}

/// Sends the request and waits, up to the timeout, for the response head. A request that
/// got no response is recorded, and its failure returned for `send` to be told.
async fn send(
    handle: &HttpHandle,
    req: reqwest::RequestBuilder,
    tx: &mpsc::Sender<Inbound>,
) -> Result<(reqwest::Response, Exchanged), TransportError> {
    let failed = |method: String, url: String, error: String, tls: bool| async move {
        let _ = tx
            .send(Inbound::Http(HttpRecord::Failed {
                method,
                url,
                error,
                tls,
            }))
            .await;
    };
    let options = handle.options();
    let (_, request) = req.build_split();
    let request = match request {
        Ok(r) => r,
        Err(e) => {
            let error = e.to_string();
            failed("?".into(), options.url.to_string(), error.clone(), false).await;
            return Err(TransportError::Http(error));
        }
    };
    let method = request.method().to_string();
    let url = request.url().to_string();
    let request_headers = record_headers(request.headers(), options);
    let sent = handle.client().execute(request);
    let response = match tokio::time::timeout(options.timeout, sent).await {
        Ok(Ok(r)) => r,
        Ok(Err(e)) => {
            let error = options.redact(&error_chain(&e));
            failed(method, url, error.clone(), e.is_tls_failure()).await;
            return Err(TransportError::Http(error));
        }
        Err(_) => {
            let error = format!("no response headers within {:?}", options.timeout);
            failed(method, url, error, false).await;
            return Err(TransportError::NoResponseHeaders(options.timeout));
        }
    };
    options.reached.mark();
    let exchanged = Exchanged {
        method,
        url,
        request_headers,
        status: response.status().as_u16(),
        response_headers: record_headers(response.headers(), options),
    };
    Ok((response, exchanged))
}

/// Reads an SSE response to its end, and resumes it when it ended before the response it
/// was awaited for.
async fn stream(
    handle: &HttpHandle,
    response: reqwest::Response,
    stream_name: &str,
    tx: &mpsc::Sender<Inbound>,
    track: &mut StreamTrack,
    started: tokio::time::Instant,
) {
    read_sse(handle, response.bytes_stream(), stream_name, tx, track).await;
    // basic/patterns/subscriptions#graceful-closure (2026-07-28): a listen stream
    // legitimately ends without a response ("an abrupt transport drop, which carries
    // no response"), and one mcpcheck closed was cancelled: neither is resumed.
    if track.awaited.is_some() && !track.listen && track.client_close.is_none() {
        if track.closed {
            closed_before_response(handle, stream_name, tx, track).await;
        }
        let deadline = started + handle.options.timeout;
        resume(handle, stream_name, tx, track, deadline).await;
    }
}

/// A response body that is not a stream, read whole.
struct Body<'a> {
    method: &'a str,
    status: u16,
    /// The `Content-Type` as the server wrote it, and lowercased.
    declared_type: &'a str,
    content_type: &'a str,
    /// The body's text, trimmed.
    text: &'a str,
}

impl Body<'_> {
    /// Delivers the message the body carries, if it carries one, and says how many and
    /// whether it answers request `awaited`.
    async fn deliver(
        &self,
        handle: &HttpHandle,
        awaited: Option<&Value>,
        tx: &mpsc::Sender<Inbound>,
    ) -> Delivered {
        let (status, content_type, text) = (self.status, self.content_type, self.text);
        // A JSON-RPC body under another content type (`text/plain`) breaks a transport
        // rule, which the session judges; its messages are still delivered, so the run
        // goes on. A body that is no JSON-RPC at all (an HTML page) is only evidence.
        let mislabelled = (200..300).contains(&status)
            && !content_type.starts_with("application/json")
            && looks_like_jsonrpc(text);
        if mislabelled {
            let anomaly = StreamAnomaly::WrongContentType {
                content_type: self.declared_type.to_owned(),
            };
            let _ = tx.send(Inbound::Http(HttpRecord::Anomaly(anomaly))).await;
        }
        // A JSON body carries one message (or a batch); an error status may carry a
        // JSON-RPC error without an id. Anything else is only evidence in the transcript.
        if !(mislabelled
            || content_type.starts_with("application/json")
            || (!text.is_empty() && status >= 400))
        {
            return Delivered::default();
        }
        match serde_json::from_str::<Value>(text) {
            // An HTTP error may carry "a JSON-RPC error response that has no id"
            // (basic/transports): evidence in the transcript, not a message to correlate.
            Ok(value) if status >= 400 && value.get("id").is_none() => Delivered::default(),
            Ok(value) => {
                let answered = awaited.is_some_and(|id| answers(&value, id));
                note_error_status(&value, status, false, tx).await;
                deliver(handle, value, text, tx).await;
                Delivered { count: 1, answered }
            }
            Err(e) if content_type.starts_with("application/json") => {
                let _ = tx
                    .send(Inbound::Http(HttpRecord::Invalid {
                        context: format!("{} response body", self.method),
                        problem: format!("not JSON: {e}"),
                    }))
                    .await;
                Delivered::default()
            }
            Err(_) => Delivered::default(),
        }
    }
}

/// Whether a body is a JSON-RPC message or batch (an object, or objects, with `jsonrpc`).
fn looks_like_jsonrpc(text: &str) -> bool {
    let is_message = |v: &Value| v.get("jsonrpc").is_some();
    match serde_json::from_str::<Value>(text) {
        Ok(Value::Array(items)) => !items.is_empty() && items.iter().all(is_message),
        Ok(v) => is_message(&v),
        Err(_) => false,
    }
}

/// What `send` learns of its exchange.
#[derive(Debug)]
pub(super) enum Head {
    /// No HTTP response at all.
    Failed(TransportError),
    /// An SSE stream started; messages follow.
    Streaming,
    /// A complete non-stream response carrying `messages` JSON-RPC messages.
    Body { status: u16, messages: usize },
}

impl Transport for HttpTransport {
    fn send(&mut self, message: Vec<u8>) -> BoxFuture<'_, Result<(), TransportError>> {
        Box::pin(self.post(message, true))
    }

    fn send_raw(&mut self, bytes: Vec<u8>) -> BoxFuture<'_, Result<(), TransportError>> {
        // Over HTTP, raw bytes are a POST body as given.
        Box::pin(self.post(bytes, false))
    }

    fn recv(&mut self) -> BoxFuture<'_, Option<Inbound>> {
        Box::pin(self.inbound.recv())
    }

    /// Every message of an exchange is in the inbound queue before its task ends, so once
    /// every POST's exchange has ended and no stream the server may send on is open, what
    /// the server sent for the messages so far has all arrived
    /// (basic/transports#sending-messages-to-the-server: a server answers a POST on its
    /// own response; #listening-for-messages-from-the-server: only the GET stream, and at
    /// 2026-07-28 a listen, carry what no request asked for).
    fn quiet(&mut self) -> Quiet {
        self.tasks.retain(|t| !t.is_finished());
        let requests_open = !self.tasks.is_empty()
            || self
                .cancellable
                .values()
                .any(|c| !c.listen && !c.task.is_finished());
        if requests_open {
            return Quiet::Unknown;
        }
        let get_open = match self.get_stream.as_mut().map(GetStream::open) {
            None => false,
            Some(None) => return Quiet::Unknown,
            Some(Some(open)) => open,
        };
        let listening = self
            .cancellable
            .values()
            .any(|c| c.listen && !c.task.is_finished());
        if get_open || listening {
            Quiet::Listening
        } else {
            Quiet::Closed
        }
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
            if let Some(get) = self.get_stream.take() {
                get.task.abort();
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

#[cfg(test)]
mod tests {
    use super::*;

    /// A server that takes the connection and never answers: `send` fails with the typed
    /// timeout that callers match on (the fuzzer counts it as a hang, not a crash).
    #[tokio::test]
    async fn no_response_headers_in_time_is_a_typed_timeout() {
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let mut options =
            HttpOptions::new(&format!("http://{}/mcp", listener.local_addr().unwrap())).unwrap();
        options.timeout = Duration::from_millis(200);
        let server = tokio::spawn(async move {
            let (conn, _) = listener.accept().await.unwrap();
            tokio::time::sleep(Duration::from_secs(5)).await;
            drop(conn);
        });
        let mut transport = HttpTransport::new(options).unwrap();
        let ping = br#"{"jsonrpc":"2.0","id":1,"method":"ping"}"#.to_vec();
        let err = transport.send(ping).await.unwrap_err();
        assert!(err.is_response_timeout(), "{err:?}");
        assert_eq!(err.to_string(), "HTTP: no response headers within 200ms");
        server.abort();
    }
}

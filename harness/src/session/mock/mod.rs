//! The server side of a session with a client under test (`mcpcheck client`).
//!
//! Everything the client sends passes [`Mock::next`], over Streamable HTTP or over stdio
//! (lines relayed by `mcpcheck mock`, see [`Wire`]): it is recorded, judged (`intake`:
//! HTTP headers, JSON-RPC, the schema of the revision, the lifecycle order, ids,
//! capabilities), and what needs no decision of the scenario is answered at once
//! (notifications and responses with 202, GET with 405, DELETE with 200). Requests go up
//! to the scenario, which answers each (`answer`: [`Mock::answer`], often with the default
//! answer of [`Serves`]) or holds it open ([`Mock::hold`]: an SSE stream over HTTP) to
//! send the client requests of its own first.

mod answer;
pub mod auth;
mod intake;
mod serves;
mod stateless;

use std::collections::HashMap;
use std::sync::Arc;
use std::time::Instant;

use serde_json::Value;
use tokio::sync::{mpsc, watch};

use super::validate::SchemaRecord;
use crate::check::client::Lifecycle;
use crate::check::client_stateless::{Rounds, VersionRetry};
use crate::outcome::{Direction, Entry, Finding, SchemaStatus};
use crate::protocol::{Message, Request, Revision};
use crate::schema::SchemaStore;
use crate::transport::ExitInfo;
use crate::transport::http::HttpRecord;
use crate::transport::listen::{Arrival, Endpoint, SseEvent};
use crate::transport::relay::{LineConn, RelayListener};
pub use serves::{Answer, CANARY_PATH, ORIGIN_PLACEHOLDER, Serves};

/// The session id the mock assigns at `initialize`.
const SESSION_ID: &str = "mcpcheck-mock-session";

/// What the client did next.
#[derive(Debug)]
pub enum Next {
    /// A message (a request waiting for [`Mock::answer`] or [`Mock::hold`]; a
    /// notification or response, already acknowledged).
    Message(Box<Incoming>),
    /// A GET that resumes a stream the mock closed before its response (see
    /// [`Mock::disconnect`]), waiting for [`Mock::resume`].
    Resume(Box<Resumption>),
    /// The client closed its stdio connection (it will send nothing more).
    Closed,
    /// The client process ended.
    Exited(ExitInfo),
    /// Nothing by the deadline.
    TimedOut,
}

/// Where the client's messages come from.
#[derive(Debug)]
pub enum Wire {
    /// Streamable HTTP: the endpoint the client POSTs to.
    Http(Endpoint),
    /// stdio: the relay socket `mcpcheck mock` connects to, and its lines once it has.
    Stdio {
        /// The socket.
        listener: RelayListener,
        /// The connection, once made.
        conn: Option<LineConn>,
        /// The client closed the connection.
        closed: bool,
    },
}

impl Wire {
    /// A stdio wire listening on `listener`.
    pub fn stdio(listener: RelayListener) -> Self {
        Wire::Stdio {
            listener,
            conn: None,
            closed: false,
        }
    }
}

/// One message from the client.
#[derive(Debug)]
pub struct Incoming {
    /// Its entry in the transcript.
    pub frame: usize,
    /// The message.
    pub message: Message,
    /// The message as JSON, for scenario checks.
    pub value: Value,
    /// Where its answer goes (requests only).
    waiting: Option<Waiting>,
}

/// Where the answer to a client request goes.
#[derive(Debug)]
enum Waiting {
    /// The HTTP request that carried it.
    Http(Arrival),
    /// A line to the client's stdin.
    Line,
}

impl Incoming {
    /// The method of a request or notification.
    pub fn method(&self) -> Option<&str> {
        self.message.method()
    }
}

/// A client request held open as an SSE stream: the mock sends on it, then answers it.
#[derive(Debug)]
pub struct Held {
    request: Request,
    stream: Stream,
}

/// The SSE stream of a held request.
#[derive(Debug)]
enum Stream {
    /// Open: events go out on it.
    Open(mpsc::UnboundedSender<SseEvent>),
    /// stdio: what is sent goes out as lines, whenever the scenario sends it.
    Lines,
    /// Closed by the mock before the response, after an event with `retry`: the client
    /// is to resume it with a GET.
    Closed {
        last_event_id: String,
        closed: Instant,
        retry: std::time::Duration,
    },
}

impl Held {
    /// Whether the mock closed its stream, so the answer waits for a resuming GET.
    pub fn is_closed(&self) -> bool {
        matches!(self.stream, Stream::Closed { .. })
    }
}

/// A GET from the client while a held stream is closed: its resumption.
#[derive(Debug)]
pub struct Resumption {
    /// Its entry in the transcript.
    pub frame: usize,
    last_event_id: Option<String>,
    at: Instant,
    arrival: Arrival,
}

/// A session the mock ended: requests naming it get HTTP 404 until a new `initialize`.
#[derive(Debug)]
struct Expired {
    /// Its id.
    id: String,
    /// The client's first request after the 404 has been judged.
    judged: bool,
}

/// The mock server's side of one session.
#[derive(Debug)]
pub struct Mock {
    revision: Revision,
    serves: Serves,
    schema: SchemaRecord,
    started: Instant,
    transcript: Vec<Entry>,
    findings: Vec<Finding>,
    lifecycle: Lifecycle,
    /// The progress tokens of the client's unanswered requests.
    tokens: crate::check::client::ProgressTokens,
    /// 2026-07-28: the InputRequiredResults awaiting a retry.
    rounds: Rounds,
    /// 2026-07-28: a refused version awaiting the client's retry.
    version_retry: VersionRetry,
    /// Assigned when `initialize` is answered.
    session_id: Option<String>,
    /// The capabilities the client declared in `initialize`.
    client_capabilities: Value,
    /// A session the mock ended with HTTP 404, until the client starts a new one.
    expired: Option<Expired>,
    /// The version the mock answered `initialize` with.
    negotiated: Option<String>,
    /// Requests the mock sent to the client and has no response to yet: id -> method.
    pending: HashMap<String, String>,
    next_id: i64,
    next_event: u64,
    /// A held stream is closed and a GET would resume it.
    resumable: bool,
    /// Lines to the client's stdin (stdio, once connected).
    lines: Option<mpsc::UnboundedSender<String>>,
    /// An auth scenario's authorization server, in front of the MCP endpoint.
    auth: Option<auth::AuthServer>,
}

impl Mock {
    /// A mock speaking `revision` and serving `serves`, validating with `schemas`.
    pub fn new(revision: Revision, serves: Serves, schemas: Arc<SchemaStore>) -> Self {
        Mock {
            revision,
            serves,
            schema: SchemaRecord::new(schemas),
            started: Instant::now(),
            transcript: Vec::new(),
            findings: Vec::new(),
            lifecycle: Lifecycle::default(),
            tokens: Default::default(),
            rounds: Rounds::default(),
            version_retry: VersionRetry::default(),
            session_id: None,
            expired: None,
            client_capabilities: Value::Null,
            negotiated: None,
            pending: HashMap::new(),
            next_id: 0,
            next_event: 0,
            resumable: false,
            lines: None,
            auth: None,
        }
    }

    /// Puts `auth` in front of the MCP endpoint: requests without a token it issued get
    /// its 401, and it answers every other path.
    pub fn protect(&mut self, auth: auth::AuthServer) {
        self.auth = Some(auth);
    }

    /// `text` with every secret the authorization side issued or learned replaced.
    fn redact(&self, text: String) -> String {
        match &self.auth {
            Some(a) => crate::transport::http::redact_owned(text, a.secrets()),
            None => text,
        }
    }

    /// Headers with secrets redacted, including those inside `Authorization: Basic`'s
    /// base64 (a client id and secret).
    fn redact_headers(&self, headers: &[(String, String)]) -> Vec<(String, String)> {
        use base64::Engine;
        let Some(auth) = &self.auth else {
            return headers.to_vec();
        };
        let hides_secret = |v: &str| {
            let Some(encoded) = v.strip_prefix("Basic ") else {
                return false;
            };
            let decoded = base64::engine::general_purpose::STANDARD
                .decode(encoded.trim())
                .map(|b| String::from_utf8_lossy(&b).into_owned())
                .unwrap_or_default();
            auth.secrets().iter().any(|s| decoded.contains(s.as_str()))
        };
        headers
            .iter()
            .map(|(n, v)| {
                let v = if hides_secret(v) {
                    "Basic [REDACTED]".to_owned()
                } else {
                    self.redact(v.clone())
                };
                (n.clone(), v)
            })
            .collect()
    }

    /// The next message from the client; what needs no scenario decision is answered here.
    pub async fn next(
        &mut self,
        wire: &mut Wire,
        exit: &mut watch::Receiver<Option<ExitInfo>>,
        deadline: tokio::time::Instant,
    ) -> Next {
        loop {
            if let Some(info) = exit.borrow().clone() {
                return Next::Exited(info);
            }
            let taken = match wire {
                Wire::Http(endpoint) => {
                    let arrival = tokio::select! {
                        a = endpoint.next(deadline) => a,
                        _ = exit.changed() => continue,
                    };
                    let Some(arrival) = arrival else {
                        return Next::TimedOut;
                    };
                    self.take_http(arrival)
                }
                Wire::Stdio {
                    listener,
                    conn,
                    closed,
                } => {
                    if *closed {
                        // Nothing more comes: wait for the exit, within the deadline.
                        tokio::select! {
                            _ = tokio::time::sleep_until(deadline) => return Next::TimedOut,
                            _ = exit.changed() => continue,
                        }
                    }
                    let Some(c) = conn else {
                        let accepted = tokio::select! {
                            c = listener.accept(deadline) => c,
                            _ = exit.changed() => continue,
                        };
                        let Some(c) = accepted else {
                            return Next::TimedOut;
                        };
                        self.lines = Some(c.sender());
                        *conn = Some(c);
                        continue;
                    };
                    let item = tokio::select! {
                        i = c.next(deadline) => i,
                        _ = exit.changed() => continue,
                    };
                    match item {
                        None => return Next::TimedOut,
                        Some(crate::transport::Inbound::Closed) => {
                            *closed = true;
                            return Next::Closed;
                        }
                        Some(item) => self.take_line(item),
                    }
                }
            };
            if let Some(next) = taken {
                return next;
            }
        }
    }

    /// The schema of the mock's revision, for scenario checks.
    pub fn schema(&self) -> Arc<Result<crate::schema::SchemaSet, String>> {
        self.schema.get(self.revision)
    }

    /// Records an arrival as a received entry; its answer is filled in later.
    fn record(&mut self, arrival: &Arrival) -> usize {
        let text = String::from_utf8_lossy(&arrival.body).into_owned();
        let http = HttpRecord::Exchange {
            method: arrival.method.clone(),
            url: self.redact(arrival.target.clone()),
            request_headers: self.redact_headers(&arrival.headers),
            status: 0,
            response_headers: Vec::new(),
            body: None,
        };
        self.log(Direction::Received, text, Some(http))
    }

    fn set_status(
        &mut self,
        frame: usize,
        status: u16,
        headers: &[(String, String)],
        body: Option<String>,
    ) {
        let headers = &self.redact_headers(headers);
        let body = body.map(|b| self.redact(b));
        if let Some(Entry {
            http:
                Some(HttpRecord::Exchange {
                    status: s,
                    response_headers,
                    body: b,
                    ..
                }),
            ..
        }) = self.transcript.get_mut(frame)
        {
            *s = status;
            *response_headers = headers.to_vec();
            *b = body;
        }
    }

    fn log(&mut self, direction: Direction, text: String, http: Option<HttpRecord>) -> usize {
        let text = self.redact(text);
        self.transcript.push(Entry {
            at: self.started.elapsed(),
            direction,
            text,
            http,
        });
        self.transcript.len() - 1
    }

    fn push(&mut self, finding: Finding, frame: usize) {
        self.findings.push(finding.at_frame(frame));
    }

    /// Ends the session: the findings of the end (no `notifications/initialized`), the
    /// transcript, every finding and whether schema checks ran.
    pub fn end(mut self) -> Ended {
        if let Some(f) = self.lifecycle.at_end(self.revision) {
            self.findings.push(f);
        }
        if let Some(f) = self.version_retry.at_end(self.revision) {
            self.findings.push(f);
        }
        if let Some(Expired { id, judged: false }) = &self.expired
            && let Some(f) = crate::check::client::after_expiry(id, None, self.revision)
        {
            self.findings.push(f);
        }
        Ended {
            schema: self.schema.status(self.revision),
            transcript: self.transcript,
            findings: self.findings,
        }
    }
}

/// What a mock session leaves.
#[derive(Debug)]
pub struct Ended {
    /// Every message and HTTP exchange, in order.
    pub transcript: Vec<Entry>,
    /// Every rule the client broke.
    pub findings: Vec<Finding>,
    /// Whether its messages were schema-checked.
    pub schema: SchemaStatus,
}

/// The result definition of the mock's own request `method`: `XRequest` -> `XResult`,
/// `ping` -> `EmptyResult`.
fn result_definition(table: &crate::schema::MethodTable, method: &str) -> Option<String> {
    if method == "ping" {
        return Some("EmptyResult".into());
    }
    let request = table.server_requests.get(method)?;
    Some(format!("{}Result", request.trim_end_matches("Request")))
}

#[cfg(test)]
mod tests {
    use std::time::Duration;

    use super::*;

    /// Sends `request` to a mock while the mock takes what comes for a second; the status
    /// the client got and the rules the mock found broken.
    async fn exchange(request: impl FnOnce(&str) -> reqwest::RequestBuilder) -> (u16, Vec<String>) {
        crate::transport::install_crypto_provider();
        let endpoint = Endpoint::bind().await.unwrap();
        let sent = request(&endpoint.url());
        let mut wire = Wire::Http(endpoint);
        let client = tokio::spawn(async move { sent.send().await.unwrap().status().as_u16() });
        let schemas = Arc::new(SchemaStore::disabled());
        let mut mock = Mock::new(Revision::V2025_11_25, Serves::default(), schemas);
        let (_alive, mut exit) = watch::channel(None);
        let deadline = tokio::time::Instant::now() + Duration::from_secs(1);
        assert!(matches!(
            mock.next(&mut wire, &mut exit, deadline).await,
            Next::TimedOut
        ));
        let status = client.await.unwrap();
        let rules = mock.end().findings.into_iter().map(|f| f.rule).collect();
        (status, rules)
    }

    #[tokio::test]
    async fn over_stdio_a_line_that_is_not_a_message_is_judged_and_a_request_answered() {
        use tokio::io::{AsyncBufReadExt, AsyncWriteExt};
        let listener = crate::transport::relay::RelayListener::bind().unwrap();
        let path = listener.path().to_owned();
        let mut wire = Wire::stdio(listener);
        let client = tokio::spawn(async move {
            let stream = tokio::net::UnixStream::connect(&path).await.unwrap();
            let (r, mut w) = stream.into_split();
            w.write_all(b"hello\n{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"ping\"}\n")
                .await
                .unwrap();
            let mut lines = tokio::io::BufReader::new(r).lines();
            lines.next_line().await.unwrap().unwrap()
        });
        let schemas = Arc::new(SchemaStore::disabled());
        let mut mock = Mock::new(Revision::V2025_11_25, Serves::default(), schemas);
        let (_alive, mut exit) = watch::channel(None);
        let deadline = tokio::time::Instant::now() + Duration::from_secs(5);
        let Next::Message(ping) = mock.next(&mut wire, &mut exit, deadline).await else {
            panic!("the ping");
        };
        let Message::Request(request) = &ping.message else {
            panic!("a request");
        };
        let answer = mock.default_answer(request);
        mock.answer(*ping, answer);
        assert_eq!(
            client.await.unwrap(),
            r#"{"jsonrpc":"2.0","id":1,"result":{}}"#
        );
        let rules: Vec<String> = mock.end().findings.into_iter().map(|f| f.rule).collect();
        assert_eq!(
            rules,
            ["client.stdio-only-messages", "client.initialize-first"]
        );
    }

    #[tokio::test]
    async fn a_body_that_is_not_json_is_refused_and_judged() {
        let (status, rules) = exchange(|url| {
            reqwest::Client::new()
                .post(url)
                .header("accept", "application/json, text/event-stream")
                .body("{not json")
        })
        .await;
        assert_eq!(status, 400);
        assert_eq!(rules, ["jsonrpc.message-shape"]);
    }

    #[tokio::test]
    async fn a_get_is_405_without_a_stream_to_resume_and_must_accept_sse() {
        let (status, rules) = exchange(|url| {
            reqwest::Client::new()
                .get(url)
                .header("accept", "application/json")
        })
        .await;
        assert_eq!(status, 405);
        assert_eq!(rules, ["client.http-get-accept"]);
    }
}

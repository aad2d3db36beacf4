//! The server side of a session with a client under test (`mcpcheck client`).
//!
//! Every HTTP request the client makes passes [`Mock::next`]: it is recorded, its headers
//! and its message judged (JSON-RPC, the schema of the revision, the lifecycle order, ids,
//! capabilities), and what needs no decision of the scenario is answered at once
//! (notifications and responses with 202, GET with 405, DELETE with 200). Requests go up
//! to the scenario, which answers each with [`Mock::answer`] (often the default answer of
//! [`Serves`]) or holds it open as an SSE stream ([`Mock::hold`]) to send the client
//! requests of its own first.

mod serves;

use std::collections::HashMap;
use std::sync::Arc;
use std::time::Instant;

use serde_json::{Value, json};
use tokio::sync::{mpsc, watch};

use super::validate::SchemaRecord;
use crate::check::client::{self as rules, Lifecycle};
use crate::check::{jsonrpc as jsonrpc_check, schema as schema_check};
use crate::outcome::{Direction, Entry, Finding, SchemaStatus};
use crate::protocol::{Classified, Message, Outcome, Request, RequestId, Revision, classify};
use crate::schema::{SchemaStore, SchemaTarget};
use crate::transport::ExitInfo;
use crate::transport::http::HttpRecord;
use crate::transport::listen::{Arrival, Endpoint, Reply, SseEvent};
pub use serves::{Answer, Serves};

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
    /// The client process ended.
    Exited(ExitInfo),
    /// Nothing by the deadline.
    TimedOut,
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
    /// The HTTP request still waiting for its answer (requests only).
    arrival: Option<Arrival>,
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
    /// Assigned when `initialize` is answered.
    session_id: Option<String>,
    /// The version the mock answered `initialize` with.
    negotiated: Option<String>,
    /// Requests the mock sent to the client and has no response to yet: id -> method.
    pending: HashMap<String, String>,
    next_id: i64,
    next_event: u64,
    /// A held stream is closed and a GET would resume it.
    resumable: bool,
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
            session_id: None,
            negotiated: None,
            pending: HashMap::new(),
            next_id: 0,
            next_event: 0,
            resumable: false,
        }
    }

    /// The next message from the client; what needs no scenario decision is answered here.
    pub async fn next(
        &mut self,
        endpoint: &mut Endpoint,
        exit: &mut watch::Receiver<Option<ExitInfo>>,
        deadline: tokio::time::Instant,
    ) -> Next {
        loop {
            if let Some(info) = exit.borrow().clone() {
                return Next::Exited(info);
            }
            let arrival = tokio::select! {
                a = endpoint.next(deadline) => a,
                _ = exit.changed() => continue,
            };
            let Some(arrival) = arrival else {
                return Next::TimedOut;
            };
            if arrival.method == "GET" {
                if let Some(resumption) = self.take_get(arrival) {
                    return Next::Resume(Box::new(resumption));
                }
                continue;
            }
            if let Some(incoming) = self.take(arrival) {
                return Next::Message(Box::new(incoming));
            }
        }
    }

    /// A GET: a resumption while a held stream is closed, else 405 (no standalone stream
    /// is offered: "MUST ... or else return HTTP 405").
    fn take_get(&mut self, arrival: Arrival) -> Option<Resumption> {
        let frame = self.record(&arrival);
        let rev = self.revision;
        let mut found: Vec<Finding> = rules::get_accept(arrival.header("accept"), rev)
            .into_iter()
            .collect();
        if let Some(assigned) = &self.session_id {
            found.extend(rules::session_id(
                assigned,
                arrival.header("mcp-session-id"),
                rev,
            ));
        }
        for f in found {
            self.push(f, frame);
        }
        if !self.resumable {
            self.reply_status(arrival, frame, 405, "");
            return None;
        }
        Some(Resumption {
            frame,
            last_event_id: arrival.header("last-event-id").map(str::to_owned),
            at: arrival.at,
            arrival,
        })
    }

    /// Records and judges one HTTP request; returns the message the scenario must see.
    fn take(&mut self, arrival: Arrival) -> Option<Incoming> {
        let frame = self.record(&arrival);
        match arrival.method.as_str() {
            "POST" => {}
            "DELETE" => return self.reply_status(arrival, frame, 200, ""),
            _ => return self.reply_status(arrival, frame, 405, ""),
        }
        self.judge_headers(&arrival, frame);
        let text = String::from_utf8_lossy(&arrival.body).into_owned();
        let value: Value = match serde_json::from_str(&text) {
            Ok(v) => v,
            Err(e) => {
                let f = Finding::new(
                    &crate::check::rules::JSONRPC_MESSAGE,
                    self.revision,
                    format!("the client POSTed a body that is not JSON ({e})"),
                )
                .expected("one JSON-RPC message as JSON");
                self.push(f, frame);
                let body = json!({"jsonrpc": "2.0", "id": null, "error": {"code": -32700, "message": "Parse error"}});
                return self.reply_json(arrival, frame, 400, &body, Vec::new());
            }
        };
        let message = match classify(&value, &text) {
            Classified::Single(Ok(m)) => m,
            Classified::Single(Err(invalid)) => {
                let f = jsonrpc_check::invalid_message(
                    &invalid.reason,
                    &invalid.pointer,
                    self.revision,
                );
                self.push(f, frame);
                let body = json!({"jsonrpc": "2.0", "id": null, "error": {"code": -32600, "message": "Invalid Request"}});
                return self.reply_json(arrival, frame, 400, &body, Vec::new());
            }
            Classified::Batch(items) => {
                if let Some(f) = rules::batch(items.len(), self.revision) {
                    self.push(f, frame);
                }
                // The mock takes one message per POST; a batch is refused, not judged further.
                return self.reply_status(
                    arrival,
                    frame,
                    400,
                    "mcpcheck's mock takes one message per POST",
                );
            }
        };
        self.judge_message(&message, &value, frame);
        match &message {
            Message::Request(_) => Some(Incoming {
                frame,
                message,
                value,
                arrival: Some(arrival),
            }),
            Message::Notification(_) | Message::Response(_) => {
                self.reply_status(arrival, frame, 202, "");
                Some(Incoming {
                    frame,
                    message,
                    value,
                    arrival: None,
                })
            }
        }
    }

    fn judge_headers(&mut self, arrival: &Arrival, frame: usize) {
        let rev = self.revision;
        let mut found: Vec<Finding> = rules::accept(arrival.header("accept"), rev)
            .into_iter()
            .collect();
        if let Some(assigned) = &self.session_id {
            found.extend(rules::session_id(
                assigned,
                arrival.header("mcp-session-id"),
                rev,
            ));
        }
        if let Some(negotiated) = &self.negotiated {
            found.extend(rules::protocol_version_header(
                negotiated,
                arrival.header("mcp-protocol-version"),
                rev,
            ));
        }
        for f in found {
            self.push(f, frame);
        }
    }

    fn judge_message(&mut self, message: &Message, value: &Value, frame: usize) {
        let rev = self.revision;
        let set = self.schema.get(rev);
        let table = set
            .as_ref()
            .as_ref()
            .ok()
            .map(crate::schema::SchemaSet::methods);
        match message {
            Message::Request(r) => {
                let id = r.id.to_value();
                for f in self.lifecycle.request(&r.method, &id, rev) {
                    self.push(f, frame);
                }
                if self.negotiated.is_some()
                    && let Some(f) =
                        rules::undeclared_server_feature(&r.method, &self.serves.capabilities, rev)
                {
                    self.push(f, frame);
                }
                if let Some(def) = table
                    .as_ref()
                    .and_then(|t| t.client_requests.get(&r.method))
                {
                    self.validate(&SchemaTarget::Definition(def.0.clone()), value, "", frame);
                }
            }
            Message::Notification(n) => {
                self.lifecycle.notification(&n.method);
                if let Some(def) = table
                    .as_ref()
                    .and_then(|t| t.client_notifications.get(&n.method))
                {
                    self.validate(&SchemaTarget::Definition(def.clone()), value, "", frame);
                }
            }
            Message::Response(r) => {
                let method =
                    r.id.as_ref()
                        .and_then(|id| self.pending.remove(&id.to_value().to_string()));
                match (&r.outcome, method) {
                    (Outcome::Result(result), Some(method)) => {
                        if let Some(def) =
                            table.as_ref().and_then(|t| result_definition(t, &method))
                        {
                            self.validate(&SchemaTarget::Definition(def), result, "/result", frame);
                        }
                    }
                    (Outcome::Error(_), _) => {
                        if let Some(error) = value.get("error") {
                            self.validate(&SchemaTarget::ErrorObject, error, "/error", frame);
                        }
                    }
                    (Outcome::Result(_), None) => {}
                }
            }
        }
    }

    fn validate(&mut self, target: &SchemaTarget, instance: &Value, pointer: &str, frame: usize) {
        let rev = self.revision;
        let set = self.schema.get(rev);
        let Ok(set) = set.as_ref() else {
            self.schema.note_skip(rev);
            return;
        };
        if let Some(violations) = self.schema.validate(set, target, instance) {
            for f in schema_check::violations(target, violations, rev, pointer) {
                self.push(f, frame);
            }
        }
    }

    /// The schema of the mock's revision, for scenario checks.
    pub fn schema(&self) -> Arc<Result<crate::schema::SchemaSet, String>> {
        self.schema.get(self.revision)
    }

    /// The default answer to `request`, from what the mock serves.
    pub fn default_answer(&self, request: &Request) -> Answer {
        self.serves.answer(request, self.revision)
    }

    /// Answers a request with one JSON response.
    pub fn answer(&mut self, incoming: Incoming, answer: Answer) {
        let Message::Request(request) = &incoming.message else {
            return;
        };
        let Some(arrival) = incoming.arrival else {
            return;
        };
        let body = self.response(request, answer);
        let headers = self.session_headers(request);
        self.reply_json(arrival, incoming.frame, 200, &body, headers);
    }

    /// Holds a request open: its answer becomes an SSE stream the scenario writes to.
    pub fn hold(&mut self, incoming: Incoming) -> Option<Held> {
        let Message::Request(request) = incoming.message else {
            return None;
        };
        let arrival = incoming.arrival?;
        let (events, rx) = mpsc::unbounded_channel();
        let headers = self.session_headers(&request);
        self.set_status(incoming.frame, 200, &headers, None);
        arrival.reply(Reply::Stream {
            headers,
            events: rx,
        });
        Some(Held {
            request,
            stream: Stream::Open(events),
        })
    }

    /// Sends a request of the mock's own to the client on `held`'s stream; returns its id.
    pub fn send_request(&mut self, held: &Held, method: &str, params: Value) -> RequestId {
        self.next_id += 1;
        let id = RequestId::String(format!("mcpcheck-{}", self.next_id));
        self.pending
            .insert(id.to_value().to_string(), method.to_owned());
        let message =
            json!({"jsonrpc": "2.0", "id": id.to_value(), "method": method, "params": params});
        self.send_event(held, &message);
        id
    }

    /// Answers a held request on its open stream, which then ends.
    pub fn finish(&mut self, held: Held, answer: Answer) {
        let body = self.response(&held.request, answer);
        self.send_event(&held, &body);
    }

    /// Closes a held request's stream before its response: an event with an id, empty
    /// data and `retry`, then the end of the connection (transports: the server "MAY
    /// close the connection ... SHOULD send an SSE event with a standard retry field").
    pub fn disconnect(&mut self, held: &mut Held, retry: std::time::Duration) {
        let Stream::Open(events) = &held.stream else {
            return;
        };
        self.next_event += 1;
        let id = self.next_event.to_string();
        let _ = events.send(SseEvent {
            id: Some(id.clone()),
            retry: Some(retry),
            data: String::new(),
        });
        self.log(
            Direction::Event,
            format!(
                "mcpcheck closed the stream after event {id} (retry {} ms)",
                retry.as_millis()
            ),
            None,
        );
        held.stream = Stream::Closed {
            last_event_id: id,
            closed: Instant::now(),
            retry,
        };
        self.resumable = true;
    }

    /// Answers a held request whose stream was closed on the GET that resumes it, judging
    /// the resumption (its wait against `retry`, its `Last-Event-ID`).
    pub fn resume(&mut self, resumption: Resumption, held: Held, answer: Answer) {
        let Stream::Closed {
            last_event_id,
            closed,
            retry,
        } = &held.stream
        else {
            return;
        };
        let waited = resumption.at.saturating_duration_since(*closed);
        let found = rules::resumption(
            waited,
            *retry,
            resumption.last_event_id.as_deref(),
            last_event_id,
            self.revision,
        );
        for f in found {
            self.push(f, resumption.frame);
        }
        self.resumable = false;
        let (events, rx) = mpsc::unbounded_channel();
        self.set_status(resumption.frame, 200, &[], None);
        resumption.arrival.reply(Reply::Stream {
            headers: Vec::new(),
            events: rx,
        });
        let body = self.response(&held.request, answer);
        let reopened = Held {
            request: held.request,
            stream: Stream::Open(events),
        };
        self.send_event(&reopened, &body);
    }

    /// No GET resumed the closed stream; `how` says how the wait ended.
    pub fn not_resumed(&mut self, how: &str) {
        self.resumable = false;
        self.findings.push(rules::no_reconnect(how, self.revision));
    }

    fn send_event(&mut self, held: &Held, message: &Value) {
        let Stream::Open(events) = &held.stream else {
            return;
        };
        self.next_event += 1;
        let text = message.to_string();
        self.log(Direction::Sent, text.clone(), None);
        let _ = events.send(SseEvent {
            id: Some(self.next_event.to_string()),
            retry: None,
            data: text,
        });
    }

    /// The JSON-RPC response for `request`; an `initialize` result starts the session.
    fn response(&mut self, request: &Request, answer: Answer) -> Value {
        let id = request.id.to_value();
        match answer {
            Answer::Result(result) => {
                if request.method == "initialize" {
                    self.negotiated = result
                        .get("protocolVersion")
                        .and_then(Value::as_str)
                        .map(str::to_owned);
                    self.session_id = Some(SESSION_ID.to_owned());
                    self.lifecycle.initialize_answered();
                }
                json!({"jsonrpc": "2.0", "id": id, "result": result})
            }
            Answer::Error {
                code,
                message,
                data,
            } => {
                let mut error = json!({"code": code, "message": message});
                if let Some(data) = data {
                    error["data"] = data;
                }
                json!({"jsonrpc": "2.0", "id": id, "error": error})
            }
        }
    }

    fn session_headers(&self, request: &Request) -> Vec<(String, String)> {
        match (&self.session_id, request.method.as_str()) {
            (Some(id), "initialize") => vec![("mcp-session-id".into(), id.clone())],
            _ => Vec::new(),
        }
    }

    /// Answers with one JSON body and `extra` headers (the session id of an initialize
    /// result).
    fn reply_json(
        &mut self,
        arrival: Arrival,
        frame: usize,
        status: u16,
        body: &Value,
        extra: Vec<(String, String)>,
    ) -> Option<Incoming> {
        let text = body.to_string();
        let mut headers = vec![("content-type".to_owned(), "application/json".to_owned())];
        headers.extend(extra);
        self.set_status(frame, status, &headers, Some(text.clone()));
        self.log(Direction::Sent, text.clone(), None);
        arrival.reply(Reply::Body {
            status,
            headers,
            body: text.into_bytes(),
        });
        None
    }

    fn reply_status(
        &mut self,
        arrival: Arrival,
        frame: usize,
        status: u16,
        body: &str,
    ) -> Option<Incoming> {
        self.set_status(
            frame,
            status,
            &[],
            (!body.is_empty()).then(|| body.to_owned()),
        );
        arrival.reply(Reply::Body {
            status,
            headers: Vec::new(),
            body: body.as_bytes().to_vec(),
        });
        None
    }

    /// Records an arrival as a received entry; its answer is filled in later.
    fn record(&mut self, arrival: &Arrival) -> usize {
        let text = String::from_utf8_lossy(&arrival.body).into_owned();
        let http = HttpRecord::Exchange {
            method: arrival.method.clone(),
            url: arrival.target.clone(),
            request_headers: arrival.headers.clone(),
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
        let mut endpoint = Endpoint::bind().await.unwrap();
        let sent = request(&endpoint.url());
        let client = tokio::spawn(async move { sent.send().await.unwrap().status().as_u16() });
        let schemas = Arc::new(SchemaStore::disabled());
        let mut mock = Mock::new(Revision::V2025_11_25, Serves::default(), schemas);
        let (_alive, mut exit) = watch::channel(None);
        let deadline = tokio::time::Instant::now() + Duration::from_secs(1);
        assert!(matches!(
            mock.next(&mut endpoint, &mut exit, deadline).await,
            Next::TimedOut
        ));
        let status = client.await.unwrap();
        let rules = mock.end().findings.into_iter().map(|f| f.rule).collect();
        (status, rules)
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

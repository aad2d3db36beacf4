//! What goes out: answers to the client's requests, held streams and the mock's own
//! requests on them, and the close and resumption of a stream.

use std::time::Instant;

use serde_json::{Value, json};
use tokio::sync::mpsc;

use super::{Answer, Held, Incoming, Mock, Resumption, SESSION_ID, Stream, Waiting};
use crate::check::client as rules;
use crate::outcome::Direction;
use crate::protocol::{Message, Request, RequestId, codes};
use crate::transport::listen::{Arrival, Reply, SseEvent};

impl Mock {
    /// The default answer to `request`, from what the mock serves.
    pub fn default_answer(&self, request: &Request) -> Answer {
        self.serves.answer(request, self.revision)
    }

    /// Answers a request with one JSON response.
    pub fn answer(&mut self, incoming: Incoming, answer: Answer) {
        let Message::Request(request) = &incoming.message else {
            return;
        };
        let Some(waiting) = incoming.waiting else {
            return;
        };
        let status = self.status_of(&answer);
        let body = self.response(request, answer);
        let headers = self.session_headers(request);
        self.reply_json(waiting, incoming.frame, status, &body, headers);
    }

    /// The HTTP status of an answer: 200, but at 2026-07-28 an error has its own
    /// (streamable-http: 404 for an unknown method, 400 for a request refused as invalid).
    fn status_of(&self, answer: &Answer) -> u16 {
        let Answer::Error { code, .. } = answer else {
            return 200;
        };
        if self.revision.has_handshake() {
            return 200;
        }
        match *code {
            codes::METHOD_NOT_FOUND => 404,
            codes::INVALID_REQUEST
            | codes::INVALID_PARAMS
            | codes::HEADER_MISMATCH
            | codes::MISSING_REQUIRED_CLIENT_CAPABILITY
            | codes::UNSUPPORTED_PROTOCOL_VERSION => 400,
            _ => 200,
        }
    }

    /// Ends the session as a server that terminated it does, answering `incoming` with
    /// HTTP 404 ("Session not found"); the client is to start a new session
    /// (transports#session-management). stdio has no sessions: there it is just the error.
    pub fn expire(&mut self, incoming: Incoming) {
        let Message::Request(request) = &incoming.message else {
            return;
        };
        let Some(waiting) = incoming.waiting else {
            return;
        };
        let body = session_not_found(&request.id.to_value());
        self.tokens.done(&request.id.to_value());
        if let Some(id) = self.session_id.take() {
            self.expired = Some(super::Expired { id, judged: false });
        }
        self.negotiated = None;
        self.lifecycle = crate::check::client::Lifecycle::default();
        self.reply_json(waiting, incoming.frame, 404, &body, Vec::new());
    }

    /// Holds a request open: over HTTP its answer becomes an SSE stream the scenario
    /// writes to; over stdio the answer just waits.
    pub fn hold(&mut self, incoming: Incoming) -> Option<Held> {
        let Message::Request(request) = incoming.message else {
            return None;
        };
        let arrival = match incoming.waiting? {
            Waiting::Http(arrival) => arrival,
            Waiting::Line => {
                return Some(Held {
                    request,
                    stream: Stream::Lines,
                });
            }
        };
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
        let text = message.to_string();
        match &held.stream {
            Stream::Open(events) => {
                self.next_event += 1;
                self.log(Direction::Sent, text.clone(), None);
                let _ = events.send(SseEvent {
                    id: Some(self.next_event.to_string()),
                    retry: None,
                    data: text,
                });
            }
            Stream::Lines => self.write_line(text),
            Stream::Closed { .. } => {}
        }
    }

    /// Writes one line to a stdio client.
    fn write_line(&mut self, text: String) {
        self.log(Direction::Sent, text.clone(), None);
        if let Some(lines) = &self.lines {
            let _ = lines.send(text);
        }
    }

    /// The JSON-RPC response for `request`; an `initialize` result starts the session.
    fn response(&mut self, request: &Request, answer: Answer) -> Value {
        let id = request.id.to_value();
        self.tokens.done(&id);
        match answer {
            Answer::Result(result) => {
                if !self.revision.has_handshake() {
                    let params = request.params.as_ref();
                    self.rounds.answered(&request.method, params, &id, &result);
                }
                self.forget_expired(request);
                if request.method == "initialize" {
                    self.negotiated = result
                        .get("protocolVersion")
                        .and_then(Value::as_str)
                        .map(str::to_owned);
                    self.session_id = Some(SESSION_ID.to_owned());
                    let version = self.negotiated.as_deref().unwrap_or_default();
                    self.lifecycle.initialize_answered(version);
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
                if code == codes::UNSUPPORTED_PROTOCOL_VERSION {
                    self.refuse_version(request, &mut error);
                }
                json!({"jsonrpc": "2.0", "id": id, "error": error})
            }
        }
    }

    /// A scripted UnsupportedProtocolVersionError: `data.requested` is the version the
    /// request named, and the client is expected to retry from `data.supported`.
    fn refuse_version(&mut self, request: &Request, error: &mut Value) {
        let requested = crate::check::client_stateless::meta_version(request.params.as_ref())
            .map(str::to_owned);
        let data = error
            .as_object_mut()
            .map(|e| e.entry("data").or_insert_with(|| json!({})));
        let Some(Value::Object(data)) = data else {
            return;
        };
        data.entry("requested").or_insert_with(|| json!(requested));
        let supported = data
            .entry("supported")
            .or_insert_with(|| json!([self.revision.as_str()]));
        let supported = supported
            .as_array()
            .into_iter()
            .flatten()
            .filter_map(|v| v.as_str().map(str::to_owned))
            .collect();
        self.version_retry.refused(supported);
    }

    /// After a new `initialize`, the ended session is forgotten.
    fn forget_expired(&mut self, request: &Request) {
        if request.method == "initialize" {
            self.expired = None;
        }
    }

    fn session_headers(&self, request: &Request) -> Vec<(String, String)> {
        match (&self.session_id, request.method.as_str()) {
            (Some(id), "initialize") => vec![("mcp-session-id".into(), id.clone())],
            _ => Vec::new(),
        }
    }

    /// Answers with one JSON body: over HTTP with `status` and `extra` headers (the
    /// session id of an initialize result), over stdio as a line.
    pub(super) fn reply_json(
        &mut self,
        waiting: Waiting,
        frame: usize,
        status: u16,
        body: &Value,
        extra: Vec<(String, String)>,
    ) {
        let text = body.to_string();
        let arrival = match waiting {
            Waiting::Http(arrival) => arrival,
            Waiting::Line => return self.write_line(text),
        };
        let mut headers = vec![("content-type".to_owned(), "application/json".to_owned())];
        headers.extend(extra);
        self.set_status(frame, status, &headers, Some(text.clone()));
        self.log(Direction::Sent, text.clone(), None);
        arrival.reply(Reply::Body {
            status,
            headers,
            body: text.into_bytes(),
        });
    }

    /// Answers an HTTP request with a status and a plain body (or none).
    pub(super) fn reply_status(&mut self, arrival: Arrival, frame: usize, status: u16, body: &str) {
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
    }
}

/// The answer to a request for a session the server ended (HTTP 404), as SDK servers word it.
pub(super) fn session_not_found(id: &Value) -> Value {
    json!({"jsonrpc": "2.0", "id": id, "error": {"code": -32001, "message": "Session not found"}})
}

//! What comes in: each HTTP request or stdio line recorded, judged and, where no scenario
//! decision is needed, answered at once.

use serde_json::{Value, json};

use super::auth::{Body, Reply as AuthReply, Request as AuthRequest, Route};
use super::{Incoming, Mock, Next, Resumption, Waiting, result_definition};
use crate::check::client as rules;
use crate::check::{jsonrpc as jsonrpc_check, schema as schema_check};
use crate::outcome::{Direction, Finding};
use crate::protocol::{Classified, Message, Outcome, classify};
use crate::schema::SchemaTarget;
use crate::transport::listen::{Arrival, Reply};
use crate::transport::{FramingIssue, Inbound};

impl Mock {
    /// One HTTP request: POST carries a message, GET may resume a closed stream, DELETE
    /// ends the session (200), anything else is 405.
    pub(super) fn take_http(&mut self, arrival: Arrival) -> Option<Next> {
        if let Some(auth) = &mut self.auth {
            let request = AuthRequest {
                method: &arrival.method,
                target: &arrival.target,
                headers: &arrival.headers,
                body: &arrival.body,
            };
            if let Route::Answer(reply) = auth.route(request) {
                self.reply_auth(arrival, reply);
                return None;
            }
        }
        if arrival.target.starts_with(super::CANARY_PATH) {
            let frame = self.record(&arrival);
            let f = crate::check::client_stateless::network_ref_fetched(
                &arrival.method,
                &arrival.target,
                self.revision,
            );
            self.push(f, frame);
            self.reply_status(arrival, frame, 404, "");
            return None;
        }
        match arrival.method.as_str() {
            "POST" => self.take_post(arrival).map(|i| Next::Message(Box::new(i))),
            "GET" => self.take_get(arrival).map(|r| Next::Resume(Box::new(r))),
            "DELETE" => {
                let frame = self.record(&arrival);
                self.reply_status(arrival, frame, 200, "");
                None
            }
            _ => {
                let frame = self.record(&arrival);
                self.reply_status(arrival, frame, 405, "");
                None
            }
        }
    }

    /// Answers a request the authorization side took: recorded (its secrets redacted),
    /// its findings pinned to it.
    fn reply_auth(&mut self, arrival: Arrival, reply: AuthReply) {
        let frame = self.record(&arrival);
        for f in reply.findings {
            self.push(f, frame);
        }
        let mut headers = reply.headers;
        let body = match &reply.body {
            Body::Empty => None,
            Body::Json(v) => {
                headers.push(("content-type".into(), "application/json".into()));
                Some(v.to_string())
            }
        };
        self.set_status(frame, reply.status, &headers, body.clone());
        arrival.reply(Reply::Body {
            status: reply.status,
            headers,
            body: body.unwrap_or_default().into_bytes(),
        });
    }

    /// One line from a stdio client (through the relay).
    pub(super) fn take_line(&mut self, item: Inbound) -> Option<Next> {
        match item {
            Inbound::Frame(frame) => {
                let text = frame.text().to_owned();
                let at = self.log(Direction::Received, text.clone(), None);
                self.take_message(at, frame.value, &text, Waiting::Line)
                    .map(|i| Next::Message(Box::new(i)))
            }
            Inbound::Framing(issue) => {
                let what = match &issue {
                    FramingIssue::Oversize { len, limit, .. } => {
                        format!("a line of {len} bytes, over the {limit}-byte limit")
                    }
                    FramingIssue::InvalidUtf8 { .. } => "a line that is not UTF-8".to_owned(),
                    FramingIssue::NotJson { line, error, .. } => {
                        let line: String = line.chars().take(120).collect();
                        format!("a line that is not JSON ({error}): {line}")
                    }
                    FramingIssue::MultiLine { lines, .. } => {
                        format!("one message written over {lines} lines")
                    }
                    // The client closed its side inside a line: nothing more to judge.
                    FramingIssue::Unterminated { .. } => return None,
                };
                let f = Finding::new(
                    &crate::check::rules::CLIENT_STDIO_ONLY_MESSAGES,
                    self.revision,
                    format!("the client wrote to the server's stdin {what}"),
                )
                .expected("one JSON-RPC message per line");
                let at = self.log(Direction::Event, format!("framing: {what}"), None);
                self.push(f, at);
                match issue {
                    // The message itself is still taken.
                    FramingIssue::MultiLine { frame, .. } => self.take_line(Inbound::Frame(frame)),
                    _ => None,
                }
            }
            _ => None,
        }
    }

    /// A GET: a resumption while a held stream is closed, else 405 (no standalone stream
    /// is offered: "MUST ... or else return HTTP 405").
    fn take_get(&mut self, arrival: Arrival) -> Option<Resumption> {
        let frame = self.record(&arrival);
        self.judge_headers(&arrival, frame);
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

    /// A POST: its headers and body judged, its message taken.
    fn take_post(&mut self, arrival: Arrival) -> Option<Incoming> {
        let frame = self.record(&arrival);
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
                self.reply_json(Waiting::Http(arrival), frame, 400, &body, Vec::new());
                return None;
            }
        };
        if let Value::Array(items) = &value {
            if let Some(f) = rules::batch(items.len(), self.revision) {
                self.push(f, frame);
            }
            // The mock takes one message per POST; a batch is refused, not judged further.
            let why = "mcpcheck's mock takes one message per POST";
            self.reply_status(arrival, frame, 400, why);
            return None;
        }
        if self.refuse_expired(&arrival, &value, frame) {
            self.reply_json(
                Waiting::Http(arrival),
                frame,
                404,
                &super::answer::session_not_found(&value["id"]),
                Vec::new(),
            );
            return None;
        }
        self.take_message(frame, value, &text, Waiting::Http(arrival))
    }

    /// The first request after the mock ended the session is judged (a new `initialize`
    /// without the session id); a request naming the ended session gets 404 again.
    fn refuse_expired(&mut self, arrival: &Arrival, value: &Value, frame: usize) -> bool {
        let (Some(expired), Some(method)) = (
            &mut self.expired,
            value.get("method").and_then(Value::as_str),
        ) else {
            return false;
        };
        let named = arrival.header("mcp-session-id");
        let is_request = value.get("id").is_some();
        if is_request && !std::mem::replace(&mut expired.judged, true) {
            let old = expired.id.clone();
            if let Some(f) = rules::after_expiry(&old, Some((method, named)), self.revision) {
                self.push(f, frame);
            }
        }
        let expired = self.expired.as_ref().map(|e| e.id.as_str());
        method != "initialize" && named.is_some() && named == expired
    }

    /// One message, however it came: judged, and acknowledged unless it is a request.
    fn take_message(
        &mut self,
        frame: usize,
        value: Value,
        text: &str,
        waiting: Waiting,
    ) -> Option<Incoming> {
        let message = match classify(&value, text) {
            Classified::Single(Ok(m)) => m,
            Classified::Single(Err(invalid)) => {
                let f = jsonrpc_check::invalid_message(
                    &invalid.reason,
                    &invalid.pointer,
                    self.revision,
                );
                self.push(f, frame);
                let body = json!({"jsonrpc": "2.0", "id": null, "error": {"code": -32600, "message": "Invalid Request"}});
                self.reply_json(waiting, frame, 400, &body, Vec::new());
                return None;
            }
            Classified::Batch(items) => {
                // Over stdio (over HTTP a batch is refused before this).
                if let Some(f) = jsonrpc_check::batch(items.len(), self.revision) {
                    self.push(f, frame);
                }
                return None;
            }
        };
        self.judge_message(&message, &value, frame);
        if let Message::Request(request) = &message
            && !self.revision.has_handshake()
            && let Some(refusal) = self.judge_stateless(request, &waiting, frame)
        {
            self.tokens.done(&request.id.to_value());
            let body =
                json!({"jsonrpc": "2.0", "id": request.id.to_value(), "error": refusal.error});
            self.reply_json(waiting, frame, refusal.status, &body, Vec::new());
            return None;
        }
        let waiting = match (&message, waiting) {
            (Message::Request(_), waiting) => Some(waiting),
            (_, Waiting::Http(arrival)) => {
                self.reply_status(arrival, frame, 202, "");
                None
            }
            (_, Waiting::Line) => None,
        };
        Some(Incoming {
            frame,
            message,
            value,
            waiting,
        })
    }

    /// The headers every request after `initialize` carries (session id, protocol
    /// version), and the `Accept` its method needs (POST: JSON and SSE; GET: SSE).
    fn judge_headers(&mut self, arrival: &Arrival, frame: usize) {
        let rev = self.revision;
        let accept = arrival.header("accept");
        let accept = match arrival.method.as_str() {
            "GET" => rules::get_accept(accept, rev),
            _ => rules::accept(accept, rev),
        };
        let mut found: Vec<Finding> = accept.into_iter().collect();
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
                if r.method == "initialize" {
                    self.client_capabilities = value
                        .pointer("/params/capabilities")
                        .cloned()
                        .unwrap_or_default();
                }
                // 2026-07-28 has no session, so no lifecycle order and no ids to keep apart.
                let found = match rev.has_handshake() {
                    true => self.lifecycle.request(&r.method, &id, rev),
                    false => Vec::new(),
                };
                for f in found {
                    self.push(f, frame);
                }
                if let Some(f) = self.tokens.request(&r.method, r.params.as_ref(), &id, rev) {
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
                if let Some(f) = self.lifecycle.notification(&n.method, rev) {
                    self.push(f, frame);
                }
                if rev.has_handshake()
                    && let Some(f) =
                        rules::undeclared_own_feature(&n.method, &self.client_capabilities, rev)
                {
                    self.push(f, frame);
                }
                if n.method == "notifications/cancelled"
                    && let Some(id) = n.params.as_ref().and_then(|p| p.get("requestId"))
                {
                    self.tokens.done(id);
                }
                if n.method == "notifications/cancelled"
                    && rev.has_handshake()
                    && let Some(f) = self.lifecycle.cancelled(n.params.as_ref(), rev)
                {
                    self.push(f, frame);
                }
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
}

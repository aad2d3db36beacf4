//! Intake: every item the transport delivers is recorded, checked and correlated here,
//! the one point all inbound frames pass, so none escapes the checks.

use serde_json::Value;

use super::{Session, Unsolicited};
use crate::check::progress::TokenState;
use crate::check::schema::MessageKind;
use crate::check::{self, capabilities, jsonrpc, progress};
use crate::outcome::Direction;
use crate::protocol::{Classified, Message, classify};
use crate::transport::{Inbound, RawFrame};

impl Session {
    /// Handles one inbound item: records it, checks it, correlates it.
    pub(super) async fn ingest(&mut self, item: Inbound) {
        match item {
            Inbound::Frame(frame) => {
                let index = self.transcript.push(Direction::Received, frame.text());
                self.ingest_frame(&frame, index).await;
            }
            Inbound::Framing(issue) => self.ingest_framing(issue).await,
            Inbound::Closed => {
                self.peer.stdout_closed = true;
                self.transcript
                    .push(Direction::Event, "server closed its output");
            }
            Inbound::Exited(exit) => {
                self.transcript
                    .push(Direction::Event, format!("server process ended: {exit}"));
                self.peer.exit = Some(exit);
            }
            Inbound::Unanswered { id, why } => {
                if let Some(key) = crate::protocol::RequestId::from_value(&id)
                    && self.requests.is_pending(&key)
                {
                    self.transcript
                        .push(Direction::Event, format!("the POST of request {id} {why}"));
                    self.spoil(&key, format!("the POST that carried it {why}"));
                }
            }
            Inbound::Http(record) => {
                // Something the server did on a stream (SSE resumption, an early close) may
                // break a transport rule: a finding.
                use crate::transport::http::{HttpRecord, StreamAnomaly};
                let finding = match &record {
                    HttpRecord::Anomaly(a) => super::anomaly::finding(a, self.revision),
                    _ => None,
                };
                // An error's status is worth a transcript line only when it is wrong.
                if finding.is_none()
                    && matches!(
                        record,
                        HttpRecord::Anomaly(StreamAnomaly::ErrorStatus { .. })
                    )
                {
                    return;
                }
                let index = self.transcript.push_http(record);
                self.push_all(finding, index);
            }
        }
    }

    /// Classifies a frame and takes in each message it holds (one, or a batch's items).
    pub(super) async fn ingest_frame(&mut self, frame: &RawFrame, index: Option<usize>) {
        let rev = self.revision;
        match classify(&frame.value, frame.text()) {
            Classified::Single(Ok(message)) => {
                self.ingest_message(message, &frame.value, index, "").await
            }
            Classified::Single(Err(invalid)) => {
                let f = jsonrpc::invalid_message(&invalid.reason, &invalid.pointer, rev);
                self.push_at(f, index);
                self.salvage(&frame.value, index);
            }
            Classified::Batch(items) => {
                self.push_all(jsonrpc::batch(items.len(), rev), index);
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
                            let f =
                                jsonrpc::invalid_message(&invalid.reason, &invalid.pointer, rev);
                            self.push_at(f, index);
                            self.salvage(&element, index);
                        }
                    }
                }
            }
        }
    }

    /// Checks one valid message found at `base` in its frame, then correlates a response,
    /// answers a request, and keeps what the server sent on its own for scenarios.
    async fn ingest_message(
        &mut self,
        message: Message,
        value: &Value,
        index: Option<usize>,
        base: &str,
    ) {
        let f = check::meta::key_names(value, self.revision, base);
        self.push_all(f, index);
        match message {
            Message::Response(response) => self.ingest_response(response, value, index, base),
            Message::Notification(n) => {
                self.check_schema(value, index, base, &n.method, MessageKind::Notification);
                if n.method == "notifications/progress"
                    && let Some(params) = n.params.as_ref()
                {
                    self.check_progress(params, index, base);
                }
                if n.method == "notifications/tasks/status"
                    && let Some(params) = n.params.as_ref()
                {
                    self.requests.task_seen(params, None);
                }
                if n.method == "notifications/cancelled"
                    && self.server_requests.len() < super::SERVER_REQUESTS_KEPT
                {
                    let f = check::cancellation::server_cancelled(
                        n.params.as_ref(),
                        &self.server_requests,
                        &self.sent.listens,
                        self.revision,
                        base,
                    );
                    self.push_all(f, index);
                }
                if n.method == "notifications/message" {
                    let f = check::stateless::log_message(
                        n.params.as_ref(),
                        self.sent.lowest_log_level,
                        self.revision,
                    );
                    self.push_all(f, index);
                    let f = check::logging::below_set_level(
                        n.params.as_ref(),
                        self.sent.log_level_set,
                        self.revision,
                    );
                    self.push_all(f, index);
                }
                let f = check::stateless::change_notification(
                    &n.method,
                    !self.sent.listens.is_empty(),
                    self.revision,
                );
                self.push_all(f, index);
                let f = check::stateless::subscription_id(
                    &n.method,
                    n.params.as_ref(),
                    &self.sent.listens,
                    self.revision,
                    base,
                );
                self.push_all(f, index);
                let declared = self.profile.as_ref().map(|p| &p.capabilities);
                let finding =
                    capabilities::server_notification(&n.method, declared, self.revision, base);
                self.push_all(finding, index);
                self.keep_unsolicited(Unsolicited {
                    frame: index,
                    message: Message::Notification(n),
                });
            }
            Message::Request(request) => {
                let rev = self.revision;
                match jsonrpc::notification_with_id(&request.method, &request.id, rev, base) {
                    // Its schema is a notification's; as a request it would only add an
                    // "unknown request method" warning for the same fault.
                    Some(f) => self.push_at(f, index),
                    None => {
                        self.check_schema(value, index, base, &request.method, MessageKind::Request)
                    }
                }
                if self.server_requests.len() < super::SERVER_REQUESTS_KEPT {
                    self.server_requests.push(request.id.clone());
                }
                self.answer_server_request(&request, index).await;
                self.keep_unsolicited(Unsolicited {
                    frame: index,
                    message: Message::Request(request),
                });
            }
        }
    }

    /// Progress names a request still in progress (a timed-out one may still be running
    /// on the server) and increases per token; it also restarts that request's timeout.
    fn check_progress(&mut self, params: &Value, index: Option<usize>, base: &str) {
        let state = match params.get("progressToken") {
            None => TokenState::Unknown, // the check leaves it to the schema
            Some(token) => match self.requests.progress_on(token) {
                Some((id, true)) => TokenState::Active(id),
                Some((id, false)) => TokenState::TimedOut(id),
                None => TokenState::Unknown,
            },
        };
        let findings =
            progress::notification(params, state, &mut self.progress, self.revision, base);
        self.push_all(findings, index);
    }
}

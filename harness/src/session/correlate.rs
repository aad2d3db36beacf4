//! Sending requests and matching responses to them by id: the waiting, the timeouts,
//! and the id rules a response can break while it is being matched.

use serde_json::{Value, json};
use std::time::Duration;

use super::gate::ListPage;
use super::requests::Pending;
use super::{
    EXIT_GRACE, MAX_TIMEOUT_EXTENSIONS, Reply, Session, SessionError, Unsolicited, stateless,
};
use crate::check::{self, jsonrpc};
use crate::outcome::Direction;
use crate::protocol::{
    ErrorObject, Message, Outcome, RequestId, Response, notification_json, request_json,
};
use crate::schema::SchemaTarget;
use crate::transport::{ExitInfo, TransportError};

impl Session {
    /// The next id mcpcheck would use.
    pub fn allocate_id(&mut self) -> RequestId {
        // Skips ids a scenario chose itself, so the two never collide.
        self.requests.allocate()
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

    /// At the stateless revision: the capabilities a request's `_meta` declares, and those
    /// declared by the requests before it (merged); the request's own join them.
    fn declared_by(&mut self, params: Option<&Value>) -> Option<(Value, Value)> {
        if self.config.revision.has_handshake() {
            return None;
        }
        let declared = params
            .and_then(|p| p.pointer("/_meta/io.modelcontextprotocol~1clientCapabilities"))
            .cloned()
            .unwrap_or_else(|| json!({}));
        let earlier = self.sent.declare(&declared);
        Some((declared, earlier))
    }

    /// The client capabilities `pending` declared and those declared before it; a request
    /// sent without them (raw bytes) is judged by the session's configured capabilities.
    fn declared_for(&self, pending: &Pending) -> (Value, Value) {
        pending
            .declared
            .clone()
            .unwrap_or_else(|| (self.config.client_capabilities.clone(), json!({})))
    }

    /// `params` as sent at the session's revision: the stateless revision carries version,
    /// capabilities and client info per request; the handshake revisions send them as given.
    pub fn stamp_params(&self, params: Option<Value>) -> Option<Value> {
        if self.config.revision.has_handshake() {
            params
        } else {
            stateless::with_meta(
                params,
                &stateless::request_meta(
                    self.config.revision.as_str(),
                    &self.config.client_capabilities,
                ),
            )
        }
    }

    /// Sends a request without waiting (for concurrency); collect with [`wait_reply`](Self::wait_reply).
    pub async fn send_request(
        &mut self,
        id: RequestId,
        method: &str,
        params: Option<Value>,
    ) -> Result<(), SessionError> {
        let params = self.stamp_params(params);
        let bytes = request_json(&id, method, params.as_ref());
        self.admit(&bytes)?;
        if method == "subscriptions/listen" {
            self.sent.listens.push(id.to_value());
        }
        let requested = params
            .as_ref()
            .and_then(|p| p.get("_meta"))
            .and_then(|m| m.get(crate::check::stateless::LOG_LEVEL))
            .and_then(Value::as_str)
            .and_then(crate::check::stateless::log_rank);
        if let Some(rank) = requested {
            self.sent.log_level_requested(rank);
        }
        let declared = self.declared_by(params.as_ref());
        let progress_token = params
            .as_ref()
            .and_then(|p| p.pointer("/_meta/progressToken"))
            .cloned();
        let log_level = (method == "logging/setLevel")
            .then(|| params.as_ref()?.get("level")?.as_str())
            .flatten()
            .and_then(crate::check::stateless::log_rank);
        self.requests.open(
            id,
            Pending {
                method: method.to_owned(),
                revision: self.revision,
                progress_token,
                log_level,
                declared,
                page: (method == "tools/list").then(|| list_page(params.as_ref())),
                task_augmented: params.as_ref().is_some_and(|p| p.get("task").is_some()),
                kind: super::pace::kind_of(method, params.as_ref()),
                sent: std::time::Instant::now(),
                alone: false,
            },
        );
        self.transcript
            .push(Direction::Sent, String::from_utf8_lossy(&bytes));
        match self.transport.send(bytes).await {
            Ok(()) => Ok(()),
            Err(source) => Err(self.send_failed(method, source).await),
        }
    }

    /// A failed write: unless the server merely stopped reading, a server process is
    /// gone, so wait a moment for its exit status, which names what happened better than a
    /// broken pipe. Over HTTP there is no process of the transport's to wait for.
    pub(super) async fn send_failed(
        &mut self,
        method: &str,
        source: TransportError,
    ) -> SessionError {
        if self.transport.pid().is_some() && !matches!(source, TransportError::WriteTimeout(_)) {
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
        self.admit(&bytes)?;
        self.transcript
            .push(Direction::Sent, String::from_utf8_lossy(&bytes));
        match self.transport.send(bytes).await {
            Ok(()) => {
                // A scenario that sends it itself (`skip_initialized`) completes the
                // handshake as the default one would.
                if method == "notifications/initialized" && self.profile.is_some() {
                    self.sent.initialized = true;
                }
                Ok(())
            }
            Err(source) => Err(self.send_failed(method, source).await),
        }
    }

    /// Waits for the response to `id`, processing everything else that arrives meanwhile.
    pub async fn wait_reply(&mut self, id: &RequestId) -> Result<Reply, SessionError> {
        let method = self.requests.method_of(id).unwrap_or_default().to_owned();
        let kind = self.requests.kind_of(id).unwrap_or_default().to_owned();
        // A server may need time to start: the first request gets the startup allowance
        // (in 2026-07-28 that is server/discover, or whatever a scenario sends first).
        let starting = method == "initialize" || !self.peer.up;
        let (timeout, bounded) = match starting {
            true => (self.config.startup_timeout.max(self.config.timeout), None),
            false => self.answer_window(id, self.config.timeout),
        };
        // Only once: a server silent from the start does not stretch every later wait.
        self.peer.up = true;
        let mut deadline = tokio::time::Instant::now() + timeout;
        let mut extensions = 0;
        loop {
            if let Some(reply) = self.requests.take_reply(id) {
                return Ok(reply);
            }
            if let Some(reason) = self.requests.take_spoiled(id) {
                return Err(SessionError::Unusable { method, reason });
            }
            // A client may restart its timeout when the request reports progress
            // (spec: basic/lifecycle#timeouts), so long-running tools are not hangs.
            if self.requests.take_progressed(id) && extensions < MAX_TIMEOUT_EXTENSIONS {
                extensions += 1;
                deadline = tokio::time::Instant::now() + timeout;
            }
            if self.peer.stdout_closed {
                self.requests.drop_pending(id);
                self.await_exit_info().await;
                return Err(SessionError::Closed {
                    method,
                    exit: self.peer.exit.clone(),
                });
            }
            if !self.receive_one(deadline).await {
                if bounded.is_none() && !starting {
                    let request = format!("`{method}` (id {id})");
                    self.config.pace.timed_out(&kind, request);
                }
                self.expire(id);
                self.cancel_after_timeout(id, &method).await;
                return Err(SessionError::Timeout {
                    method,
                    after: timeout,
                    bounded,
                });
            }
        }
    }

    async fn await_exit_info(&mut self) {
        if self.peer.exit.is_some() {
            return;
        }
        let deadline = tokio::time::Instant::now() + EXIT_GRACE;
        while self.peer.exit.is_none() {
            match tokio::time::timeout_at(deadline, self.transport.recv()).await {
                Ok(Some(item)) => self.ingest(item).await,
                _ => break,
            }
        }
    }
    /// Registers a request that was sent some other way (raw bytes), so its response is
    /// correlated and checked like any other.
    pub fn expect_reply(&mut self, id: RequestId, method: &str) {
        // A progress token in raw bytes already sent (or sent next) joins it on opening.
        let mut pending = Pending::of(method, self.revision);
        pending.page = (method == "tools/list").then_some(ListPage::Unknown);
        self.requests.open(id, pending);
    }

    /// Whether the server has been proven to lose answers in this run (see
    /// [`Pace`](super::Pace)): a lost answer is then its way, not a sign of a stuck session.
    pub fn loses_answers(&self) -> bool {
        self.config.pace.proven()
    }

    /// How long a scenario waits for the answer to `id` within its `window`: less once the
    /// server has proven to lose answers (see [`Pace`](super::Pace)), with why.
    pub fn answer_window(&self, id: &RequestId, window: Duration) -> (Duration, Option<String>) {
        // Before the session's first answer, the wait also covers the server's start.
        let started = self.requests.any_answered();
        let bound = (self.requests.kind_of(id))
            .filter(|_| started)
            .and_then(|kind| self.config.pace.bound(kind, window));
        match bound {
            Some(bound) => (bound.after, Some(bound.because)),
            None => (window, None),
        }
    }

    /// `window`, or the start-up allowance if that is longer and the server has not
    /// answered anything yet: a response awaited before the first one (a request sent
    /// before `initialize`) also waits for a slow server to start, as `wait_reply` does,
    /// so a verdict does not depend on how loaded the machine is.
    pub fn window_for_first_answer(&mut self, window: Duration) -> Duration {
        if self.peer.up {
            return window;
        }
        self.peer.up = true;
        window.max(self.config.startup_timeout)
    }

    /// Waits up to `window` for the response to `id` without treating its absence as a
    /// failure (no timeout finding, no cancellation): for "nothing comes back" checks.
    pub async fn poll_reply(&mut self, id: &RequestId, window: Duration) -> Option<Reply> {
        let deadline = tokio::time::Instant::now() + window;
        loop {
            if let Some(reply) = self.requests.take_reply(id) {
                return Some(reply);
            }
            // It came, unusable: `unusable_answer` tells why.
            if self.requests.is_spoiled(id)
                || self.peer.stdout_closed
                || !self.receive_one(deadline).await
            {
                return None;
            }
        }
    }

    /// Why the answer to `id` could not be used, once [`Session::poll_reply`] gave up on
    /// it for that reason: a scenario then says so instead of "no response".
    pub fn unusable_answer(&mut self, id: &RequestId) -> Option<String> {
        self.requests.take_spoiled(id)
    }

    /// Waits up to `window` for the server process to end.
    pub async fn wait_exit(&mut self, window: Duration) -> Option<ExitInfo> {
        let deadline = tokio::time::Instant::now() + window;
        while self.peer.exit.is_none() {
            match tokio::time::timeout_at(deadline, self.transport.recv()).await {
                Ok(Some(item)) => self.ingest(item).await,
                Ok(None) => {
                    self.peer.stdout_closed = true;
                    // Output is closed; the exit itself may still be on its way.
                    if tokio::time::Instant::now() >= deadline {
                        break;
                    }
                    tokio::time::sleep(Duration::from_millis(10)).await;
                }
                Err(_) => break,
            }
        }
        self.peer.exit.clone()
    }
    /// After an invalid frame, still resolves the request it plainly answers, so a
    /// server with one defect gets judged on the rest instead of timing out everywhere;
    /// an error under a null or omitted id (a parse error's) is kept for the scenario
    /// that waits for one, as a valid one would be.
    pub(super) fn salvage(&mut self, value: &Value, index: Option<usize>) {
        let raw_id = value.get("id");
        // The request the frame plainly answers, if it names one.
        let key = raw_id
            .and_then(RequestId::from_value)
            .and_then(|id| self.requests.matching(&id));
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
            // It answers that request, unusably: the wait for it ends now, not at the
            // timeout (a `ping` answered with no `result`).
            (None, None) => {
                if let Some(key) = key {
                    self.spoil(&key, "the answer has neither `result` nor `error`".into());
                }
                return;
            }
        };
        if raw_id.is_none_or(Value::is_null) {
            if let Outcome::Error(_) = outcome {
                let message = Message::Response(Response {
                    id: None,
                    id_omitted: raw_id.is_none(),
                    outcome,
                });
                self.keep_unsolicited(Unsolicited {
                    frame: index,
                    message,
                });
            }
            return;
        }
        let Some((key, (pending, late))) =
            key.and_then(|k| Some((k.clone(), self.requests.take(&k)?)))
        else {
            return;
        };
        self.time_answer(&pending, late);
        // A listing in a broken envelope still tells what the server's tools say of
        // themselves: the gate learns them, or a server that breaks the envelope on every
        // frame would have none of its read-only tools called.
        if let (Some(page), Outcome::Result(result)) = (&pending.page, &outcome) {
            super::gate::lock(&self.gate).learn(page, result);
        }
        // So do the tasks it creates or reports: their progress tokens stay active.
        if let Outcome::Result(result) = &outcome {
            self.learn_tasks(&key, &pending, result);
        }
        let reply = (!late).then_some(Reply {
            frame: index,
            outcome,
            salvaged: true,
        });
        self.requests.answer(key, reply);
    }

    /// What `result` (answering `pending`, request `key`) shows of tasks: one a
    /// task-augmented request created (its progress token stays active while the task
    /// works), or a task's status as tasks/get, tasks/cancel (a Task) or tasks/list show it.
    fn learn_tasks(&mut self, key: &RequestId, pending: &Pending, result: &Value) {
        if pending.task_augmented
            && let Some(task) = result.get("task")
        {
            let created_by = pending.progress_token.as_ref().map(|t| (key, t));
            self.requests.task_seen(task, created_by);
        }
        if pending.method.starts_with("tasks/") {
            self.requests.task_seen(result, None);
            let listed = result.get("tasks").and_then(Value::as_array);
            for task in listed.into_iter().flatten() {
                self.requests.task_seen(task, None);
            }
        }
    }

    /// Tells the run's pace how long `pending`'s answer took (when nothing else was
    /// awaited: a burst's answers queue), or that it came after its wait had ended (the
    /// server is slow, not lossy).
    fn time_answer(&self, pending: &Pending, late: bool) {
        if late {
            self.config.pace.late();
        } else if pending.alone {
            let pace = &self.config.pace;
            pace.answered(&pending.kind, pending.sent.elapsed());
        }
    }

    /// Ends the wait for pending request `key`: its answer came, unusable (`why`). It moves
    /// to the expired ones, so a usable answer after all is still checked.
    pub(super) fn spoil(&mut self, key: &RequestId, why: String) {
        self.requests.spoil(key, why);
    }

    /// Gives up on pending request `id` (a late answer is still checked, not awaited);
    /// whether it was pending.
    pub(super) fn expire(&mut self, id: &RequestId) -> bool {
        self.requests.give_up(id)
    }

    /// Takes in one message (or notes that the output closed); `false` when `deadline`
    /// passed first. Every wait of the session is a loop of these.
    pub(super) async fn receive_one(&mut self, deadline: tokio::time::Instant) -> bool {
        match tokio::time::timeout_at(deadline, self.transport.recv()).await {
            Ok(Some(item)) => {
                self.ingest(item).await;
                true
            }
            Ok(None) => {
                self.peer.stdout_closed = true;
                true
            }
            Err(_) => false,
        }
    }

    /// After a timeout the client should cancel the request (spec: `basic/lifecycle#timeouts`);
    /// `initialize` is never cancelled.
    async fn cancel_after_timeout(&mut self, id: &RequestId, method: &str) {
        if method == "initialize" || self.peer.stdout_closed {
            return;
        }
        let params = json!({ "requestId": id.to_value(), "reason": "mcpcheck: timed out waiting for the response" });
        let _ = self.notify("notifications/cancelled", Some(params)).await;
    }

    pub(super) fn ingest_response(
        &mut self,
        response: Response,
        value: &Value,
        index: Option<usize>,
        base: &str,
    ) {
        let rev = self.revision;
        self.push_all(
            jsonrpc::omitted_error_id(response.id_omitted, rev, base),
            index,
        );
        let Some(id) = response.id.clone() else {
            // A null id answers a request whose id could not be read; nothing to correlate.
            if let Outcome::Error(_) = &response.outcome {
                self.check_error_schema(value, index, base);
            }
            self.keep_unsolicited(Unsolicited {
                frame: index,
                message: Message::Response(response),
            });
            return;
        };
        let matched = self.requests.matching(&id);
        let taken = matched.as_ref().and_then(|key| self.requests.take(key));
        let (Some(key), Some((pending, late))) = (matched, taken) else {
            let answered = self.requests.was_answered(&id);
            // The handshake is the only request sent: an answer under another id can only
            // be its answer, and no answer will come under its own.
            if let Some(key) = self.requests.lone_opening() {
                self.spoil(
                    &key,
                    format!("it was answered under id {id}, not {key} (the only request sent)"),
                );
            }
            self.push_all(
                [jsonrpc::unmatched_response(&id, answered, rev, base)],
                index,
            );
            self.keep_unsolicited(Unsolicited {
                frame: index,
                message: Message::Response(response),
            });
            return;
        };
        self.push_all(jsonrpc::id_echo(&key, &id, rev, base), index);
        self.time_answer(&pending, late);
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
            Outcome::Result(result) => self.check_result(&key, &pending, result, index, base),
            Outcome::Error(error) => {
                let f = jsonrpc::error_code(error.code, pending.revision, base);
                self.push_all(f, index);
                if !pending.revision.has_handshake() {
                    let (declared, _) = self.declared_for(&pending);
                    let refused = check::stateless::missing_capability(error, &declared, rev, base);
                    self.push_all(refused, index);
                }
                self.check_error_schema(value, index, base)
            }
        }
        let reply = (!late).then(|| Reply {
            frame: index,
            outcome: response.outcome,
            salvaged: false,
        });
        self.requests.answer(key, reply);
    }

    /// The checks a result gets for the request it answers: its schema (by the method, or
    /// the 2026-07-28 `resultType`), the stateless rules, completion values, and what it
    /// teaches the session (the log level set, the tools the gate knows).
    fn check_result(
        &mut self,
        key: &RequestId,
        pending: &Pending,
        result: &Value,
        index: Option<usize>,
        base: &str,
    ) {
        let rev = self.revision;
        self.sent.log_level_set = pending.log_level.or(self.sent.log_level_set);
        let mut result_def = self.result_definition(pending.revision, &pending.method);
        if !pending.revision.has_handshake() {
            let typed = check::stateless::result_type(result, rev, base);
            self.push_all(typed.finding, index);
            let (declared, earlier) = self.declared_for(pending);
            let asked =
                check::stateless::input_required(&pending.method, result, &declared, rev, base);
            self.push_all(asked, index);
            let carried =
                check::stateless::carried_capabilities(result, &declared, &earlier, rev, base);
            self.push_all(carried, index);
            result_def = typed.definition.or(result_def);
            if pending.method == "tools/list" {
                let base = format!("{base}/result");
                self.push_all(check::x_mcp_header::tool_list(result, rev, &base), index);
            }
        }
        if pending.task_augmented && result.get("task").is_some() {
            result_def = self.task_result_definition(pending.revision).or(result_def);
        }
        self.learn_tasks(key, pending, result);
        if let Some(page) = &pending.page {
            super::gate::lock(&self.gate).learn(page, result);
        }
        if pending.method == "completion/complete" {
            let base = format!("{base}/result");
            self.push_all(check::completion::result(result, rev, &base), index);
        }
        if let Some(def) = result_def {
            self.validate(
                pending.revision,
                &SchemaTarget::Definition(def),
                result,
                index,
                &format!("{base}/result"),
            );
        }
    }
}

/// The `tools/list` page a request built from `params` asks for.
fn list_page(params: Option<&Value>) -> ListPage {
    match params.and_then(|p| p.get("cursor")) {
        None | Some(Value::Null) => ListPage::First,
        Some(Value::String(c)) => ListPage::After(c.clone()),
        Some(_) => ListPage::Unknown,
    }
}

#[cfg(test)]
mod tests {
    use std::time::Duration;

    use super::*;
    use crate::session::scripted::session;

    /// A `ping` answered under its id with neither `result` nor `error` is decided when
    /// the answer comes, with what was wrong: not left to the timeout (or, here, to the
    /// end of the server's output).
    #[tokio::test]
    async fn an_answer_without_result_or_error_ends_the_wait_with_the_reason() {
        let mut s = session(&[r#"{"jsonrpc":"2.0","id":1}"#]);
        match s.request("ping", None).await {
            Err(SessionError::Unusable { reason, .. }) => {
                assert!(reason.contains("neither"), "{reason}")
            }
            other => panic!("expected an unusable answer, got {other:?}"),
        }
    }

    /// The same through a scenario's own wait for an id it sent raw: the wait ends, and
    /// the scenario can say why.
    #[tokio::test]
    async fn a_raw_requests_unusable_answer_is_told_to_its_wait() {
        let mut s = session(&[r#"{"jsonrpc":"2.0","id":7}"#]);
        let id = RequestId::int(7);
        s.expect_reply(id.clone(), "ping");
        assert!(s.poll_reply(&id, Duration::from_secs(5)).await.is_none());
        let why = s.unusable_answer(&id).expect("the reason is kept");
        assert!(why.contains("neither"), "{why}");
    }

    /// An error under an omitted id in a frame that breaks JSON-RPC otherwise (`"jsonrpc":
    /// "1.0"`) still reaches a scenario waiting for a parse error's answer.
    #[tokio::test]
    async fn a_salvaged_error_without_id_is_kept_for_the_scenario() {
        let mut s =
            session(&[r#"{"jsonrpc":"1.0","error":{"code":-32700,"message":"Parse error"}}"#]);
        s.pump(Duration::from_millis(50)).await;
        let kept = s.take_unsolicited();
        assert!(
            kept.iter().any(|u| matches!(
                &u.message,
                Message::Response(Response { id: None, outcome: Outcome::Error(e), .. }) if e.code == -32700
            )),
            "{kept:?}"
        );
    }
}

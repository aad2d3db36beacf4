//! Requests and their replies: sending (under the tool-call policy), correlating raw
//! requests, captures, and the checks a step's `expect` puts on the response.

use serde_json::{Value, json};

use super::{Executor, Stop};
use crate::outcome::Finding;
use crate::protocol::{ErrorObject, Outcome, RequestId};
use crate::scenario::matcher::{MatchContext, check_all};
use crate::scenario::model::{Check, OnError, OnTimeout, RequestStep, ResponseExpectation};
use crate::session::{Reply, SessionError, raw_requests};

impl Executor<'_> {
    /// Sends one request; `None` when its `requires` are not met.
    pub(super) async fn send(
        &mut self,
        r: &RequestStep,
    ) -> Result<Option<(RequestId, String)>, Stop> {
        Ok(self
            .send_params(r)
            .await?
            .map(|(id, method, _)| (id, method)))
    }

    /// [`send`](Self::send), also giving the params as sent (before the session's `_meta`).
    pub(super) async fn send_params(
        &mut self,
        r: &RequestStep,
    ) -> Result<Option<(RequestId, String, Option<Value>)>, Stop> {
        if !r.requires.is_empty() {
            let caps = self.session.profile().map(|p| &p.capabilities);
            if !caps.is_some_and(|c| r.requires.iter().all(|need| need.met_by(c))) {
                return Ok(None);
            }
        }
        let method = self.render_text(&r.method, r.line)?;
        let mut params = r
            .params
            .as_ref()
            .map(|p| self.render(p, r.line))
            .transpose()?;
        if method == "tools/call" {
            // Ask for progress, so a long-running tool that reports it is not taken for a hang;
            // a fresh token each time, since a loop or a `concurrent` step repeats the request.
            // A scenario that writes `_meta` itself sends exactly that: with no token, to see
            // that none comes (basic/utilities/progress).
            if let Some(Value::Object(p)) = &mut params
                && !p.contains_key("_meta")
            {
                let token = format!("{}-line{}", self.fresh(), r.line);
                p.insert("_meta".into(), json!({ "progressToken": token }));
            }
        }
        let id = match &r.id {
            Some(Value::String(s)) => RequestId::String(s.clone()),
            Some(Value::Number(n)) => RequestId::Number(n.to_string()),
            Some(other) => {
                return Err(Stop::Error(format!(
                    "{}:{}: id {other} is not a string or number",
                    self.scenario.source, r.line
                )));
            }
            None => self.session.allocate_id(),
        };
        // The session's tool-call gate decides whether a `tools/call` leaves; a refused
        // one stops the steps it belongs to (`Stop::Refused`), recorded as a policy skip.
        match self
            .session
            .send_request(id.clone(), &method, params.clone())
            .await
        {
            Ok(()) => {}
            Err(crate::session::SessionError::Refused(refused)) => {
                return Err(self.refused(refused, Some(r.line)));
            }
            Err(e) => return Err(self.session_failure(&e)),
        }
        if method == "tools/call" {
            self.coverage.tool_call_sent();
        }
        Ok(Some((id, method, params)))
    }

    pub(super) async fn request(&mut self, r: &RequestStep) -> Result<(), Stop> {
        let Some((mut id, method, params)) = self.send_params(r).await? else {
            return Ok(());
        };
        if let Some(ResponseExpectation::Nothing(window)) = &r.expect {
            if let Some(reply) = self.session.poll_reply(&id, *window).await {
                let f = self.fail(
                    r.line,
                    format!("`{method}` was answered, but no response was expected"),
                    reply.frame,
                );
                self.findings.push(f);
            }
            return Ok(());
        }
        let reply = match &r.answer_input {
            // The final answer, after the input rounds; its id is the last retry's.
            Some(answer) => {
                let (last, reply) = self.answer_input(r, answer, &method, params, id).await?;
                id = last;
                Ok(reply)
            }
            None => self.session.wait_reply(&id).await,
        };
        if r.on_timeout == OnTimeout::Next {
            match &reply {
                Err(SessionError::Timeout { after, .. }) => {
                    self.coverage.timed_request(false);
                    return Err(Stop::Next(format!(
                        "`{method}` got no answer within {}, not judged here (`on_timeout: next`)",
                        humantime::format_duration(*after)
                    )));
                }
                Ok(_) => self.coverage.timed_request(true),
                Err(_) => {}
            }
        }
        match reply {
            Ok(reply) if r.on_error == OnError::Next => {
                if let Outcome::Error(e) = &reply.outcome {
                    self.coverage.error_allowed();
                    return Err(Stop::Next(format!(
                        "`{method}` answered error {} ({}), which the spec allows; nothing to judge",
                        e.code, e.message
                    )));
                }
                self.coverage.result_judged();
                self.after_reply(r, &reply, &method, &id);
                Ok(())
            }
            Ok(reply) => {
                self.after_reply(r, &reply, &method, &id);
                Ok(())
            }
            Err(e) => Err(self.session_failure(&e)),
        }
    }

    pub(super) fn after_reply(
        &mut self,
        r: &RequestStep,
        reply: &Reply,
        method: &str,
        id: &RequestId,
    ) {
        let message = response_value(id, reply);
        for (name, pointer) in &r.capture {
            match message.pointer(pointer) {
                Some(v) => {
                    self.vars.insert(name.clone(), v.clone());
                }
                None => {
                    let f = self.fail(r.line, format!("capture `{name}`: the response to `{method}` has nothing at `{pointer}`"), reply.frame)
                        .pointer(pointer.clone());
                    self.findings.push(f);
                }
            }
        }
        if let Some(expect) = &r.expect {
            self.check_reply(expect, reply, r.line, method);
        }
    }

    /// `one_of`: each alternative is tried on its own; the response passes if one holds,
    /// else one finding lists what each alternative found.
    fn check_one_of(
        &mut self,
        alternatives: &[ResponseExpectation],
        reply: &Reply,
        line: usize,
        method: &str,
    ) {
        let before = self.findings.len();
        let mut failures = Vec::new();
        for alt in alternatives {
            self.check_reply(alt, reply, line, method);
            let new: Vec<Finding> = self.findings.drain(before..).collect();
            if new.is_empty() {
                return;
            }
            failures.push(
                new.iter()
                    .map(|f| f.message.clone())
                    .collect::<Vec<_>>()
                    .join("; "),
            );
        }
        let pointer = match reply.outcome {
            Outcome::Result(_) => "/result",
            Outcome::Error(_) => "/error",
        };
        let detail = failures
            .iter()
            .enumerate()
            .map(|(i, m)| format!("({}) {m}", i + 1))
            .collect::<Vec<_>>()
            .join(" ");
        let f = self
            .fail(
                line,
                format!("`{method}`: the response matches none of the alternatives: {detail}"),
                reply.frame,
            )
            .pointer(pointer);
        self.findings.push(f);
    }

    pub(super) fn check_reply(
        &mut self,
        expect: &ResponseExpectation,
        reply: &Reply,
        line: usize,
        method: &str,
    ) {
        let (checks, target, base) = match (expect, &reply.outcome) {
            (ResponseExpectation::Result(checks), Outcome::Result(r)) => {
                (checks, r.clone(), "/result")
            }
            (ResponseExpectation::Result(_), Outcome::Error(e)) => {
                let f = self
                    .fail(
                        line,
                        format!(
                            "`{method}` answered with error {} \"{}\"; a result was expected",
                            e.code, e.message
                        ),
                        reply.frame,
                    )
                    .pointer("/error")
                    .expected("a result");
                self.findings.push(f);
                return;
            }
            (ResponseExpectation::Error { codes, checks }, Outcome::Error(e)) => {
                if !codes.is_empty() && !codes.contains(&e.code) {
                    let want = or_list(codes);
                    let f = self
                        .fail(
                            line,
                            format!(
                                "`{method}` answered with error code {}; expected {want}",
                                e.code
                            ),
                            reply.frame,
                        )
                        .pointer("/error/code")
                        .expected(want);
                    self.findings.push(f);
                }
                (checks, error_value(e), "/error")
            }
            (ResponseExpectation::Error { codes, .. }, Outcome::Result(_)) => {
                let want = if codes.is_empty() {
                    "an error".to_owned()
                } else {
                    format!("error {}", or_list(codes))
                };
                let f = self
                    .fail(
                        line,
                        format!("`{method}` answered with a result; {want} was expected"),
                        reply.frame,
                    )
                    .pointer("/result")
                    .expected(want);
                self.findings.push(f);
                return;
            }
            (ResponseExpectation::Any(checks), Outcome::Result(r)) => {
                (checks, r.clone(), "/result")
            }
            (ResponseExpectation::Any(checks), Outcome::Error(e)) => {
                (checks, error_value(e), "/error")
            }
            (ResponseExpectation::OneOf(alternatives), _) => {
                self.check_one_of(alternatives, reply, line, method);
                return;
            }
            (ResponseExpectation::Nothing(_), _) => {
                let f = self.fail(
                    line,
                    format!("`{method}` was answered, but no response was expected"),
                    reply.frame,
                );
                self.findings.push(f);
                return;
            }
        };
        self.apply_checks(
            checks,
            &target,
            base,
            reply.frame,
            &format!("the response to `{method}`"),
        );
    }

    pub(super) fn apply_checks(
        &mut self,
        checks: &[Check],
        target: &Value,
        base: &str,
        frame: Option<usize>,
        what: &str,
    ) {
        let schema = self.session.schema();
        let cx = MatchContext {
            vars: &self.vars,
            schema: schema.as_ref().as_ref().ok(),
        };
        let report = check_all(checks, target, cx);
        self.unchecked.extend(
            report
                .skipped
                .into_iter()
                .map(|s| format!("{}: {s}", self.scenario.source)),
        );
        for m in report.mismatches {
            let at = if m.pointer.is_empty() {
                "/".to_owned()
            } else {
                m.pointer.clone()
            };
            let f = self
                .fail(
                    m.line,
                    format!(
                        "{what}: at `{at}` expected {}, got {}",
                        m.expected, m.actual
                    ),
                    frame,
                )
                .pointer(format!("{base}{}", m.pointer))
                .expected(m.expected);
            self.findings.push(f);
        }
    }

    /// Requests inside raw bytes are registered so their responses are correlated, even
    /// those serde_json cannot read (see [`raw_requests`]).
    pub(super) fn register_raw_requests(&mut self, text: &str) {
        for line in text.lines() {
            for r in raw_requests(line.as_bytes()) {
                self.session.expect_reply(r.id, &r.method);
            }
        }
    }
}

/// A request id written in a scenario or raw bytes (a string or a number).
pub(super) fn id_of(v: &Value) -> Option<RequestId> {
    match v {
        Value::String(s) => Some(RequestId::String(s.clone())),
        Value::Number(n) => Some(RequestId::Number(n.to_string())),
        _ => None,
    }
}

/// The response as a JSON-RPC message value, for `capture` pointers.
fn response_value(id: &RequestId, reply: &Reply) -> Value {
    match &reply.outcome {
        Outcome::Result(r) => json!({"jsonrpc": "2.0", "id": id.to_value(), "result": r}),
        Outcome::Error(e) => {
            json!({"jsonrpc": "2.0", "id": id.to_value(), "error": error_value(e)})
        }
    }
}

/// An error object as the JSON value checks look at.
fn error_value(e: &ErrorObject) -> Value {
    json!({"code": e.code, "message": e.message, "data": e.data})
}

/// Error codes as words: `-32602 or -32601`.
fn or_list(codes: &[i64]) -> String {
    codes
        .iter()
        .map(|c| c.to_string())
        .collect::<Vec<_>>()
        .join(" or ")
}

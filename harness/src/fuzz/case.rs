//! One case on a live server: its writes go out back to back, the answers they require are
//! awaited (tool calls that report progress may run long), and the oracles judge the rest.

use std::time::{Duration, Instant};

use serde_json::{Value, json};

use super::driver::Fuzzer;
use super::generate::Generator;
use super::oracle::Observed;
use super::process::{Ping, Proc};
use super::wire::{Expected, Framing, Wire};
use crate::protocol::{Message, RequestId};
use crate::session::{Reply, SessionError};
use crate::transport::TransportError;

/// How a wait for a tool call ended (`None`: the timeout passed in silence).
enum Awaited {
    Reply(Reply),
    /// No answer yet, but progress notifications: the tool is running.
    Progressing,
}

impl Fuzzer<'_> {
    /// Runs one case on a live process. Returns what the oracles saw.
    pub(super) async fn run_case(
        &mut self,
        p: &mut Proc,
        case: &[Wire],
        generator: &mut Generator<'_>,
    ) -> Vec<Observed> {
        let mut observed = Vec::new();
        let mut unawaited = false;
        let mut last_method = "(handshake)".to_owned();
        // The case's writes go out back to back; the answers are awaited after.
        let mut waiting: Vec<(Expected, bool)> = Vec::new();
        for w in case {
            last_method = w.method.clone();
            match self.send(p, w).await {
                Ok(expected) => {
                    // Writes with no answer to wait for prove nothing about liveness.
                    unawaited |= expected.is_empty();
                    let valid = w.origin == "valid";
                    waiting.extend(expected.into_iter().map(|e| (e, valid)));
                }
                Err(o) => {
                    observed.push(o);
                    return observed;
                }
            }
        }
        // A request the case itself cancels may go unanswered (the receiver SHOULD NOT
        // respond to a cancelled request: basic/utilities/cancellation).
        let cancelled = cancelled_ids(case);
        waiting.retain(|(e, _)| !cancelled.contains(&e.id));
        let valid: Vec<bool> = waiting.iter().map(|(_, v)| *v).collect();
        let expected: Vec<Expected> = waiting.into_iter().map(|(e, _)| e).collect();
        let ids: Vec<RequestId> = expected.iter().map(|e| e.id.clone()).collect();
        match self.wait(p, expected).await {
            Ok(replies) => {
                for (e, reply) in replies {
                    let Some(i) = ids.iter().position(|id| *id == e.id) else {
                        continue;
                    };
                    if valid[i]
                        && reply.result().is_some()
                        && let Some(w) = case
                            .iter()
                            .find(|w| w.origin == "valid" && contains_id(&w.bytes, &e.id))
                        && let Ok(v) = serde_json::from_slice::<Value>(&w.bytes)
                    {
                        generator.remember(v);
                    }
                }
            }
            Err(o) => {
                let fatal = o.fatal();
                observed.push(o);
                if fatal {
                    return observed;
                }
            }
        }
        // A line left open would join the next case's first write: close it here.
        if p.lines.is_open() {
            let nl = Wire::raw(b"\n".to_vec(), "(raw)", "framing");
            if let Err(o) = self.write(p, &nl).await {
                observed.push(o);
                return observed;
            }
        }
        if unawaited {
            match self.ping(p).await {
                Ping::Alive => {}
                Ping::Silent => {
                    observed.push(self.judge().hang(p, &last_method, None));
                    return observed;
                }
                Ping::Gone(why) => {
                    observed.push(self.judge().lost(p, &last_method, why).await);
                    return observed;
                }
            }
        }
        let judge = self.judge();
        observed.extend(judge.violations(p, &last_method));
        observed.extend(judge.stderr_text(p, &last_method));
        observed.extend(judge.memory(p, &last_method));
        observed
    }

    /// Sends one write and waits for the answers it requires. Returns the answers, and
    /// whether it required any.
    pub(super) async fn write(
        &mut self,
        p: &mut Proc,
        w: &Wire,
    ) -> Result<(Vec<(Expected, Reply)>, bool), Observed> {
        let expected = self.send(p, w).await?;
        let awaited = !expected.is_empty();
        Ok((self.wait(p, expected).await?, awaited))
    }

    /// Sends one write; returns the requests in it that must be answered.
    async fn send(&mut self, p: &mut Proc, w: &Wire) -> Result<Vec<Expected>, Observed> {
        let bytes = p.lines.adapt(&w.bytes);
        let expected = p.lines.peek(&bytes);
        if expected.iter().any(|e| p.sent_ids.contains(&e.id)) {
            // A reused id would make the answer ambiguous: not the server's fault.
            self.report.counts.skipped += 1;
            return Ok(Vec::new());
        }
        // Generation never names a forbidden tool; the session's tool-call gate is the
        // backstop for a mutation that does: not sent, not the server's business.
        if p.session.check_calls(&bytes).is_err() {
            self.report.counts.skipped += 1;
            return Ok(Vec::new());
        }
        p.lines.advance(&bytes);
        for e in &expected {
            p.sent_ids.insert(e.id.clone());
            p.session.expect_reply(e.id.clone(), &e.method);
        }
        p.history_bytes += bytes.len();
        p.history.push(bytes.clone());
        self.report.counts.messages += 1;
        if let Some(n) = self.report.methods.get_mut(&w.method) {
            *n += 1;
        }
        if let Some(t) = &w.tool
            && let Some(n) = self.report.tools.get_mut(t)
        {
            *n += 1;
        }
        let sent = match p.lines {
            Framing::Bodies => p.session.send_frame(bytes).await,
            Framing::Lines(_) => p.session.send_raw(bytes).await,
        };
        match sent {
            Ok(()) => Ok(expected.into_iter().filter(|e| e.must_answer).collect()),
            // Over HTTP each write is a POST of its own; one refused with an HTTP error
            // status has had its answer (basic/transports: input the server cannot accept).
            Err(SessionError::Send {
                source: TransportError::Rejected { .. },
                ..
            }) => {
                self.report.counts.http_rejected += 1;
                Ok(Vec::new())
            }
            // No response headers in time: wedged, not gone.
            Err(SessionError::Send { source, .. }) if source.is_response_timeout() => {
                Err(self.judge().hang(p, &w.method, None))
            }
            Err(SessionError::Send { source, .. }) => Err(self
                .judge()
                .lost(p, &w.method, Some(source.to_string()))
                .await),
            // Checked above; a refusal here would still be nobody's fault.
            Err(SessionError::Refused(_)) => {
                self.report.counts.skipped += 1;
                Ok(Vec::new())
            }
            Err(_) => Err(self.judge().lost(p, &w.method, None).await),
        }
    }

    /// Waits for the answers to requests already sent; the oracles judge what is missing.
    async fn wait(
        &mut self,
        p: &mut Proc,
        expected: Vec<Expected>,
    ) -> Result<Vec<(Expected, Reply)>, Observed> {
        let mut replies = Vec::new();
        for e in expected {
            let reply = if e.method == "tools/call" {
                self.await_tool(p, &e.id).await
            } else {
                p.session
                    .poll_reply(&e.id, self.config.session.timeout)
                    .await
                    .map(Awaited::Reply)
            };
            match reply {
                Some(Awaited::Reply(r)) => replies.push((e, r)),
                Some(Awaited::Progressing) => self.cancel_slow_tool(p, &e.id).await,
                None if p.session.is_closed() => {
                    return Err(self.judge().lost(p, &e.method, None).await);
                }
                None => match self.ping(p).await {
                    Ping::Alive if e.method == "tools/call" => {
                        self.cancel_slow_tool(p, &e.id).await
                    }
                    Ping::Alive => return Err(self.judge().no_response(&e.method, e.id)),
                    Ping::Silent => return Err(self.judge().hang(p, &e.method, Some(e.id))),
                    Ping::Gone(why) => return Err(self.judge().lost(p, &e.method, why).await),
                },
            }
        }
        Ok(replies)
    }

    /// Waits for a tool call's answer, in slices, watching for progress: a tool that
    /// reports progress is running, however long it takes.
    async fn await_tool(&mut self, p: &mut Proc, id: &RequestId) -> Option<Awaited> {
        let deadline = Instant::now() + self.config.session.timeout;
        loop {
            let slice = deadline
                .saturating_duration_since(Instant::now())
                .min(Duration::from_millis(50));
            if let Some(r) = p.session.poll_reply(id, slice).await {
                return Some(Awaited::Reply(r));
            }
            let progressing = p.session.take_unsolicited().iter().any(|u| {
                matches!(&u.message, Message::Notification(n) if n.method == "notifications/progress")
            });
            if progressing {
                return Some(Awaited::Progressing);
            }
            if p.session.is_closed() || Instant::now() >= deadline {
                return None;
            }
        }
    }

    /// A tool may legitimately run long (progress and cancellation exist for that):
    /// cancel it, and do not call it a defect.
    async fn cancel_slow_tool(&mut self, p: &mut Proc, id: &RequestId) {
        self.report.counts.slow_tool_calls += 1;
        let _ = p
            .session
            .notify(
                "notifications/cancelled",
                Some(json!({"requestId": id.to_value(), "reason": "mcpcheck fuzz: long-running tool"})),
            )
            .await;
    }

    /// Liveness probe, counted.
    async fn ping(&mut self, p: &mut Proc) -> Ping {
        self.report.counts.probes += 1;
        p.ping().await
    }
}

/// Ids named by `notifications/cancelled` in a case's writes.
fn cancelled_ids(case: &[Wire]) -> Vec<RequestId> {
    case.iter()
        .filter(|w| w.method == "notifications/cancelled")
        .flat_map(|w| w.bytes.split(|&b| b == b'\n'))
        .filter_map(|line| serde_json::from_slice::<Value>(line).ok())
        .filter_map(|v| match v.pointer("/params/requestId")? {
            Value::String(s) => Some(RequestId::String(s.clone())),
            Value::Number(n) => Some(RequestId::Number(n.to_string())),
            _ => None,
        })
        .collect()
}

/// Whether a write carries a request with this id.
fn contains_id(bytes: &[u8], id: &RequestId) -> bool {
    super::wire::requests_in(bytes.strip_suffix(b"\n").unwrap_or(bytes))
        .iter()
        .any(|e| e.id == *id)
}

//! `expect:` steps: waiting, up to a deadline, for what the server does on its own
//! (notifications, silence, exiting, stderr lines, responses to raw requests).

use std::time::Duration;

use serde_json::{Value, json};

use super::request::id_of;
use super::{Executor, Stop};
use crate::outcome::Cause;
use crate::protocol::text::quote;
use crate::protocol::{Message, Outcome, RequestId};
use crate::scenario::model::{Expectation, ResponseExpectation, Since};
use crate::session::{Reply, Unsolicited};
use crate::transport::StderrLog;

/// After a ping barrier, how long a `nothing` expectation still listens: a server that
/// handles messages concurrently may send what an earlier message caused just after the pong.
const BARRIER_GRACE: Duration = Duration::from_millis(150);

/// What an `expect: notification` waits for.
struct Awaited<'e> {
    method: &'e str,
    within: Duration,
    checks: &'e [crate::scenario::model::Check],
    /// No such notification is a skip (nothing to check), not a failure.
    skip_if_absent: bool,
    /// The pointer into the notification that none before it may share.
    first_by: Option<&'e str>,
}

impl Executor<'_> {
    pub(super) async fn expect(&mut self, e: &Expectation, line: usize) -> Result<(), Stop> {
        match e {
            Expectation::Notification {
                method,
                within,
                checks,
                skip_if_absent,
                first_by,
            } => {
                let awaited = Awaited {
                    method,
                    within: *within,
                    checks,
                    skip_if_absent: *skip_if_absent,
                    first_by: first_by.as_deref(),
                };
                self.expect_notification(&awaited, line).await;
                Ok(())
            }
            Expectation::Request {
                method,
                within,
                checks,
            } => self.server_request(method, *within, checks, line).await,
            Expectation::Nothing {
                within,
                methods,
                since,
            } => {
                self.expect_nothing(*within, methods, *since, line).await;
                Ok(())
            }
            Expectation::Exit { within, code } => {
                self.expect_exit(*within, *code, line).await;
                Ok(())
            }
            Expectation::Stderr {
                within,
                pattern,
                present,
            } => self.expect_stderr(pattern, *present, *within, line).await,
            Expectation::Response { id, within, expect } => {
                self.expect_response(id, *within, expect, line).await
            }
        }
    }

    /// `expect: notification`: the first of `method` since the scenario began, or one
    /// arriving in time; none is a failure, or a skip when the scenario may do without.
    async fn expect_notification(&mut self, awaited: &Awaited<'_>, line: usize) {
        let Awaited {
            method,
            within,
            checks,
            skip_if_absent,
            first_by,
        } = *awaited;
        let deadline = tokio::time::Instant::now() + within;
        loop {
            // Over HTTP, once every exchange ended and no stream is open, none can come.
            let drained = self.session.drained().await;
            self.collect();
            if let Some(pos) =
                self.inbox.queue.iter().position(
                    |u| matches!(&u.message, Message::Notification(n) if n.method == method),
                )
            {
                let u = self.inbox.queue.remove(pos).expect("found above");
                let value = message_value(&u.message);
                if let Some(p) = first_by {
                    self.none_before(pos, &value, p, method, line);
                }
                self.apply_checks(
                    checks,
                    &value,
                    "",
                    u.frame,
                    &format!("the `{method}` notification"),
                );
                return;
            }
            let now = tokio::time::Instant::now();
            if now >= deadline || drained || self.session.is_closed() {
                if skip_if_absent && !self.session.is_closed() {
                    self.coverage
                        .not_exercised(format!("the server sent no `{method}` (nothing to check)"));
                    return;
                }
                let message = match now < deadline {
                    true => format!(
                        "no `{method}` notification arrived, and none can: every exchange ended and no stream is open on which one could come"
                    ),
                    false => format!(
                        "no `{method}` notification arrived within {}",
                        humantime::format_duration(within)
                    ),
                };
                let f = self.fail(line, message, None);
                self.findings.push(f);
                return;
            }
            // Short slices: over HTTP the evidence that none can come is looked at between.
            self.session
                .pump((deadline - now).min(Duration::from_millis(10)))
                .await;
        }
    }

    /// `expect: nothing`: no message (of `methods`, when named) during the window (or,
    /// `since: start`, since the scenario began, of what no expectation took).
    async fn expect_nothing(
        &mut self,
        within: Duration,
        methods: &[String],
        since: Since,
        line: usize,
    ) {
        self.collect();
        let before = match since {
            Since::Window => self.inbox.queue.len(),
            Since::Start => 0,
        };
        self.session.barrier(within, BARRIER_GRACE).await;
        self.collect();
        let unwanted: Vec<Unsolicited> = self
            .inbox
            .queue
            .iter()
            .skip(before)
            .filter(|u| match &u.message {
                // Servers may notify at any time: only named notifications count.
                Message::Notification(n) => methods.contains(&n.method),
                other => {
                    methods.is_empty()
                        || other
                            .method()
                            .is_some_and(|m| methods.iter().any(|x| x == m))
                }
            })
            .cloned()
            .collect();
        for u in unwanted {
            let what = match &u.message {
                Message::Response(_) => "a response".to_owned(),
                m => format!("a `{}` {}", m.method().unwrap_or_default(), m.kind()),
            };
            let f = self.fail(
                line,
                format!(
                    "the server sent {what}; nothing was expected within {}",
                    humantime::format_duration(within)
                ),
                u.frame,
            );
            self.findings.push(f);
        }
    }

    /// `expect: exit`: the input closed, the server ends within `within` (with `code`).
    async fn expect_exit(&mut self, within: Duration, code: Option<i32>, line: usize) {
        self.session.close_input().await;
        match self.session.wait_exit(within).await {
            None => {
                let f = self.fail(
                    line,
                    format!(
                        "the server did not exit within {} of its input closing",
                        humantime::format_duration(within)
                    ),
                    None,
                );
                self.findings.push(f);
            }
            Some(exit) => {
                if let Some(want) = code
                    && exit != crate::transport::ExitInfo::Code(want)
                {
                    let f = self.fail(
                        line,
                        format!("the server ended with {exit}; expected exit code {want}"),
                        None,
                    );
                    self.findings.push(f);
                }
            }
        }
    }

    /// `expect: response`: the answer to a request sent as raw bytes (by its `id`, or
    /// with a null id), or none.
    async fn expect_response(
        &mut self,
        id: &Value,
        within: Duration,
        expect: &ResponseExpectation,
        line: usize,
    ) -> Result<(), Stop> {
        let window = match expect {
            ResponseExpectation::Nothing(_) => within,
            _ => self.session.window_for_first_answer(within),
        };
        // No answer, or an error a server SHOULD send (to input it may also just
        // drop): once a later request is answered, the server has handled the
        // message, so the wait ends there (a barrier), not at the window.
        let (wait, bounded) = match expect {
            ResponseExpectation::Nothing(_) | ResponseExpectation::Error { .. } => {
                self.collect();
                self.session.response_barrier(window, BARRIER_GRACE).await;
                (Duration::ZERO, None)
            }
            _ => match id_of(id) {
                Some(rid) => self.session.answer_window(&rid, window),
                None => (window, None),
            },
        };
        let reply = match id {
            Value::Null => self.null_id_response(wait).await,
            other => match id_of(other) {
                Some(rid) => self.session.poll_reply(&rid, wait).await,
                None => {
                    return Err(Stop::Error(format!(
                        "{}:{line}: id {other} is not a string, number or null",
                        self.scenario.source
                    )));
                }
            },
        };
        match (reply, expect) {
            (None, ResponseExpectation::Nothing(_)) => {}
            (None, _) => {
                let unusable = id_of(id).and_then(|rid| self.session.unusable_answer(&rid));
                let f = match unusable {
                    Some(why) => self.fail(
                        line,
                        format!("the answer to request {id} cannot be used: {why}"),
                        None,
                    ),
                    None => self
                        .fail(
                            line,
                            match bounded {
                                Some(why) => format!(
                                    "no response with id {id} arrived within {} ({why})",
                                    humantime::format_duration(wait)
                                ),
                                None => format!(
                                    "no response with id {id} arrived within {}",
                                    humantime::format_duration(window)
                                ),
                            },
                            None,
                        )
                        .cause(Cause::Unanswered),
                };
                self.findings.push(f);
            }
            (Some(reply), expect) => {
                self.check_reply(expect, &reply, line, &format!("request {id}"))
            }
        }
        Ok(())
    }

    /// Fails every notification still in the inbox before `pos` that carries the awaited
    /// notification's value at `pointer`: it came first, where the awaited one must.
    fn none_before(
        &mut self,
        pos: usize,
        awaited: &Value,
        pointer: &str,
        method: &str,
        line: usize,
    ) {
        let Some(key) = awaited.pointer(pointer) else {
            return;
        };
        let earlier: Vec<(String, Option<usize>)> = self
            .inbox
            .queue
            .iter()
            .take(pos)
            .filter_map(|u| match &u.message {
                Message::Notification(n)
                    if message_value(&u.message).pointer(pointer) == Some(key) =>
                {
                    Some((n.method.clone(), u.frame))
                }
                _ => None,
            })
            .collect();
        for (earlier, frame) in earlier {
            let f = self
                .fail(
                    line,
                    format!(
                        "a `{earlier}` notification with {pointer} {key} arrived before the `{method}`, which must come first"
                    ),
                    frame,
                )
                .pointer(pointer.to_owned())
                .expected(format!("`{method}` as the first notification with {pointer} {key}"));
            self.findings.push(f);
        }
    }

    /// `expect: stderr`. Over HTTP there is no stderr to read: the check cannot run, so
    /// the scenario is skipped (or keeps the failure it already has), never passed.
    pub(super) async fn expect_stderr(
        &mut self,
        pattern: &str,
        present: bool,
        within: Duration,
        line: usize,
    ) -> Result<(), Stop> {
        if self.session.stderr().is_none() {
            if !self.findings.is_empty() {
                return Err(Stop::Failed);
            }
            return Err(Stop::Skip(format!(
                "{}:{line}: `expect: stderr` needs the server's stderr, which is not available over HTTP (no process of mcpcheck's to read it from)",
                self.scenario.source,
            )));
        }
        let re = regex::Regex::new(pattern).map_err(|e| {
            Stop::Error(format!(
                "{}:{line}: invalid regex /{pattern}/: {e}",
                self.scenario.source
            ))
        })?;
        let deadline = tokio::time::Instant::now() + within;
        let within_text = humantime::format_duration(within);
        loop {
            let hit = self.session.stderr().and_then(|log| stderr_match(log, &re));
            let now = tokio::time::Instant::now();
            match (present, hit) {
                (true, Some(_)) => return Ok(()),
                (false, Some(hit)) => {
                    let excerpt = self
                        .session
                        .stderr()
                        .map(|l| l.crash_excerpt(10).join("\n"))
                        .unwrap_or_default();
                    let f = self
                        .fail(
                            line,
                            format!("the server's stderr matches /{pattern}/: {hit}"),
                            None,
                        )
                        .evidence(format!("stderr:\n{excerpt}"))
                        .expected(format!("no stderr line matching /{pattern}/"))
                        .cause(Cause::StderrMatch);
                    self.findings.push(f);
                    return Ok(());
                }
                (true, None) if now >= deadline || self.session.is_closed() => {
                    let f = self.fail(
                        line,
                        format!("no line of the server's stderr matched /{pattern}/ within {within_text}"),
                        None,
                    );
                    self.findings.push(f);
                    return Ok(());
                }
                (false, None) if now >= deadline => return Ok(()),
                _ => {
                    // Messages keep being processed while stderr is watched.
                    self.session
                        .pump((deadline - now).min(Duration::from_millis(50)))
                        .await;
                    if self.session.is_closed() {
                        tokio::time::sleep(
                            (deadline - tokio::time::Instant::now()).min(Duration::from_millis(50)),
                        )
                        .await;
                    }
                }
            }
        }
    }

    /// A response with a null id (to a request whose id could not be read).
    pub(super) async fn null_id_response(&mut self, within: Duration) -> Option<Reply> {
        let deadline = tokio::time::Instant::now() + within;
        loop {
            self.collect();
            let mark = self.inbox.marked();
            if let Some(pos) = self
                .inbox
                .queue
                .iter()
                .skip(mark)
                .position(|u| matches!(&u.message, Message::Response(r) if r.id.is_none()))
                .map(|p| p + mark)
            {
                let u = self.inbox.queue.remove(pos)?;
                if let Message::Response(r) = u.message {
                    return Some(Reply {
                        frame: u.frame,
                        outcome: r.outcome,
                        salvaged: false,
                    });
                }
            }
            let now = tokio::time::Instant::now();
            if now >= deadline || self.session.is_closed() {
                return None;
            }
            self.session
                .pump((deadline - now).min(Duration::from_millis(50)))
                .await;
        }
    }

    pub(super) fn collect(&mut self) {
        self.inbox.queue.extend(self.session.take_unsolicited());
    }
}

impl Executor<'_> {
    /// `expect: { request }`: the first request of `method` the server sent (the session
    /// answered it as a client does) since the scenario began, or one arriving in time.
    async fn server_request(
        &mut self,
        method: &str,
        within: Duration,
        checks: &[crate::scenario::model::Check],
        line: usize,
    ) -> Result<(), Stop> {
        let deadline = tokio::time::Instant::now() + within;
        loop {
            self.collect();
            let found = self
                .inbox
                .queue
                .iter()
                .position(|u| matches!(&u.message, Message::Request(r) if r.method == method));
            if let Some(pos) = found {
                let u = self.inbox.queue.remove(pos).expect("found above");
                let what = format!("the server's `{method}` request");
                self.apply_checks(checks, &message_value(&u.message), "", u.frame, &what);
                return Ok(());
            }
            let now = tokio::time::Instant::now();
            if now >= deadline || self.session.is_closed() {
                let waited = humantime::format_duration(within);
                let f = self.fail(
                    line,
                    format!("the server sent no `{method}` request within {waited}"),
                    None,
                );
                self.findings.push(f);
                return Ok(());
            }
            self.session
                .pump((deadline - now).min(Duration::from_millis(50)))
                .await;
        }
    }
}

fn message_value(m: &Message) -> Value {
    match m {
        Message::Notification(n) => {
            json!({"jsonrpc": "2.0", "method": n.method, "params": n.params})
        }
        Message::Request(r) => {
            json!({"jsonrpc": "2.0", "id": r.id.to_value(), "method": r.method, "params": r.params})
        }
        Message::Response(r) => match &r.outcome {
            Outcome::Result(v) => {
                json!({"jsonrpc": "2.0", "id": r.id.as_ref().map(RequestId::to_value), "result": v})
            }
            Outcome::Error(e) => {
                json!({"jsonrpc": "2.0", "id": r.id.as_ref().map(RequestId::to_value), "error": {"code": e.code, "message": e.message}})
            }
        },
    }
}

/// The first line of a server's stderr record (its first lines, then the tail ring) that
/// matches, quoted for a message.
fn stderr_match(log: &StderrLog, re: &regex::Regex) -> Option<String> {
    let head = log.head();
    let tail = log.tail_text();
    head.iter()
        .map(|l| l.text.as_str())
        .chain(tail.lines())
        .find(|l| re.is_match(l))
        .map(|l| quote(l, 200))
}

//! Steps in order: each step dispatched to what runs it, and reported (started, its
//! findings, how it ended) to whoever observes the run.

use serde_json::Value;

use super::{Executor, Stop};
use crate::outcome::Severity;
use crate::outcome::events::{Event, StepEnd};
use crate::protocol::Outcome;
use crate::scenario::matcher::{MatchContext, check_all};
use crate::scenario::model::http::HttpStep;
use crate::scenario::model::{
    Check, Expectation, Initialize, InitializeOverrides, RequestStep, Step, StepKind, Template,
};
use crate::scenario::template::UNIQUE;
use crate::session::Handshake;

/// The longest the first `notify` or `send_raw` step waits for what the server sent
/// before it (see `Session::settle`).
const SETTLE: std::time::Duration = std::time::Duration::from_millis(500);

impl Executor<'_> {
    /// Before the scenario's first notification or raw bytes: what the server sent for
    /// earlier messages (a stray reply to the handshake's `notifications/initialized`, say)
    /// is not their doing, so a barrier lets it arrive and what the scenario waits for
    /// counts from here. A fresh session and a shared one then see the same.
    async fn settle(&mut self) {
        if !self.inbox.settle_once() {
            return;
        }
        self.session.settle(SETTLE).await;
        self.collect();
        self.inbox.mark();
    }

    pub(super) async fn run_steps(&mut self, steps: &[Step]) -> Result<(), Stop> {
        for step in steps {
            if self.live.events.is_empty() {
                Box::pin(self.run_step(step)).await?;
                continue;
            }
            let n = self.live.next_step();
            let before = (self.findings.len(), self.skipped_steps.len());
            self.live.events.emit(Event::StepStarted {
                scenario: self.scenario.id.clone(),
                step: n,
                line: step.line,
                depth: self.depth,
                action: action(&step.kind),
            });
            let done = Box::pin(self.run_step(step)).await;
            self.step_finished(n, step.line, before, &done);
            done?;
        }
        Ok(())
    }

    /// Emits the findings a step raised, then how it ended.
    pub(super) fn step_finished(
        &mut self,
        n: usize,
        line: usize,
        (findings, skipped): (usize, usize),
        done: &Result<(), Stop>,
    ) {
        let id = &self.scenario.id;
        self.live.report_new(
            id,
            &self.filing.rule,
            &self.findings,
            self.session.findings(),
        );
        let raised = |s: Severity| {
            self.findings
                .get(findings..)
                .is_some_and(|new| new.iter().any(|f| f.severity == s))
        };
        let status = match done {
            Err(Stop::Skip(reason)) => StepEnd::Skipped {
                reason: reason.clone(),
            },
            Err(Stop::Error(reason)) => StepEnd::Error {
                reason: reason.clone(),
            },
            Err(Stop::Failed) => StepEnd::Failed,
            Err(Stop::Next(reason) | Stop::Refused(reason)) => StepEnd::Skipped {
                reason: reason.clone(),
            },
            Ok(()) if raised(Severity::Failure) => StepEnd::Failed,
            Ok(()) if raised(Severity::Warning) => StepEnd::Warned,
            Ok(()) if self.skipped_steps.len() > skipped => StepEnd::Skipped {
                reason: self.skipped_steps[skipped..].join("; "),
            },
            Ok(()) => StepEnd::Passed,
        };
        self.live.events.emit(Event::StepFinished {
            scenario: id.clone(),
            step: n,
            line,
            status,
        });
    }

    pub(super) async fn run_step(&mut self, step: &Step) -> Result<(), Stop> {
        let line = step.line;
        // `${unique}`: a new value for every step run, each loop iteration included.
        let unique = self.fresh();
        self.vars.insert(UNIQUE.into(), Value::String(unique));
        match &step.kind {
            StepKind::Initialize(Initialize::None) => Ok(()),
            StepKind::Initialize(Initialize::Handshake(o)) => self.initialize_step(o, line).await,
            StepKind::Request(r) => self.request(r).await,
            StepKind::Notify { method, params } => {
                let method = self.render_text(method, line)?;
                let params = params.as_ref().map(|p| self.render(p, line)).transpose()?;
                self.settle().await;
                self.session
                    .notify(&method, params)
                    .await
                    .map_err(|e| self.session_failure(&e))
            }
            StepKind::SendRaw(t) => {
                let bytes = self.render_text(t, line)?;
                self.settle().await;
                self.register_raw_requests(&bytes);
                self.collect();
                self.inbox.mark();
                self.session
                    .send_raw(bytes.into_bytes())
                    .await
                    .map_err(|e| self.session_failure(&e))
            }
            StepKind::Expect(e) => self.expect(e, line).await,
            StepKind::Concurrent(requests) => self.concurrent(requests).await,
            StepKind::Burst { method, count } => self.burst(method, *count, line).await,
            StepKind::Check { value, checks } => {
                let v = self.render(value, line)?;
                self.apply_checks(checks, &v, "", None, "the checked value");
                Ok(())
            }
            StepKind::ForEach {
                list,
                bind,
                filter,
                steps,
            } => self.for_each(list, bind, filter, steps, line).await,
            StepKind::Paginate {
                method,
                key,
                into,
                params,
                on_error,
                same,
            } => {
                let base = params.as_ref().map(|p| self.render(p, line)).transpose()?;
                let items = self
                    .paginate(method, key, base, *on_error, same, line)
                    .await?;
                self.vars.insert(into.clone(), Value::Array(items));
                Ok(())
            }
            StepKind::Sleep(d) => {
                self.session.idle(*d).await;
                Ok(())
            }
            StepKind::Http(h) => self.http_step(h, line).await,
            StepKind::Auth(check) => match super::auth::run(*check, &mut self.session).await {
                Ok(judged) => {
                    for p in judged.problems {
                        let mut f = self.fail(line, p, None);
                        if judged.must {
                            f.severity = Severity::Failure;
                        }
                        self.findings.push(f);
                    }
                    Ok(())
                }
                Err(super::http::HttpStop::Skip(r)) => Err(Stop::Skip(r)),
                Err(super::http::HttpStop::Error(r)) => Err(Stop::Error(r)),
                Err(super::http::HttpStop::Refused(r)) => Err(self.refused(r, Some(line))),
            },
            // The parser keeps it the only step, and `exec::run` runs such a scenario
            // without a session of its own.
            StepKind::Negotiate(_) => Err(Stop::Error(
                "a `negotiate` step runs only as the scenario's only step".into(),
            )),
        }
    }
}

impl Executor<'_> {
    /// `initialize`, as the scenario writes it: the session's default handshake (kept from
    /// an earlier scenario when the session is shared) or one of the scenario's own; then
    /// the revision and capabilities the scenario needs.
    async fn initialize_step(&mut self, o: &InitializeOverrides, line: usize) -> Result<(), Stop> {
        let handshake = Handshake {
            protocol_version: match &o.protocol_version {
                Some(t) => Some(self.render_text(t, line)?),
                None => None,
            },
            capabilities: o.capabilities.clone(),
            skip_initialized: o.skip_initialized,
        };
        // Asking, in so many words, for the revision the session speaks is the
        // default handshake (a shared session's, or one it keeps for others).
        let asked = self.session.revision();
        let handshake = Handshake {
            protocol_version: handshake
                .protocol_version
                .filter(|v| !(asked.has_handshake() && v == asked.as_str())),
            ..handshake
        };
        let shared = self
            .session
            .profile()
            .filter(|_| self.handshake_done && handshake == Handshake::default());
        let profile = match shared {
            // A shared session's handshake, done in an earlier scenario's window:
            // its expectations are checked on the answer the session kept.
            Some(profile) => {
                let profile = profile.clone();
                if let Some(expect) = &o.expect {
                    let Some(mut reply) = self.session.handshake_reply().cloned() else {
                        return Err(Stop::Error(
                            "the shared session kept no handshake answer".into(),
                        ));
                    };
                    // The frame is in the opening scenario's window: the answer is
                    // quoted here, for the evidence of a finding.
                    let answer = match &reply.outcome {
                        Outcome::Result(r) => format!("result {r}"),
                        Outcome::Error(e) => format!("error {} \"{}\"", e.code, e.message),
                    };
                    reply.frame = self.session.record_event(format!(
                        "the handshake of this shared session (in the window of the scenario that opened it) was answered with {}",
                        crate::protocol::text::quote(&answer, 4000)
                    ));
                    self.check_reply(expect, &reply, line, "initialize");
                }
                profile
            }
            None => {
                let (profile, reply) = match self.session.initialize_with(&handshake).await {
                    Ok(r) => r,
                    Err(e) => return Err(self.session_failure(&e)),
                };
                if let Some(expect) = &o.expect {
                    self.check_reply(expect, &reply, line, "initialize");
                }
                profile
            }
        };
        self.set_revision_vars();
        // The scenario applies to the revision actually negotiated, not just the one asked for.
        let spoken = self.session.revision();
        if !self.scenario.revisions.contains(&spoken) {
            if !self.findings.is_empty() {
                // The handshake's own checks failed (a version not echoed, say):
                // that verdict stands; the rest of the scenario cannot run.
                return Err(Stop::Failed);
            }
            return Err(Stop::Skip(format!(
                "the server negotiated {spoken}, which this scenario does not cover"
            )));
        }
        match self
            .scenario
            .requires
            .iter()
            .find_map(|need| need.unmet(&profile.capabilities))
        {
            Some(why) => Err(Stop::Skip(why)),
            None => Ok(()),
        }
    }

    /// `concurrent`: every request sent before any answer is awaited.
    async fn concurrent(&mut self, requests: &[RequestStep]) -> Result<(), Stop> {
        let mut sent = Vec::new();
        for r in requests {
            if let Some((id, method)) = self.send(r).await? {
                sent.push((id, method, r));
            }
        }
        for (id, method, r) in sent {
            match self.session.wait_reply(&id).await {
                Ok(reply) => self.after_reply(r, &reply, &method, &id),
                Err(e) => return Err(self.session_failure(&e)),
            }
        }
        Ok(())
    }

    /// `for_each`: the body once per element of `list` (that passes `filter`), bound to
    /// `bind`.
    async fn for_each(
        &mut self,
        list: &str,
        bind: &str,
        filter: &[Check],
        steps: &[Step],
        line: usize,
    ) -> Result<(), Stop> {
        let filtered = match list.contains('|') {
            true => Some(self.render(&Template(Value::String(format!("${{{list}}}"))), line)?),
            false => None,
        };
        let items = match filtered.as_ref().or_else(|| self.vars.get(list)) {
            Some(Value::Array(items)) => items.clone(),
            Some(other) => {
                let f = self.fail(
                    line,
                    format!(
                        "`for_each` over `{list}`, which is {}, not a list",
                        crate::protocol::jsonrpc::type_name(other)
                    ),
                    None,
                );
                self.findings.push(f);
                return Err(Stop::Failed);
            }
            None => {
                return Err(Stop::Error(format!(
                    "{}:{line}: no variable `{list}`",
                    self.scenario.source
                )));
            }
        };
        // A loop that selects (`where`), or one at the top of the scenario, is
        // what the scenario checks: if it never has anything to run on, nothing
        // was checked (see `run`).
        let counted = !filter.is_empty() || self.depth == 0;
        self.coverage.loop_entered(line, list, counted);
        for item in items {
            if !filter.is_empty() {
                let schema = self.session.schema();
                let cx = MatchContext {
                    vars: &self.vars,
                    schema: schema.as_ref().as_ref().ok(),
                };
                if !check_all(filter, &item, cx).mismatches.is_empty() {
                    continue;
                }
            }
            self.coverage.loop_ran(line);
            self.vars.insert(bind.to_owned(), item);
            self.depth += 1;
            let done = self.run_steps(steps).await;
            self.depth -= 1;
            match done {
                // An allowed error, or a call the gate refused: on to the next item.
                Err(Stop::Next(_) | Stop::Refused(_)) => {}
                other => other?,
            }
        }
        self.vars.remove(bind);
        Ok(())
    }

    /// A raw `http` step: its problems are the scenario's findings.
    async fn http_step(&mut self, h: &HttpStep, line: usize) -> Result<(), Stop> {
        let body = h.body.as_ref().map(|t| self.render(t, line)).transpose()?;
        let headers = h
            .headers_from
            .as_ref()
            .map(|t| self.render(t, line))
            .transpose()?;
        match super::http::run(h, body, headers, &mut self.session).await {
            Ok(problems) => {
                for p in problems {
                    let f = self.fail(line, p, None);
                    self.findings.push(f);
                }
                Ok(())
            }
            Err(super::http::HttpStop::Skip(r)) => Err(Stop::Skip(r)),
            Err(super::http::HttpStop::Error(r)) => Err(Stop::Error(r)),
            Err(super::http::HttpStop::Refused(r)) => Err(self.refused(r, Some(line))),
        }
    }
}

/// What a step does, in a few words, for its `step_started` event.
fn action(kind: &StepKind) -> String {
    let text = |t: &Template| match &t.0 {
        Value::String(s) => s.clone(),
        other => other.to_string(),
    };
    match kind {
        StepKind::Initialize(Initialize::None) => "no initialize".into(),
        StepKind::Initialize(Initialize::Handshake(_)) => "initialize".into(),
        StepKind::Request(r) => format!("request {}", text(&r.method)),
        StepKind::Notify { method, .. } => format!("notify {}", text(method)),
        StepKind::SendRaw(_) => "send raw bytes".into(),
        StepKind::Expect(Expectation::Notification { method, .. }) => {
            format!("expect notification {method}")
        }
        StepKind::Expect(Expectation::Request { method, .. }) => {
            format!("expect request {method}")
        }
        StepKind::Expect(Expectation::Nothing { .. }) => "expect nothing".into(),
        StepKind::Expect(Expectation::Exit { .. }) => "expect exit".into(),
        StepKind::Expect(Expectation::Stderr { .. }) => "expect stderr".into(),
        StepKind::Expect(Expectation::Response { id, .. }) => format!("expect response {id}"),
        StepKind::Concurrent(rs) => format!("{} concurrent requests", rs.len()),
        StepKind::Burst { method, count } => format!("burst of {count} {method}"),
        StepKind::Check { .. } => "check".into(),
        StepKind::ForEach { list, .. } => format!("for each in {list}"),
        StepKind::Paginate { method, .. } => format!("paginate {method}"),
        StepKind::Sleep(d) => format!("sleep {}", humantime::format_duration(*d)),
        StepKind::Http(_) => "HTTP exchange".into(),
        StepKind::Auth(c) => format!("auth {}", c.name()),
        StepKind::Negotiate(c) => format!("negotiate {} (fresh sessions)", c.name()),
    }
}

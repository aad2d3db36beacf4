//! Running one client scenario against a client under test: each step waits for what the
//! client sends (answering everything else as the mock serves it), checks it, answers
//! it, or holds it open to send the client requests of its own. The mock session judges
//! every message on the way; the scenario adds its own expectations.

use std::time::Duration;

use serde_json::Value;
use tokio::sync::watch;

use super::matcher::{MatchContext, check_all};
use super::model::Check;
use super::model::client::{
    ANY_REQUEST, ClientScenario, ClientStepKind, Disconnect, Otherwise, Receive, ReplyPlan, Send,
};
use super::template::Vars;
use crate::outcome::Finding;
use crate::protocol::{Message, Revision};
use crate::session::mock::{Answer, Held, Incoming, Mock, Next, Resumption, Wire};
use crate::transport::ExitInfo;

/// What the script of a client scenario found.
#[derive(Debug, Default)]
pub struct Scripted {
    /// Broken expectations (the scenario's rule).
    pub findings: Vec<Finding>,
    /// Checks that could not run, and why.
    pub unchecked: Vec<String>,
    /// Why the scenario does not apply to this client (a capability it did not declare).
    pub skipped: Option<String>,
}

/// Where a client scenario runs: the endpoint the client talks to, its exit, the waits.
#[derive(Debug)]
pub struct Stage<'a> {
    /// Where the client's messages come from.
    pub wire: &'a mut Wire,
    /// Turns `Some` when the client process ends.
    pub exit: watch::Receiver<Option<ExitInfo>>,
    /// How long a step waits when it names no `within`.
    pub timeout: Duration,
    /// The revision the mock speaks.
    pub revision: Revision,
}

/// Runs `scenario`'s steps with `mock`; then answers whatever else the client sends until
/// it exits or `stage.timeout` passes.
pub async fn run(scenario: &ClientScenario, mock: &mut Mock, stage: Stage<'_>) -> Scripted {
    let mut run = Run {
        scenario,
        mock,
        stage,
        held: None,
        resume_within: Duration::ZERO,
        out: Scripted::default(),
    };
    run.steps().await;
    run.linger().await;
    run.out
}

struct Run<'a, 's> {
    scenario: &'a ClientScenario,
    mock: &'a mut Mock,
    stage: Stage<'s>,
    held: Option<Held>,
    /// The wait for the GET that resumes the held request's closed stream.
    resume_within: Duration,
    out: Scripted,
}

/// What the client did next.
enum Got {
    Message(Incoming),
    Resume(Resumption),
}

/// Why waiting for the client ended without what was awaited.
enum Gone {
    Exited(ExitInfo),
    /// The client closed its stdio connection.
    Closed,
    TimedOut(Duration),
}

impl Run<'_, '_> {
    /// Every step in order, until one cannot finish (its finding says why) or the
    /// client's `initialize` showed the scenario does not apply.
    async fn steps(&mut self) {
        for step in &self.scenario.steps {
            if self.out.skipped.is_some() {
                return;
            }
            let done = match &step.kind {
                ClientStepKind::Receive(r) => self.receive(r, step.line).await,
                ClientStepKind::Send(s) => self.send(s, step.line).await,
                ClientStepKind::Disconnect(d) => self.disconnect(d),
                ClientStepKind::Respond(answer) => self.respond(answer.clone()).await,
            };
            if !done {
                return;
            }
        }
    }

    async fn receive(&mut self, r: &Receive, line: usize) -> bool {
        let missing = format!("sending `{}`", r.method);
        let wanted = |run: &mut Self, i: &Incoming| {
            run.note_requirements(i, &r.method);
            // A scenario that turned out not to apply stops at the message that showed it.
            run.out.skipped.is_some() || (r.takes(i) && run.passes(&r.filter, &i.value))
        };
        let incoming = match self.await_message(r.within, &wanted).await {
            Ok(incoming) => incoming,
            Err(gone) if r.otherwise == Otherwise::Skip => {
                let why = self.gone(&gone);
                self.out.skipped = Some(format!(
                    "the client {why} without {missing}, which it need not do: nothing to judge"
                ));
                return false;
            }
            Err(gone) => {
                let why = self.gone(&gone);
                self.fail(line, format!("the client {why} without {missing}"), None);
                return false;
            }
        };
        if self.out.skipped.is_some() {
            self.default_answer(incoming);
            return false;
        }
        let what = format!("`{}`", r.method);
        self.check(&r.expect, &incoming.value, "", incoming.frame, &what);
        if matches!(incoming.message, Message::Request(_)) {
            match &r.reply {
                ReplyPlan::Default => self.default_answer(incoming),
                ReplyPlan::Answer(a) => self.mock.answer(incoming, a.clone()),
                ReplyPlan::Hold => self.held = self.mock.hold(incoming),
                ReplyPlan::Expire => self.mock.expire(incoming),
            }
        }
        true
    }

    async fn send(&mut self, s: &Send, line: usize) -> bool {
        let Some(held) = &self.held else {
            return false;
        };
        let id = self.mock.send_request(held, &s.method, s.params.clone());
        let missing = format!("answering `{}`", s.method);
        let answers = |_: &mut Self, i: &Incoming| matches!(&i.message, Message::Response(r) if r.id.as_ref() == Some(&id));
        let Some(incoming) = self.wait_for(s.within, line, &missing, &answers).await else {
            return false;
        };
        let what = format!("the answer to `{}`", s.method);
        self.check(&s.expect, &incoming.value, "", incoming.frame, &what);
        true
    }

    /// The first message `wanted` takes, within `within` (default: the run's timeout);
    /// everything before it gets its default answer. None came: a finding at `line` says
    /// the client ended or waited without `missing`.
    async fn wait_for(
        &mut self,
        within: Option<Duration>,
        line: usize,
        missing: &str,
        wanted: &dyn Fn(&mut Self, &Incoming) -> bool,
    ) -> Option<Incoming> {
        match self.await_message(within, wanted).await {
            Ok(incoming) => Some(incoming),
            Err(gone) => {
                let why = self.gone(&gone);
                self.fail(line, format!("the client {why} without {missing}"), None);
                None
            }
        }
    }

    /// The first message `wanted` takes, within `within` (default: the run's timeout);
    /// everything before it gets its default answer.
    async fn await_message(
        &mut self,
        within: Option<Duration>,
        wanted: &dyn Fn(&mut Self, &Incoming) -> bool,
    ) -> Result<Incoming, Gone> {
        let within = within.unwrap_or(self.stage.timeout);
        let deadline = tokio::time::Instant::now() + within;
        loop {
            let incoming = self.next(deadline, within).await?;
            if wanted(self, &incoming) {
                return Ok(incoming);
            }
            self.default_answer(incoming);
        }
    }

    fn disconnect(&mut self, d: &Disconnect) -> bool {
        if let Some(held) = &mut self.held {
            self.mock.disconnect(held, d.retry);
        }
        self.resume_within = d.within.unwrap_or(self.stage.timeout);
        true
    }

    /// Answers the held request: on its stream, or on the GET that resumes it.
    async fn respond(&mut self, answer: Answer) -> bool {
        let Some(held) = self.held.take() else {
            return false;
        };
        if !held.is_closed() {
            self.mock.finish(held, answer);
            return true;
        }
        let within = self.resume_within;
        let deadline = tokio::time::Instant::now() + within;
        loop {
            match self.next_event(deadline, within).await {
                Ok(Got::Resume(r)) => {
                    self.mock.resume(r, held, answer);
                    return true;
                }
                Ok(Got::Message(incoming)) => self.default_answer(incoming),
                Err(gone) => {
                    let how = match gone {
                        Gone::Exited(e) => format!("before it exited ({e})"),
                        Gone::Closed => "before it closed its connection".to_owned(),
                        Gone::TimedOut(d) => format!("within {} ms", d.as_millis()),
                    };
                    self.mock.not_resumed(&how);
                    // Without a resumption there is no wait or Last-Event-ID to judge.
                    if self.scenario.rule_id() != crate::check::rules::CLIENT_SSE_RECONNECT.id {
                        let why = "the client did not resume the closed stream, so there is nothing to judge";
                        self.out.skipped = Some(why.to_owned());
                    }
                    return false;
                }
            }
        }
    }

    /// After the script: default answers until the client exits, within the timeout.
    async fn linger(&mut self) {
        if let Some(held) = self.held.take() {
            drop(held);
        }
        let deadline = tokio::time::Instant::now() + self.stage.timeout;
        while let Ok(incoming) = self.next(deadline, self.stage.timeout).await {
            self.default_answer(incoming);
        }
    }

    /// The next message; a resumption only comes while a held stream is closed, which
    /// only `respond` waits through.
    async fn next(
        &mut self,
        deadline: tokio::time::Instant,
        within: Duration,
    ) -> Result<Incoming, Gone> {
        loop {
            match self.next_event(deadline, within).await? {
                Got::Message(m) => return Ok(m),
                Got::Resume(_) => continue,
            }
        }
    }

    async fn next_event(
        &mut self,
        deadline: tokio::time::Instant,
        within: Duration,
    ) -> Result<Got, Gone> {
        match self
            .mock
            .next(self.stage.wire, &mut self.stage.exit, deadline)
            .await
        {
            Next::Message(m) => Ok(Got::Message(*m)),
            Next::Resume(r) => Ok(Got::Resume(*r)),
            Next::Exited(e) => Err(Gone::Exited(e)),
            Next::Closed => Err(Gone::Closed),
            Next::TimedOut => Err(Gone::TimedOut(within)),
        }
    }

    fn gone(&self, gone: &Gone) -> String {
        match gone {
            Gone::Exited(e) => format!("exited ({e})"),
            Gone::Closed => "closed its connection".to_owned(),
            Gone::TimedOut(d) => format!("waited {}", humantime::format_duration(*d)),
        }
    }

    /// At the client's `initialize` (2026-07-28: at the request a step awaits, whose
    /// `_meta` declares the capabilities "relevant to this request"): whether it declares
    /// what the scenario requires.
    fn note_requirements(&mut self, incoming: &Incoming, awaited: &str) {
        let capabilities = match self.stage.revision.has_handshake() {
            true if incoming.method() == Some("initialize") => {
                incoming.value.pointer("/params/capabilities")
            }
            false if incoming.method() == Some(awaited) || awaited == ANY_REQUEST => {
                crate::check::client_stateless::meta_capabilities(incoming.value.get("params"))
            }
            _ => return,
        };
        let capabilities = capabilities.cloned().unwrap_or_default();
        let unmet = self
            .scenario
            .requires
            .iter()
            .find(|r| !r.met_by(&capabilities));
        self.out.skipped = unmet.map(|r| match r.declared {
            true => format!("the client does not declare `{}`", r.capability),
            false => format!(
                "the client declares `{}` (this checks clients without it)",
                r.capability
            ),
        });
    }

    fn default_answer(&mut self, incoming: Incoming) {
        if let Message::Request(request) = &incoming.message {
            let answer = self.mock.default_answer(request);
            self.mock.answer(incoming, answer);
        }
    }

    /// Whether `value` passes a step's `match` checks.
    fn passes(&self, filter: &[Check], value: &Value) -> bool {
        let schema = self.mock.schema();
        let vars = Vars::default();
        let cx = MatchContext {
            vars: &vars,
            schema: schema.as_ref().as_ref().ok(),
        };
        check_all(filter, value, cx).mismatches.is_empty()
    }

    fn check(&mut self, checks: &[Check], value: &Value, base: &str, frame: usize, what: &str) {
        let schema = self.mock.schema();
        let vars = Vars::default();
        let cx = MatchContext {
            vars: &vars,
            schema: schema.as_ref().as_ref().ok(),
        };
        let report = check_all(checks, value, cx);
        let source = &self.scenario.source;
        self.out
            .unchecked
            .extend(report.skipped.into_iter().map(|s| format!("{source}: {s}")));
        for m in report.mismatches {
            let at = if m.pointer.is_empty() {
                "/"
            } else {
                &m.pointer
            };
            let message = format!(
                "{what}: at `{at}` expected {}, got {}",
                m.expected, m.actual
            );
            let f = self
                .finding(m.line, message, Some(frame))
                .pointer(format!("{base}{}", m.pointer))
                .expected(m.expected);
            self.out.findings.push(f);
        }
    }

    fn fail(&mut self, line: usize, message: String, frame: Option<usize>) {
        let f = self.finding(line, message, frame);
        self.out.findings.push(f);
    }

    fn finding(&self, line: usize, message: String, frame: Option<usize>) -> Finding {
        let s = self.scenario;
        let f = Finding::custom(
            s.rule_id(),
            s.severity,
            s.spec_url(self.stage.revision),
            format!("{message} ({}:{line})", s.source),
        );
        match frame {
            Some(i) => f.at_frame(i),
            None => f,
        }
    }
}

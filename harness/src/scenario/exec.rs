//! Running one scenario against a fresh server.
//!
//! The session checks every frame as always; the scenario adds its own expectations.
//! A session finding belongs to the scenario only when its rule is the scenario's rule;
//! the rest are protocol findings of the run, so one defect fails the scenario written
//! for it and not every scenario that happens to see it.

use std::collections::{BTreeMap, VecDeque};
use std::sync::Arc;
use std::time::{Duration, Instant};

use serde_json::{Value, json};

use super::matcher::{MatchContext, check_all};
use super::model::{
    Expectation, Initialize, RequestStep, ResponseExpectation, Scenario, Step, StepKind,
    TransportKind,
};
use super::template::Vars;
use crate::check::{Finding, Severity};
use crate::protocol::{Message, Outcome, RequestId};
use crate::runner::events::{Emitter, Event, FindingScope, StepEnd};
use crate::schema::SchemaStore;
use crate::session::{Handshake, Reply, Session, SessionConfig, SessionError, Unsolicited};
use crate::transport::StderrExcerpt;
use crate::transport::target::Target;

pub use crate::outcome::{ScenarioOutcome, ToolPolicy, Verdict};

/// What a scenario run needs.
#[derive(Clone, Debug)]
pub struct ExecConfig {
    /// The server: spawned afresh, or a fresh HTTP session, per scenario.
    pub target: Target,
    pub session: SessionConfig,
    pub tools: ToolPolicy,
    /// User-given arguments per tool name (`--tool-args`): those tools may be called
    /// under `readonly` too, with these arguments.
    pub tool_args: Arc<BTreeMap<String, Value>>,
}

/// Runs one scenario on a fresh server process.
pub async fn run(
    scenario: &Scenario,
    config: &ExecConfig,
    schemas: Arc<SchemaStore>,
) -> ScenarioOutcome {
    run_observed(scenario, config, schemas, &Emitter::default()).await
}

/// [`run`], emitting its steps, frames and findings into `events` as they happen.
pub async fn run_observed(
    scenario: &Scenario,
    config: &ExecConfig,
    schemas: Arc<SchemaStore>,
    events: &Emitter,
) -> ScenarioOutcome {
    let started = Instant::now();
    let revision = config.session.revision;
    let spec = if scenario.spec.starts_with("https://") {
        scenario.spec.clone()
    } else {
        revision.spec_url(&scenario.spec)
    };
    let not_started = || StderrExcerpt::NotCaptured {
        reason: "no server was started for this scenario".into(),
    };
    let outcome = |verdict, findings, protocol, transcript, unchecked, skipped_steps, stderr| {
        ScenarioOutcome {
            id: scenario.id.clone(),
            title: scenario.title.clone(),
            spec: spec.clone(),
            verdict,
            findings,
            protocol,
            unchecked,
            skipped_steps,
            duration_ms: started.elapsed().as_millis() as u64,
            transcript,
            stderr,
        }
    };
    if !scenario.revisions.contains(&revision) {
        let list = scenario
            .revisions
            .iter()
            .map(|r| r.as_str())
            .collect::<Vec<_>>()
            .join(", ");
        let reason = format!("applies to {list}; this run speaks {revision}");
        return outcome(
            Verdict::Skip { reason },
            vec![],
            vec![],
            vec![],
            vec![],
            vec![],
            not_started(),
        );
    }
    let kind = config.target.kind();
    if !scenario.transports.contains(&kind) {
        let name = match kind {
            TransportKind::Stdio => "stdio",
            TransportKind::Http => "Streamable HTTP",
        };
        return outcome(
            Verdict::Skip {
                reason: format!("not for the {name} transport"),
            },
            vec![],
            vec![],
            vec![],
            vec![],
            vec![],
            not_started(),
        );
    }
    let transport = match config.target.open(started) {
        Ok(t) => t,
        Err(e) => {
            return outcome(
                Verdict::Error {
                    reason: e.to_string(),
                },
                vec![],
                vec![],
                vec![],
                vec![],
                vec![],
                not_started(),
            );
        }
    };
    let mut session = Session::new(transport, schemas, config.session.clone(), started);
    if !events.is_empty() {
        let (events, id) = (events.clone(), scenario.id.clone());
        session.observe_transcript(crate::session::transcript::Observer(Arc::new(
            move |index, entry| events.emit(Event::frame(&id, index, entry)),
        )));
    }
    let stderr_log = session.stderr_log();
    let mut exec = Executor::new(scenario, session, config.tools, spec.clone());
    exec.events = events.clone();
    // Always defined, so `${tool_args}` renders (as `{}`) when none were given.
    exec.vars.insert(
        super::synth::TOOL_ARGS.into(),
        Value::Object(config.tool_args.as_ref().clone().into_iter().collect()),
    );
    let skip = exec.run_steps(&scenario.steps).await.err();
    let Executor {
        session,
        mut findings,
        unchecked,
        skipped_steps,
        tool_calls_sent,
        loop_runs,
        not_exercised,
        session_findings_emitted,
        ..
    } = exec;
    let record = session.finish().await;
    let rule = scenario.rule.clone().unwrap_or_else(|| scenario.id.clone());
    // Findings of the shutdown and of what arrived on the way out.
    for f in record.findings.iter().skip(session_findings_emitted) {
        emit_finding(events, &scenario.id, &rule, f);
    }
    let stderr = match stderr_log {
        Some(log) => log.excerpt(
            crate::transport::stderr::EXCERPT_HEAD,
            crate::transport::stderr::EXCERPT_TAIL,
        ),
        None => StderrExcerpt::NotCaptured {
            reason: "not captured: the server is not a process mcpcheck started".into(),
        },
    };
    let (mine, protocol): (Vec<_>, Vec<_>) =
        record.findings.into_iter().partition(|f| f.rule == rule);
    findings.extend(mine);
    let transcript = record.transcript.entries().to_vec();
    // Nothing of what the scenario checks exists on this server (a deciding loop never
    // ran, or an awaited notification never came): not a pass.
    let unexercised = not_exercised.or_else(|| {
        loop_runs
            .values()
            .find(|(n, counted, _)| *counted && *n == 0)
            .map(|(_, _, list)| format!("nothing to check: no element of `{list}` to run on"))
    });
    let verdict = match skip {
        Some(Stop::Skip(reason)) => Verdict::Skip { reason },
        Some(Stop::Error(reason)) => Verdict::Error { reason },
        _ if findings.iter().any(|f| f.severity == Severity::Failure) => Verdict::Fail,
        _ if findings.iter().any(|f| f.severity == Severity::Warning) => Verdict::Warn,

        // Every tool call the scenario meant to make was forbidden by the policy: nothing
        // was checked, so it is a skip, not a pass.
        _ if tool_calls_sent == 0 && !skipped_steps.is_empty() => Verdict::Skip {
            reason: format!(
                "every tools/call was skipped by --call-tools ({} calls)",
                skipped_steps.len()
            ),
        },
        _ if unexercised.is_some() => Verdict::Skip {
            reason: unexercised.unwrap_or_default(),
        },
        _ => Verdict::Pass,
    };
    outcome(
        verdict,
        findings,
        protocol,
        transcript,
        unchecked,
        skipped_steps,
        stderr,
    )
}

/// A finding event: the scenario's own rule decides its verdict, any other is a protocol one.
fn emit_finding(events: &Emitter, scenario: &str, rule: &str, f: &Finding) {
    events.emit_with(|| Event::Finding {
        scenario: Some(scenario.to_owned()),
        scope: if f.rule == rule {
            FindingScope::Scenario
        } else {
            FindingScope::Protocol
        },
        finding: f.clone(),
    });
}

/// Why the steps stopped early.
enum Stop {
    /// The scenario does not apply (an unmet `requires`).
    Skip(String),
    /// The scenario cannot go on: its server is gone or a step failed in a way that makes
    /// the rest meaningless (already recorded as a finding).
    Failed,
    /// A problem in the scenario or harness.
    Error(String),
}

struct Executor<'a> {
    scenario: &'a Scenario,
    session: Session,
    vars: Vars,
    findings: Vec<Finding>,
    unchecked: Vec<String>,
    skipped_steps: Vec<String>,
    /// `tools/call` requests actually sent (the policy may skip others).
    tool_calls_sent: usize,
    /// Per `for_each` step (by line): iterations run, whether it decides the verdict when
    /// it never runs, and the list's name.
    loop_runs: BTreeMap<usize, (usize, bool, String)>,
    /// How many `for_each` bodies the current step is inside.
    depth: usize,
    /// Set by an `expect: notification` with `otherwise: skip` that saw nothing.
    not_exercised: Option<String>,
    policy: ToolPolicy,
    /// Tools seen in any `tools/list` result, by name, for the call policy.
    tools: BTreeMap<String, Value>,
    /// Whether a `tools/list` result has been seen (so `tools` is the server's list).
    tools_listed: bool,
    /// Messages the server sent on its own, not yet matched by an expectation.
    inbox: VecDeque<Unsolicited>,
    /// Inbox length when the last raw bytes were sent: a null-id response older than
    /// that cannot answer them.
    mark: usize,
    spec: String,
    severity: Severity,
    rule: String,
    /// Where steps and findings are reported as they happen (nowhere by default).
    events: Emitter,
    /// Steps started so far (the `step` number of the events).
    steps_started: usize,
    /// Findings already emitted as events: the executor's, and the session's.
    findings_emitted: usize,
    session_findings_emitted: usize,
}

impl<'a> Executor<'a> {
    fn new(scenario: &'a Scenario, session: Session, policy: ToolPolicy, spec: String) -> Self {
        let mut vars = Vars::new();
        vars.insert("revision".into(), json!(session.revision().as_str()));
        Executor {
            scenario,
            vars,
            findings: Vec::new(),
            unchecked: Vec::new(),
            skipped_steps: Vec::new(),
            tool_calls_sent: 0,
            loop_runs: BTreeMap::new(),
            depth: 0,
            not_exercised: None,
            policy,
            tools: BTreeMap::new(),
            tools_listed: false,
            inbox: VecDeque::new(),
            mark: 0,
            spec,
            severity: scenario.severity,
            rule: scenario.rule.clone().unwrap_or_else(|| scenario.id.clone()),
            session,
            events: Emitter::default(),
            steps_started: 0,
            findings_emitted: 0,
            session_findings_emitted: 0,
        }
    }

    fn fail(&mut self, line: usize, message: String, frame: Option<usize>) -> Finding {
        let mut f = Finding::custom(
            self.rule.clone(),
            self.severity,
            self.spec.clone(),
            format!("{message} ({}:{line})", self.scenario.source),
        );
        if let Some(i) = frame {
            f = f.at_frame(i);
        }
        f
    }

    fn session_failure(&mut self, e: &SessionError) -> Stop {
        // The server failed this scenario's own request: that is this scenario's failure.
        let mut f = self.session.finding_for(e);
        f.rule = self.rule.clone();
        // A server that is gone fails whatever the scenario; silence in a SHOULD-level
        // scenario (say, no answer to malformed input) is only as bad as that scenario.
        f.severity = match e {
            SessionError::Timeout { .. } => self.severity,
            _ => Severity::Failure,
        };
        self.findings.push(f);
        Stop::Failed
    }

    fn render(&self, t: &super::model::Template, line: usize) -> Result<Value, Stop> {
        t.render(&self.vars)
            .map_err(|e| Stop::Error(format!("{}:{line}: {e}", self.scenario.source)))
    }

    async fn run_steps(&mut self, steps: &[Step]) -> Result<(), Stop> {
        for step in steps {
            if self.events.is_empty() {
                Box::pin(self.run_step(step)).await?;
                continue;
            }
            let n = self.steps_started;
            self.steps_started += 1;
            let before = (self.findings.len(), self.skipped_steps.len());
            self.events.emit(Event::StepStarted {
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
    fn step_finished(
        &mut self,
        n: usize,
        line: usize,
        (findings, skipped): (usize, usize),
        done: &Result<(), Stop>,
    ) {
        let id = &self.scenario.id;
        for f in &self.findings[self.findings_emitted.min(self.findings.len())..] {
            emit_finding(&self.events, id, &self.rule, f);
        }
        self.findings_emitted = self.findings.len();
        for f in self
            .session
            .findings()
            .iter()
            .skip(self.session_findings_emitted)
        {
            emit_finding(&self.events, id, &self.rule, f);
        }
        self.session_findings_emitted = self.session.findings().len();
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
            Ok(()) if raised(Severity::Failure) => StepEnd::Failed,
            Ok(()) if raised(Severity::Warning) => StepEnd::Warned,
            Ok(()) if self.skipped_steps.len() > skipped => StepEnd::Skipped {
                reason: self.skipped_steps[skipped..].join("; "),
            },
            Ok(()) => StepEnd::Passed,
        };
        self.events.emit(Event::StepFinished {
            scenario: id.clone(),
            step: n,
            line,
            status,
        });
    }

    async fn run_step(&mut self, step: &Step) -> Result<(), Stop> {
        let line = step.line;
        match &step.kind {
            StepKind::Initialize(Initialize::None) => Ok(()),
            StepKind::Initialize(Initialize::Handshake(o)) => {
                let handshake = Handshake {
                    protocol_version: match &o.protocol_version {
                        Some(t) => Some(match self.render(t, line)? {
                            Value::String(s) => s,
                            other => other.to_string(),
                        }),
                        None => None,
                    },
                    capabilities: o.capabilities.clone(),
                    skip_initialized: o.skip_initialized,
                };
                let (profile, reply) = match self.session.initialize_with(&handshake).await {
                    Ok(r) => r,
                    Err(e) => return Err(self.session_failure(&e)),
                };
                if let Some(expect) = &o.expect {
                    self.check_reply(expect, &reply, line, "initialize");
                }
                self.vars
                    .insert("revision".into(), json!(self.session.revision().as_str()));
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
                for need in &self.scenario.requires {
                    let mut path = need.capability.split('.');
                    let top = path.next().unwrap_or_default();
                    let mut cap = profile.capabilities.get(top);
                    for sub in path {
                        cap = cap
                            .and_then(|c| c.get(sub))
                            .filter(|v| !matches!(v, Value::Bool(false)));
                    }
                    let declared = !cap.is_none_or(Value::is_null);
                    match (need.declared, declared) {
                        (true, false) => {
                            return Err(Stop::Skip(format!(
                                "the server does not declare `{}`",
                                need.capability
                            )));
                        }
                        (false, true) => {
                            return Err(Stop::Skip(format!(
                                "the server declares `{}` (this checks servers without it)",
                                need.capability
                            )));
                        }
                        _ => {}
                    }
                }
                Ok(())
            }
            StepKind::Request(r) => self.request(r).await,
            StepKind::Notify { method, params } => {
                let method = self.render_method(method, line)?;
                let params = params.as_ref().map(|p| self.render(p, line)).transpose()?;
                self.session
                    .notify(&method, params)
                    .await
                    .map_err(|e| self.session_failure(&e))
            }
            StepKind::SendRaw(t) => {
                let bytes = match self.render(t, line)? {
                    Value::String(s) => s,
                    other => other.to_string(),
                };
                self.register_raw_requests(&bytes);
                self.collect();
                self.mark = self.inbox.len();
                self.session
                    .send_raw(bytes.into_bytes())
                    .await
                    .map_err(|e| self.session_failure(&e))
            }
            StepKind::Expect(e) => self.expect(e, line).await,
            StepKind::Concurrent(requests) => {
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
            StepKind::Check { value, checks } => {
                let v = self.render(value, line)?;
                self.apply_checks(checks, &v, "", line, None, "the checked value");
                Ok(())
            }
            StepKind::ForEach {
                list,
                bind,
                filter,
                steps,
            } => {
                let items = match self.vars.get(list) {
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
                self.loop_runs
                    .entry(line)
                    .or_insert((0, counted, list.clone()));
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
                    if let Some(r) = self.loop_runs.get_mut(&line) {
                        r.0 += 1;
                    }
                    self.vars.insert(bind.clone(), item);
                    self.depth += 1;
                    let done = self.run_steps(steps).await;
                    self.depth -= 1;
                    done?;
                }
                self.vars.remove(bind);
                Ok(())
            }
            StepKind::Paginate {
                method,
                key,
                into,
                params,
            } => {
                let base = params.as_ref().map(|p| self.render(p, line)).transpose()?;
                let items = self.paginate(method, key, base, line).await?;
                if method == "tools/list" {
                    self.remember_tools(&items, true);
                }
                self.vars.insert(into.clone(), Value::Array(items));
                Ok(())
            }
            StepKind::Sleep(d) => {
                self.session.pump(*d).await;
                Ok(())
            }
            StepKind::Http(h) => {
                let body = h.body.as_ref().map(|t| self.render(t, line)).transpose()?;
                match super::http_step::run(h, body, &mut self.session).await {
                    Ok(problems) => {
                        for p in problems {
                            let f = self.fail(line, p, None);
                            self.findings.push(f);
                        }
                        Ok(())
                    }
                    Err(super::http_step::HttpStop::Skip(r)) => Err(Stop::Skip(r)),
                    Err(super::http_step::HttpStop::Error(r)) => Err(Stop::Error(r)),
                }
            }
        }
    }

    fn render_method(&self, t: &super::model::Template, line: usize) -> Result<String, Stop> {
        Ok(match self.render(t, line)? {
            Value::String(s) => s,
            other => other.to_string(),
        })
    }

    /// Sends one request; `None` when the tool-call policy skips it.
    async fn send(&mut self, r: &RequestStep) -> Result<Option<(RequestId, String)>, Stop> {
        let method = self.render_method(&r.method, r.line)?;
        let mut params = r
            .params
            .as_ref()
            .map(|p| self.render(p, r.line))
            .transpose()?;
        if method == "tools/call" {
            // Ask for progress, so a long-running tool that reports it is not taken for a hang.
            if let Some(Value::Object(p)) = &mut params
                && let Value::Object(meta) = p.entry("_meta").or_insert_with(|| json!({}))
            {
                meta.entry("progressToken")
                    .or_insert_with(|| json!(format!("mcpcheck-{}", r.line)));
            }
            let name = params
                .as_ref()
                .and_then(|p| p.get("name"))
                .and_then(Value::as_str)
                .unwrap_or_default()
                .to_owned();
            if let Some(why) = self.forbidden(&name) {
                self.skipped_steps.push(format!(
                    "{}:{}: tools/call `{name}` skipped: {why}",
                    self.scenario.source, r.line
                ));
                return Ok(None);
            }
            self.tool_calls_sent += 1;
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
        self.session
            .send_request(id.clone(), &method, params)
            .await
            .map_err(|e| self.session_failure(&e))?;
        Ok(Some((id, method)))
    }

    async fn request(&mut self, r: &RequestStep) -> Result<(), Stop> {
        let Some((id, method)) = self.send(r).await? else {
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
        match self.session.wait_reply(&id).await {
            Ok(reply) => {
                self.after_reply(r, &reply, &method, &id);
                Ok(())
            }
            Err(e) => Err(self.session_failure(&e)),
        }
    }

    fn after_reply(&mut self, r: &RequestStep, reply: &Reply, method: &str, id: &RequestId) {
        if method == "tools/list"
            && let Some(result) = reply.result()
            && let Some(tools) = result.get("tools").and_then(Value::as_array)
        {
            let tools = tools.clone();
            let complete = result.get("nextCursor").is_none() && r.params.is_none();
            self.remember_tools(&tools, complete);
        }
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

    fn check_reply(
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
                    let want = codes
                        .iter()
                        .map(|c| c.to_string())
                        .collect::<Vec<_>>()
                        .join(" or ");
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
                let value = json!({"code": e.code, "message": e.message, "data": e.data});
                (checks, value, "/error")
            }
            (ResponseExpectation::Error { codes, .. }, Outcome::Result(_)) => {
                let want = if codes.is_empty() {
                    "an error".to_owned()
                } else {
                    format!(
                        "error {}",
                        codes
                            .iter()
                            .map(|c| c.to_string())
                            .collect::<Vec<_>>()
                            .join(" or ")
                    )
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
            (ResponseExpectation::Any(checks), Outcome::Error(e)) => (
                checks,
                json!({"code": e.code, "message": e.message, "data": e.data}),
                "/error",
            ),
            (ResponseExpectation::OneOf(alternatives), _) => {
                // Each alternative is tried on its own; the response passes if one holds.
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
                        format!(
                            "`{method}`: the response matches none of the alternatives: {detail}"
                        ),
                        reply.frame,
                    )
                    .pointer(pointer);
                self.findings.push(f);
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
            line,
            reply.frame,
            &format!("the response to `{method}`"),
        );
    }

    fn apply_checks(
        &mut self,
        checks: &[super::model::Check],
        target: &Value,
        base: &str,
        line: usize,
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
        let _ = line;
    }

    async fn expect(&mut self, e: &Expectation, line: usize) -> Result<(), Stop> {
        match e {
            Expectation::Notification {
                method,
                within,
                checks,
                skip_if_absent,
            } => {
                let deadline = tokio::time::Instant::now() + *within;
                loop {
                    self.collect();
                    if let Some(pos) = self.inbox.iter().position(
                        |u| matches!(&u.message, Message::Notification(n) if &n.method == method),
                    ) {
                        let u = self.inbox.remove(pos).expect("found above");
                        let value = message_value(&u.message);
                        self.apply_checks(
                            checks,
                            &value,
                            "",
                            line,
                            u.frame,
                            &format!("the `{method}` notification"),
                        );
                        return Ok(());
                    }
                    let now = tokio::time::Instant::now();
                    if now >= deadline || self.session.is_closed() {
                        if *skip_if_absent && !self.session.is_closed() {
                            self.not_exercised =
                                Some(format!("the server sent no `{method}` (nothing to check)"));
                            return Ok(());
                        }
                        let f = self.fail(
                            line,
                            format!(
                                "no `{method}` notification arrived within {}",
                                humantime::format_duration(*within)
                            ),
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
            Expectation::Nothing { within, methods } => {
                // Only what arrives during the window counts, not what came before it.
                self.collect();
                let before = self.inbox.len();
                self.session.pump(*within).await;
                self.collect();
                let unwanted: Vec<Unsolicited> = self
                    .inbox
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
                            humantime::format_duration(*within)
                        ),
                        u.frame,
                    );
                    self.findings.push(f);
                }
                Ok(())
            }
            Expectation::Exit { within, code } => {
                self.session.close_input().await;
                match self.session.wait_exit(*within).await {
                    None => {
                        let f = self.fail(
                            line,
                            format!(
                                "the server did not exit within {} of its input closing",
                                humantime::format_duration(*within)
                            ),
                            None,
                        );
                        self.findings.push(f);
                    }
                    Some(exit) => {
                        if let Some(want) = code
                            && exit != crate::transport::ExitInfo::Code(*want)
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
                Ok(())
            }
            Expectation::Stderr {
                within,
                pattern,
                present,
            } => self.expect_stderr(pattern, *present, *within, line).await,
            Expectation::Response { id, within, expect } => {
                let reply = match id {
                    Value::Null => self.null_id_response(*within).await,
                    other => match id_of(other) {
                        Some(rid) => self.session.poll_reply(&rid, *within).await,
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
                        let f = self.fail(
                            line,
                            format!(
                                "no response with id {id} arrived within {}",
                                humantime::format_duration(*within)
                            ),
                            None,
                        );
                        self.findings.push(f);
                    }
                    (Some(reply), expect) => {
                        self.check_reply(expect, &reply, line, &format!("request {id}"))
                    }
                }
                Ok(())
            }
        }
    }

    /// `expect: stderr`. Over HTTP there is no stderr to read: the check cannot run, so
    /// the scenario is skipped (or keeps the failure it already has), never passed.
    async fn expect_stderr(
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
                        .expected(format!("no stderr line matching /{pattern}/"));
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
    async fn null_id_response(&mut self, within: Duration) -> Option<Reply> {
        let deadline = tokio::time::Instant::now() + within;
        loop {
            self.collect();
            let mark = self.mark.min(self.inbox.len());
            if let Some(pos) = self
                .inbox
                .iter()
                .skip(mark)
                .position(|u| matches!(&u.message, Message::Response(r) if r.id.is_none()))
                .map(|p| p + mark)
            {
                let u = self.inbox.remove(pos)?;
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

    fn collect(&mut self) {
        self.inbox.extend(self.session.take_unsolicited());
    }

    /// Requests inside raw bytes are registered so their responses are correlated.
    fn register_raw_requests(&mut self, text: &str) {
        for line in text.lines() {
            let Ok(value) = serde_json::from_str::<Value>(line) else {
                continue;
            };
            let items = match &value {
                Value::Array(a) => a.clone(),
                v => vec![v.clone()],
            };
            for item in items {
                // Anything with an id that is not itself a response expects an answer,
                // including deliberately invalid requests (a method that is not a string).
                let is_response = item.get("result").is_some() || item.get("error").is_some();
                if let Some(id) = item.get("id").and_then(id_of)
                    && !is_response
                {
                    let method = item
                        .get("method")
                        .and_then(Value::as_str)
                        .unwrap_or("(invalid request)");
                    self.session.expect_reply(id, method);
                }
            }
        }
    }

    /// Records listed tools; `complete` when the list has no further page.
    fn remember_tools(&mut self, tools: &[Value], complete: bool) {
        self.tools_listed |= complete;
        for t in tools {
            if let Some(name) = t.get("name").and_then(Value::as_str) {
                self.tools.insert(name.to_owned(), t.clone());
            }
        }
    }

    /// Why the policy forbids calling `name`, if it does. A name the server's tool list
    /// (already fetched) does not have names no tool, so calling it has no side effect:
    /// that is how unknown-tool handling is tested under any policy but `none`.
    fn forbidden(&self, name: &str) -> Option<String> {
        if self.tools_listed && !self.tools.contains_key(name) && self.policy != ToolPolicy::None {
            return None;
        }
        // The user gave arguments for this tool: they opted in to calling it.
        let user_given = self
            .vars
            .get(super::synth::TOOL_ARGS)
            .is_some_and(|m| m.get(name).is_some());
        if user_given && self.policy != ToolPolicy::None {
            return None;
        }
        self.policy.forbids(self.tools.get(name))
    }

    async fn paginate(
        &mut self,
        method: &str,
        key: &str,
        base: Option<Value>,
        line: usize,
    ) -> Result<Vec<Value>, Stop> {
        let mut items = Vec::new();
        let mut cursor: Option<String> = None;
        let mut seen = std::collections::HashSet::new();
        for _ in 0..1000 {
            let mut params = base.clone().unwrap_or_else(|| json!({}));
            if let (Some(c), Value::Object(map)) = (&cursor, &mut params) {
                map.insert("cursor".into(), json!(c));
            }
            let params = if params.as_object().is_some_and(|m| m.is_empty()) {
                None
            } else {
                Some(params)
            };
            let reply = match self.session.request(method, params).await {
                Ok(r) => r,
                Err(e) => return Err(self.session_failure(&e)),
            };
            let Some(result) = reply.result() else {
                let f = self.fail(
                    line,
                    format!("`{method}` answered with an error while paginating"),
                    reply.frame,
                );
                self.findings.push(f);
                return Err(Stop::Failed);
            };
            if let Some(page) = result.get(key).and_then(Value::as_array) {
                items.extend(page.iter().cloned());
            }
            match result.get("nextCursor").and_then(Value::as_str) {
                None => return Ok(items),
                Some(next) if !seen.insert(next.to_owned()) => {
                    let f = self
                        .fail(
                            line,
                            format!(
                                "`{method}` returned cursor {next:?} twice: the pagination loops"
                            ),
                            reply.frame,
                        )
                        .pointer("/result/nextCursor");
                    self.findings.push(f);
                    return Ok(items);
                }
                Some(next) => cursor = Some(next.to_owned()),
            }
        }
        let f = self.fail(
            line,
            format!("`{method}` was still paginating after 1000 pages"),
            None,
        );
        self.findings.push(f);
        Ok(items)
    }
}

/// What a step does, in a few words, for the step events.
fn action(kind: &StepKind) -> String {
    let text = |t: &super::model::Template| match &t.0 {
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
        StepKind::Expect(Expectation::Nothing { .. }) => "expect nothing".into(),
        StepKind::Expect(Expectation::Exit { .. }) => "expect exit".into(),
        StepKind::Expect(Expectation::Stderr { .. }) => "expect stderr".into(),
        StepKind::Expect(Expectation::Response { id, .. }) => format!("expect response {id}"),
        StepKind::Concurrent(rs) => format!("{} concurrent requests", rs.len()),
        StepKind::Check { .. } => "check".into(),
        StepKind::ForEach { list, .. } => format!("for each in {list}"),
        StepKind::Paginate { method, .. } => format!("paginate {method}"),
        StepKind::Sleep(d) => format!("sleep {}", humantime::format_duration(*d)),
        StepKind::Http(_) => "HTTP exchange".into(),
    }
}

fn id_of(v: &Value) -> Option<RequestId> {
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
            json!({"jsonrpc": "2.0", "id": id.to_value(), "error": {"code": e.code, "message": e.message, "data": e.data}})
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
fn stderr_match(log: &crate::transport::StderrLog, re: &regex::Regex) -> Option<String> {
    let head = log.head();
    let tail = log.tail_text();
    head.iter()
        .map(|l| l.text.as_str())
        .chain(tail.lines())
        .find(|l| re.is_match(l))
        .map(|l| crate::session::quote(l, 200))
}

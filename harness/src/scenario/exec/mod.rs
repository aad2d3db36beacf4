//! Running one scenario: [`run`] opens the server, steps through the scenario with an
//! `Executor`, and turns what it saw into a [`ScenarioOutcome`]; [`run_leased`] runs it on
//! a session shared with other scenarios instead (see `scenario::share`).
//!
//! The session checks every frame as always; the scenario adds its own expectations.
//! A session finding belongs to the scenario only when its rule is the scenario's rule;
//! the rest are protocol findings of the run, so one defect fails the scenario written
//! for it and not every scenario that happens to see it.
//!
//! The executor's parts, each an `impl Executor` block: `step` dispatches steps and
//! reports them, `request` sends requests and checks their replies, `wait` awaits what
//! the server sends on its own (notifications, silence, exit, stderr), `paginate`
//! follows cursors, `input` answers `input_required` rounds (2026-07-28), `http` runs
//! the raw `http` step. Which `tools/call` may leave is the session's tool-call gate's
//! decision, not the executor's (`session::gate`).

mod auth;
mod burst;
mod coverage;
mod http;
mod inbox;
mod input;
mod live;
mod negotiate;
mod paginate;
mod request;
mod step;
mod wait;

use std::collections::BTreeMap;
use std::sync::Arc;
use std::time::Instant;

use serde_json::Value;

use self::coverage::Coverage;
use self::inbox::Inbox;
use self::live::Live;
use super::builtin_vars;
use super::model::{Scenario, Template, TransportKind};
use super::observe::{Attribution, Observer, Unobserved};
use super::synth::TOOL_ARGS;
use super::template::Vars;
use crate::check::{Finding, Severity};
use crate::protocol::RequestId;
use crate::schema::SchemaStore;
use crate::session::{Session, SessionConfig, SessionError, ShutdownWatch};
use crate::transport::StderrExcerpt;
use crate::transport::target::Target;

use crate::outcome::{ScenarioOutcome, ToolPolicy, Verdict};
pub use negotiate::NegotiationProbe;

/// What a scenario run needs.
#[derive(Clone, Debug)]
pub struct ExecConfig {
    /// The server: spawned afresh, or a fresh HTTP session, per scenario.
    pub target: Target,
    /// How each scenario's session speaks and checks (revision, timeouts).
    pub session: SessionConfig,
    /// Which tools scenarios may call (`--call-tools`).
    pub tools: ToolPolicy,
    /// User-given arguments per tool name (`--tool-args`): those tools may be called
    /// under `readonly` too, with these arguments.
    pub tool_args: Arc<BTreeMap<String, Value>>,
    /// The run's version-negotiation probe, shared by its `negotiate` scenarios.
    pub negotiation: NegotiationProbe,
    /// `--isolate`: every scenario on a server of its own, even those that could share
    /// one (`scenario::share`).
    pub isolate: bool,
}

/// Runs one scenario on a fresh server process.
pub async fn run(
    scenario: &Scenario,
    config: &ExecConfig,
    schemas: Arc<SchemaStore>,
) -> ScenarioOutcome {
    run_observed(scenario, config, schemas, Arc::new(Unobserved)).await
}

/// [`run`], telling `observer` of its steps, frames and findings as they happen.
pub async fn run_observed(
    scenario: &Scenario,
    config: &ExecConfig,
    schemas: Arc<SchemaStore>,
    observer: Arc<dyn Observer>,
) -> ScenarioOutcome {
    run_leased(scenario, config, schemas, observer, Lease::Fresh)
        .await
        .outcome
}

/// What [`run_leased`] leaves: the outcome, the session when it may serve another
/// scenario, and, for a scenario that handed back a session whose shutdown it judges
/// (`share::judges_shutdown`), the watch its verdict still waits on ([`settle`]).
#[derive(Debug)]
pub struct Ran {
    /// The scenario's outcome (final unless `watch` is some).
    pub outcome: ScenarioOutcome,
    /// The session, for the next scenario.
    pub session: Option<Session>,
    /// What the outcome still waits for.
    pub watch: Option<ShutdownWatch>,
}

/// Asked once a scenario's steps are done: whether another scenario may still want its
/// shared session (if not, the scenario shuts it down, and the shutdown is in its window).
pub type Wanted = Box<dyn FnOnce() -> bool + Send>;

/// Where a scenario's session comes from, and where it goes when the scenario is done.
pub enum Lease {
    /// A server of its own, shut down with the scenario (`--isolate`, and every scenario
    /// `share::needs_fresh` names).
    Fresh,
    /// A server of its own, handed to the shared scenarios afterwards when the scenario
    /// leaves it as they would want it (`share::donates`, `Session::donatable`);
    /// otherwise shut down with the scenario.
    Donor {
        /// As for [`Lease::Shared`]: the ids the shared scenarios choose themselves.
        chosen: Arc<[RequestId]>,
    },
    /// A session shared with other scenarios: an earlier scenario's (its handshake
    /// done), or `None` to open one (this scenario's handshake opens it). When `wanted`
    /// says so, a session still healthy afterwards is handed back for the next scenario;
    /// otherwise, or when it is not healthy, it is shut down within this scenario.
    Shared {
        /// The session an earlier scenario left (boxed: a session is large).
        session: Option<Box<Session>>,
        /// Whether another scenario may still want it.
        wanted: Wanted,
        /// Ids the suite's shared scenarios choose themselves, which the session never
        /// allocates (so no scenario has to wait for a session that has not used them).
        chosen: Arc<[RequestId]>,
    },
}

/// [`run_observed`] on the session `lease` gives; returns the session when it may serve
/// another scenario. Only what happened during this scenario's window is its outcome:
/// its transcript, findings and stderr start when it starts.
#[expect(
    clippy::too_many_lines,
    reason = "split pending in session/scenario rewrite"
)]
pub async fn run_leased(
    scenario: &Scenario,
    config: &ExecConfig,
    schemas: Arc<SchemaStore>,
    observer: Arc<dyn Observer>,
    lease: Lease,
) -> Ran {
    let started = Instant::now();
    let ran = |outcome, session| Ran {
        outcome,
        session,
        watch: None,
    };
    let revision = config.session.revision;
    let spec = scenario.spec_url(revision);
    const NOT_STARTED: &str = "no server was started for this scenario";
    let not_started = || StderrExcerpt::NotCaptured {
        reason: NOT_STARTED.into(),
    };
    // Skipped before it started (its duration is still the time it took to decide).
    let skipped = |verdict| ScenarioOutcome {
        duration_ms: started.elapsed().as_millis() as u64,
        ..ScenarioOutcome::not_run(
            &scenario.id,
            &scenario.title,
            spec.clone(),
            scenario.official.clone(),
            verdict,
            NOT_STARTED,
        )
    };
    let outcome = |verdict, findings, protocol, transcript, unchecked, skipped_steps, stderr| {
        ScenarioOutcome {
            id: scenario.id.clone(),
            title: scenario.title.clone(),
            spec: spec.clone(),
            official: scenario.official.clone(),
            verdict,
            findings,
            protocol,
            unchecked,
            skipped_steps,
            policy_skips: Vec::new(),
            fixture_calls: 0,
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
        return ran(skipped(Verdict::Skip { reason }), lease.into_session());
    }
    let kind = config.target.kind();
    if !scenario.transports.contains(&kind) {
        let name = match kind {
            TransportKind::Stdio => "stdio",
            TransportKind::Http => "Streamable HTTP",
        };
        let reason = format!("not for the {name} transport");
        return ran(skipped(Verdict::Skip { reason }), lease.into_session());
    }
    if let Some(check) = scenario.negotiation() {
        // Its own fresh sessions, one per version asked: no session for the scenario. A
        // donor may hand on the one that asked the leg's own revision.
        let donor = matches!(lease, Lease::Donor { .. });
        let negotiated = negotiate::run(
            check,
            scenario,
            config,
            schemas,
            &spec,
            observer.as_ref(),
            donor,
        )
        .await;
        let stderr = StderrExcerpt::NotCaptured {
            reason: "not kept: the scenario's sessions were the negotiation probe's".into(),
        };
        let done = outcome(
            negotiated.verdict,
            negotiated.findings,
            negotiated.protocol,
            negotiated.transcript,
            vec![],
            vec![],
            stderr,
        );
        let kept = negotiated.kept;
        let session = match (lease, kept) {
            (Lease::Donor { chosen }, Some(mut kept)) => {
                kept.never_allocate(chosen.iter().cloned());
                Some(kept)
            }
            (lease, _) => lease.into_session(),
        };
        return ran(done, session);
    }
    let (wanted, kept, chosen, donor) = match lease {
        Lease::Fresh => (None, None, None, false),
        Lease::Donor { chosen } => (None, None, Some(chosen), true),
        Lease::Shared {
            session,
            wanted,
            chosen,
        } => (Some(wanted), session, Some(chosen), false),
    };
    let reused = kept.is_some();
    let mut session = match kept {
        Some(mut session) => {
            session.begin_window(started);
            *session
        }
        None => match config.target.open(started) {
            Ok(transport) => Session::new(transport, schemas, config.session.clone(), started),
            Err(e) => {
                let failed = outcome(
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
                return ran(failed, None);
            }
        },
    };
    if observer.listening() {
        let (observer, id) = (observer.clone(), scenario.id.clone());
        session.observe_transcript(crate::session::transcript::RecordHook(Arc::new(
            move |index, entry| observer.frame(&id, index, entry),
        )));
    }
    // The ids it chooses itself are never the session's to allocate, whatever the order.
    session.reserve_ids(super::share::explicit_ids(scenario));
    if let Some(chosen) = chosen {
        session.never_allocate(chosen.iter().cloned());
    }
    let stderr_log = session.stderr_log();
    // A fresh server's stderr is all the scenario's, even what it wrote before this line
    // (its start-up banner may already have been read); a kept one's starts here.
    let stderr_mark = match &stderr_log {
        Some(log) if reused => log.mark(),
        _ => 0,
    };
    // A shared session's gate counts for every scenario it served: this one's are the rest.
    let fixture_mark = session.fixture_calls();
    let mut exec = Executor::new(scenario, session, spec.clone());
    exec.handshake_done = reused;
    exec.capabilities = config.session.client_capabilities.clone();
    exec.set_revision_vars();
    exec.live = Live::new(observer.clone());
    // Always defined, so `${tool_args}` renders (as `{}`) when none were given.
    exec.vars.insert(
        TOOL_ARGS.into(),
        Value::Object(config.tool_args.as_ref().clone().into_iter().collect()),
    );
    let skip = exec.run_steps(&scenario.steps).await.err();
    let Executor {
        session,
        mut findings,
        unchecked,
        skipped_steps,
        coverage,
        live,
        lost_answer,
        ..
    } = exec;
    let mut session = session;
    let fixture_calls = session.fixture_calls() - fixture_mark;
    // A request of its own the server read and ignored (invalid JSON-RPC it need not
    // answer), or one whose answer it lost as it loses others, need not cost the next
    // scenario a server: a ping shows it is still serving.
    let lost = lost_answer && matches!(skip, Some(Stop::Failed));
    let stopped = matches!(skip, Some(Stop::Failed | Stop::Error(_))) && !lost;
    let shared = wanted.is_some();
    if (wanted.is_some() || donor) && !stopped {
        session.forgive_unanswered(config.session.timeout).await;
    }
    let healthy = match donor {
        true => session.donatable() && !stopped,
        false => {
            session.reusable()
                && !stopped
                && !super::share::ends_session(
                    scenario,
                    revision,
                    config.tools,
                    !config.tool_args.is_empty(),
                )
                && wanted.is_some_and(|wanted| wanted())
        }
    };
    let rule = scenario.rule.clone().unwrap_or_else(|| scenario.id.clone());
    let (record, session, watch) = if healthy {
        // Handed back: the shutdown it judges comes later, in another window.
        let watch = (shared && super::share::judges_shutdown(scenario, revision))
            .then(|| session.watch_shutdown(&rule));
        (session.take_window(), Some(session), watch)
    } else {
        (session.finish().await, None, None)
    };
    // Findings of the shutdown and of what arrived on the way out.
    for f in record
        .findings
        .iter()
        .skip(live.session_findings_reported())
    {
        report_finding(observer.as_ref(), &scenario.id, &rule, f);
    }
    let stderr = match stderr_log {
        Some(log) => log.excerpt_since(
            stderr_mark,
            crate::transport::stderr::EXCERPT_HEAD,
            crate::transport::stderr::EXCERPT_TAIL,
        ),
        None => StderrExcerpt::NotCaptured {
            reason: "not captured: the server is not a process mcpcheck started".into(),
        },
    };
    let (mine, mut protocol): (Vec<_>, Vec<_>) =
        record.findings.into_iter().partition(|f| f.rule == rule);
    findings.extend(mine);
    let transcript = record
        .transcript
        .window(findings.iter_mut().chain(protocol.iter_mut()));
    let verdict = match (skip, broken(&findings)) {
        (Some(Stop::Skip(reason)), _) => Verdict::Skip { reason },
        (Some(Stop::Refused(reason)), None) => Verdict::Skip { reason },
        (Some(Stop::Error(reason)), _) => Verdict::Error { reason },
        (_, Some(verdict)) => verdict,
        // No failure: a pass only if something was checked.
        _ => coverage.verdict(),
    };
    let mut done = outcome(
        verdict,
        findings,
        protocol,
        transcript,
        unchecked,
        skipped_steps,
        stderr,
    );
    done.policy_skips = coverage.into_policy_skips();
    done.fixture_calls = fixture_calls;
    Ran {
        outcome: done,
        session,
        watch,
    }
}

/// Completes the outcome of a scenario that handed back a session whose shutdown it
/// judges ([`Ran::watch`]): the shutdown's findings of its rule join its own, with the
/// frames they point at, and decide its verdict as its own would have.
pub async fn settle(outcome: &mut ScenarioOutcome, watch: ShutdownWatch, observer: &dyn Observer) {
    let rule = watch.rule().to_owned();
    let Some(late) = watch.wait().await else {
        outcome.unchecked.push(format!(
            "`{rule}` on the shutdown of its session: the session ended without one (the run was cut off)"
        ));
        return;
    };
    let base = outcome.transcript.len();
    for (i, entry) in late.entries.iter().enumerate() {
        observer.frame(&outcome.id, base + i, entry);
    }
    outcome.transcript.extend(late.entries);
    for mut f in late.findings {
        f.frame = f.frame.map(|i| base + i);
        observer.finding(&outcome.id, Attribution::Scenario, &f);
        outcome.findings.push(f);
    }
    if matches!(outcome.verdict, Verdict::Pass | Verdict::Warn)
        && let Some(verdict) = broken(&outcome.findings)
    {
        outcome.verdict = verdict;
    }
}

/// What a scenario's own findings make of it: `Fail` when one breaks a MUST, `Warn` when
/// one breaks a SHOULD, `None` when none breaks anything.
pub(super) fn broken(findings: &[Finding]) -> Option<Verdict> {
    match findings.iter().map(|f| f.severity).max() {
        Some(Severity::Failure) => Some(Verdict::Fail),
        Some(Severity::Warning) => Some(Verdict::Warn),
        _ => None,
    }
}

impl std::fmt::Debug for Lease {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Lease::Fresh => f.write_str("Fresh"),
            Lease::Donor { .. } => f.write_str("Donor"),
            Lease::Shared { session, .. } => f
                .debug_struct("Shared")
                .field("session", session)
                .finish_non_exhaustive(),
        }
    }
}

impl Lease {
    /// The session a scenario that never started leaves for the next one.
    pub fn into_session(self) -> Option<Session> {
        match self {
            Lease::Fresh | Lease::Donor { .. } => None,
            Lease::Shared { session, .. } => session.map(|s| *s),
        }
    }
}

/// Reports a finding: the scenario's own rule decides its verdict, any other is a protocol one.
fn report_finding(observer: &dyn Observer, scenario: &str, rule: &str, f: &Finding) {
    let owner = if f.rule == rule {
        Attribution::Scenario
    } else {
        Attribution::Protocol
    };
    observer.finding(scenario, owner, f);
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
    /// An allowed error answer (`on_error: next`): the enclosing `for_each` goes on with
    /// its next item; at the top level the scenario ends there.
    Next(String),
    /// The tool-call gate kept a `tools/call` back (recorded as a policy skip): like
    /// `Next`, the enclosing `for_each` goes on with its next item; at the top level the
    /// scenario is skipped, since what it checks was not run.
    Refused(String),
}

/// The rule a scenario files its findings under: its id unless it names one, at its
/// severity, citing its spec section.
struct Filing {
    rule: String,
    severity: Severity,
    spec: String,
}

impl Filing {
    fn finding(&self, severity: Severity, message: String) -> Finding {
        Finding::custom(self.rule.clone(), severity, self.spec.clone(), message)
    }
}

struct Executor<'a> {
    scenario: &'a Scenario,
    session: Session,
    vars: Vars,
    findings: Vec<Finding>,
    unchecked: Vec<String>,
    skipped_steps: Vec<String>,
    /// What the steps exercised: whether a run without failures checked anything.
    coverage: Coverage,
    /// How many `for_each` bodies the current step is inside.
    depth: usize,
    /// Messages the server sent on its own, not yet matched by an expectation.
    inbox: Inbox,
    /// The rule the scenario's findings are filed under.
    filing: Filing,
    /// Where steps and findings are reported as they happen.
    live: Live,
    /// The client capabilities the session declares (in `${probe_params}`).
    capabilities: Value,
    /// Fresh values handed out so far (`${unique}`, progress tokens).
    fresh: u64,
    /// The steps stopped on an answer lost by a server proven to lose answers (see
    /// [`crate::session::Pace`]): the session may still serve the next scenario.
    lost_answer: bool,
    /// The session is shared and an earlier scenario did its handshake: the default
    /// `initialize` step only checks the scenario's `requires` against it.
    handshake_done: bool,
}

impl<'a> Executor<'a> {
    fn new(scenario: &'a Scenario, session: Session, spec: String) -> Self {
        let vars = builtin_vars::for_revision(session.revision(), &Value::Null);
        Executor {
            scenario,
            vars,
            findings: Vec::new(),
            unchecked: Vec::new(),
            skipped_steps: Vec::new(),
            coverage: Coverage::default(),
            depth: 0,
            inbox: Inbox::default(),
            filing: Filing {
                rule: scenario.rule.clone().unwrap_or_else(|| scenario.id.clone()),
                severity: scenario.severity,
                spec,
            },
            session,
            live: Live::new(Arc::new(Unobserved)),
            capabilities: Value::Null,
            fresh: 0,
            lost_answer: false,
            handshake_done: false,
        }
    }

    /// A value never handed out before in this scenario: progress tokens must be unique
    /// among active requests (spec: basic/utilities/progress), and a loop repeats its steps.
    fn fresh(&mut self) -> String {
        self.fresh += 1;
        format!("mcpcheck-{}", self.fresh)
    }

    /// (Re)sets the built-in variables that follow the revision spoken.
    fn set_revision_vars(&mut self) {
        let revision = self.session.revision();
        self.vars
            .extend(builtin_vars::for_revision(revision, &self.capabilities));
    }

    fn fail(&mut self, line: usize, message: String, frame: Option<usize>) -> Finding {
        let mut f = self.filing.finding(
            self.filing.severity,
            format!("{message} ({}:{line})", self.scenario.source),
        );
        if let Some(i) = frame {
            f = f.at_frame(i);
        }
        f
    }

    fn session_failure(&mut self, e: &SessionError) -> Stop {
        // The gate kept the request back: nothing was sent, so nothing to judge.
        let Some(mut f) = self.session.finding_for(e) else {
            return match e {
                SessionError::Refused(refused) => self.refused(refused.clone(), None),
                _ => Stop::Error(format!("{e}: no finding to report")),
            };
        };
        // The server failed this scenario's own request: that is this scenario's failure.
        f.rule = self.filing.rule.clone();
        // A server that is gone fails whatever the scenario; silence in a SHOULD-level
        // scenario (say, no answer to malformed input) is only as bad as that scenario.
        f.severity = match e {
            SessionError::Timeout { .. } | SessionError::Unusable { .. } => self.filing.severity,
            _ => Severity::Failure,
        };
        self.lost_answer =
            matches!(e, SessionError::Timeout { .. }) && self.session.loses_answers();
        self.findings.push(f);
        Stop::Failed
    }

    /// Records a call the gate refused (the summary counts it, the report lists it) and
    /// stops the steps it belongs to.
    fn refused(&mut self, refused: crate::session::Refused, line: Option<usize>) -> Stop {
        self.coverage.tool_call_refused(refused.why);
        let at = match line {
            Some(line) => format!("{}:{line}: {refused}", self.scenario.source),
            None => format!("{}: {refused}", self.scenario.source),
        };
        self.skipped_steps.push(at.clone());
        Stop::Refused(at)
    }

    fn render(&self, t: &Template, line: usize) -> Result<Value, Stop> {
        t.render(&self.vars)
            .map_err(|e| Stop::Error(format!("{}:{line}: {e}", self.scenario.source)))
    }

    /// A template rendered as text: a string as is, any other value as JSON.
    pub(super) fn render_text(&self, t: &Template, line: usize) -> Result<String, Stop> {
        Ok(match self.render(t, line)? {
            Value::String(s) => s,
            other => other.to_string(),
        })
    }
}

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
mod leased;
mod live;
mod negotiate;
mod paginate;
mod request;
mod step;
mod wait;

use std::collections::BTreeMap;
use std::sync::Arc;

use serde_json::Value;

use self::coverage::Coverage;
use self::inbox::Inbox;
use self::live::Live;
use super::builtin_vars;
use super::model::{Scenario, Template};
use super::template::Vars;
use crate::outcome::events::{Emitter, Event, FindingScope};
use crate::outcome::{Finding, Severity};
use crate::schema::SchemaStore;
use crate::session::{Session, SessionConfig, SessionError, ShutdownWatch};
use crate::transport::target::Target;

use crate::outcome::{ScenarioOutcome, ToolPolicy, Verdict};
pub use leased::{Lease, Ran, Wanted, run_leased};
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
    run_observed(scenario, config, schemas, Emitter::default()).await
}

/// [`run`], telling `events` its steps, frames and findings as they happen.
pub async fn run_observed(
    scenario: &Scenario,
    config: &ExecConfig,
    schemas: Arc<SchemaStore>,
    events: Emitter,
) -> ScenarioOutcome {
    run_leased(scenario, config, schemas, events, Lease::Fresh)
        .await
        .outcome
}

/// Completes the outcome of a scenario that handed back a session whose shutdown it
/// judges ([`Ran::watch`]): the shutdown's findings of its rule join its own, with the
/// frames they point at, and decide its verdict as its own would have.
pub async fn settle(outcome: &mut ScenarioOutcome, watch: ShutdownWatch, events: &Emitter) {
    let rule = watch.rule().to_owned();
    let Some(late) = watch.wait().await else {
        outcome.unchecked.push(format!(
            "`{rule}` on the shutdown of its session: the session ended without one (the run was cut off)"
        ));
        return;
    };
    let base = outcome.transcript.len();
    for (i, entry) in late.entries.iter().enumerate() {
        events.emit_with(|| Event::frame(&outcome.id, base + i, entry));
    }
    outcome.transcript.extend(late.entries);
    for mut f in late.findings {
        f.frame = f.frame.map(|i| base + i);
        events.emit_with(|| Event::finding(&outcome.id, FindingScope::Scenario, &f));
        outcome.findings.push(f);
    }
    if matches!(outcome.verdict, Verdict::Pass | Verdict::Warn)
        && let Some(verdict) = Verdict::from_findings(&outcome.findings)
    {
        outcome.verdict = verdict;
    }
}

/// Reports a finding: the scenario's own rule decides its verdict, any other is a protocol one.
fn report_finding(events: &Emitter, scenario: &str, rule: &str, f: &Finding) {
    let scope = if f.rule == rule {
        FindingScope::Scenario
    } else {
        FindingScope::Protocol
    };
    events.emit_with(|| Event::finding(scenario, scope, f));
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
                rule: scenario.rule_id().to_owned(),
                severity: scenario.severity,
                spec,
            },
            session,
            live: Live::new(Emitter::default()),
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

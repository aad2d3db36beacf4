//! A scenario on the session its [`Lease`] gives: whether it applies at all, the session
//! it takes (a fresh server, a donor's, a shared one), its steps, and where the session
//! goes afterwards (handed back while healthy and wanted, else shut down within the
//! scenario). Only what happened during this scenario's window is its outcome: its
//! transcript, findings and stderr start when it starts.

use std::sync::Arc;
use std::time::Instant;

use serde_json::Value;

use super::live::Live;
use super::negotiate;
use super::{ExecConfig, Executor, Stop, report_finding};
use crate::outcome::events::Emitter;
use crate::outcome::{ScenarioOutcome, Verdict};
use crate::protocol::RequestId;
use crate::scenario::model::Scenario;
use crate::scenario::share;
use crate::scenario::synth::TOOL_ARGS;
use crate::schema::SchemaStore;
use crate::session::{Session, SessionRecord, ShutdownWatch};
use crate::transport::target::TransportKind;
use crate::transport::{StderrExcerpt, StderrLog};

/// What [`run_leased`] leaves: the outcome, the session when it may serve another
/// scenario, and, for a scenario that handed back a session whose shutdown it judges
/// (`share::judges_shutdown`), the watch its verdict still waits on ([`settle`](super::settle)).
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

impl Ran {
    /// An outcome that is final as it is.
    fn done(outcome: ScenarioOutcome, session: Option<Session>) -> Ran {
        Ran {
            outcome,
            session,
            watch: None,
        }
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

const NOT_STARTED: &str = "no server was started for this scenario";

/// [`run_observed`](super::run_observed) on the session `lease` gives; returns the session
/// when it may serve another scenario.
pub async fn run_leased(
    scenario: &Scenario,
    config: &ExecConfig,
    schemas: Arc<SchemaStore>,
    events: Emitter,
    lease: Lease,
) -> Ran {
    let shell = Shell {
        scenario,
        spec: scenario.spec_url(config.session.revision),
        started: Instant::now(),
    };
    if let Some(reason) = not_applicable(scenario, config) {
        return Ran::done(shell.skipped(reason), lease.into_session());
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
            &shell.spec,
            &events,
            donor,
        )
        .await;
        let done = ScenarioOutcome {
            findings: negotiated.findings,
            protocol: negotiated.protocol,
            transcript: negotiated.transcript,
            ..shell.outcome(
                negotiated.verdict,
                StderrExcerpt::NotCaptured {
                    reason: "not kept: the scenario's sessions were the negotiation probe's".into(),
                },
            )
        };
        let session = match (lease, negotiated.kept) {
            (Lease::Donor { chosen }, Some(mut kept)) => {
                kept.never_allocate(chosen.iter().cloned());
                Some(kept)
            }
            (lease, _) => lease.into_session(),
        };
        return Ran::done(done, session);
    }
    match Seat::take(lease, scenario, config, schemas, shell.started) {
        Ok(seat) => seat.run(&shell, config, events).await,
        Err(reason) => {
            let not_started = StderrExcerpt::NotCaptured {
                reason: NOT_STARTED.into(),
            };
            Ran::done(shell.outcome(Verdict::Error { reason }, not_started), None)
        }
    }
}

/// Why `scenario` does not apply to this run (its revisions or transports), if it does not.
fn not_applicable(scenario: &Scenario, config: &ExecConfig) -> Option<String> {
    let revision = config.session.revision;
    if !scenario.revisions.contains(&revision) {
        let list: Vec<&str> = scenario.revisions.iter().map(|r| r.as_str()).collect();
        return Some(format!(
            "applies to {}; this run speaks {revision}",
            list.join(", ")
        ));
    }
    let kind = config.target.kind();
    (!scenario.transports.contains(&kind)).then(|| {
        let name = match kind {
            TransportKind::Stdio => "stdio",
            TransportKind::Http => "Streamable HTTP",
        };
        format!("not for the {name} transport")
    })
}

/// What every outcome of one scenario shares: which scenario, its spec link, its start.
struct Shell<'s> {
    scenario: &'s Scenario,
    spec: String,
    started: Instant,
}

impl Shell<'_> {
    /// An outcome with nothing in it yet but `verdict` and `stderr`, timed up to now.
    fn outcome(&self, verdict: Verdict, stderr: StderrExcerpt) -> ScenarioOutcome {
        let s = self.scenario;
        ScenarioOutcome {
            duration_ms: self.started.elapsed().as_millis() as u64,
            stderr,
            ..ScenarioOutcome::not_run(
                &s.id,
                &s.title,
                self.spec.clone(),
                s.official.clone(),
                verdict,
                "",
            )
        }
    }

    /// Skipped before it started (its duration is still the time it took to decide).
    fn skipped(&self, reason: String) -> ScenarioOutcome {
        let not_started = StderrExcerpt::NotCaptured {
            reason: NOT_STARTED.into(),
        };
        self.outcome(Verdict::Skip { reason }, not_started)
    }
}

/// The session a scenario runs on, as its lease gave it.
struct Seat {
    session: Session,
    /// A shared lease: asked afterwards whether another scenario wants the session.
    wanted: Option<Wanted>,
    /// A donor lease: its fresh session may go to the shared scenarios.
    donor: bool,
    /// Kept from an earlier scenario, its handshake done.
    reused: bool,
}

impl Seat {
    /// The session `lease` gives (a kept one's window begins now), or why none opened.
    fn take(
        lease: Lease,
        scenario: &Scenario,
        config: &ExecConfig,
        schemas: Arc<SchemaStore>,
        started: Instant,
    ) -> Result<Seat, String> {
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
            None => {
                let transport = config.target.open(started).map_err(|e| e.to_string())?;
                Session::new(transport, schemas, config.session.clone(), started)
            }
        };
        // The ids it chooses itself are never the session's to allocate, whatever the order.
        session.reserve_ids(share::explicit_ids(scenario));
        if let Some(chosen) = chosen {
            session.never_allocate(chosen.iter().cloned());
        }
        Ok(Seat {
            session,
            wanted,
            donor,
            reused,
        })
    }

    /// Runs the scenario's steps on the session, lets the session go, and concludes.
    async fn run(self, shell: &Shell<'_>, config: &ExecConfig, events: Emitter) -> Ran {
        let Seat {
            mut session,
            wanted,
            donor,
            reused,
        } = self;
        let scenario = shell.scenario;
        if !events.is_empty() {
            session.tell_transcript(events.clone(), scenario.id.clone());
        }
        let stderr_log = session.stderr_log();
        // A fresh server's stderr is all the scenario's, even what it wrote before this
        // line (its start-up banner may already have been read); a kept one's starts here.
        let stderr_mark = match &stderr_log {
            Some(log) if reused => log.mark(),
            _ => 0,
        };
        // A shared session's gate counts for every scenario it served: this one's are the rest.
        let fixture_mark = session.fixture_calls();
        let mut exec = Executor::new(scenario, session, shell.spec.clone());
        exec.handshake_done = reused;
        exec.capabilities = config.session.client_capabilities.clone();
        exec.set_revision_vars();
        exec.live = Live::new(events.clone());
        // Always defined, so `${tool_args}` renders (as `{}`) when none were given.
        exec.vars.insert(
            TOOL_ARGS.into(),
            Value::Object(config.tool_args.as_ref().clone().into_iter().collect()),
        );
        let skip = exec.run_steps(&scenario.steps).await.err();
        let fixture_calls = exec.session.fixture_calls() - fixture_mark;
        // A request of its own the server read and ignored (invalid JSON-RPC it need not
        // answer), or one whose answer it lost as it loses others, need not cost the next
        // scenario a server: a ping shows it is still serving.
        let lost = exec.lost_answer && matches!(skip, Some(Stop::Failed));
        let stopped = matches!(skip, Some(Stop::Failed | Stop::Error(_))) && !lost;
        let leaving = Leaving {
            wanted,
            donor,
            stopped,
        };
        let Executor {
            session,
            findings,
            unchecked,
            skipped_steps,
            coverage,
            live,
            ..
        } = exec;
        let (record, session, watch) = leaving.release(session, scenario, config).await;
        let rule = scenario.rule_id();
        // Findings of the shutdown and of what arrived on the way out.
        for f in record
            .findings
            .iter()
            .skip(live.session_findings_reported())
        {
            report_finding(&events, &scenario.id, rule, f);
        }
        let stderr = stderr_since(stderr_log, stderr_mark);
        let mut done = conclude(
            shell,
            rule,
            findings,
            record,
            skip,
            coverage.verdict(),
            stderr,
        );
        done.unchecked = unchecked;
        done.skipped_steps = skipped_steps;
        done.policy_skips = coverage.into_policy_skips();
        done.fixture_calls = fixture_calls;
        Ran {
            outcome: done,
            session,
            watch,
        }
    }
}

/// How a scenario leaves its session: whether another may want it, whether it was a
/// donor's, and whether its steps stopped in a way that leaves the session unfit.
struct Leaving {
    wanted: Option<Wanted>,
    donor: bool,
    stopped: bool,
}

impl Leaving {
    /// Hands the session back while it is healthy and wanted (its window's record taken,
    /// a watch left on its shutdown when the scenario judges that), else shuts it down.
    async fn release(
        self,
        mut session: Session,
        scenario: &Scenario,
        config: &ExecConfig,
    ) -> (SessionRecord, Option<Session>, Option<ShutdownWatch>) {
        let revision = config.session.revision;
        let shared = self.wanted.is_some();
        if (shared || self.donor) && !self.stopped {
            session.forgive_unanswered(config.session.timeout).await;
        }
        let healthy = match self.donor {
            true => session.donatable() && !self.stopped,
            false => {
                let args_given = !config.tool_args.is_empty();
                session.reusable()
                    && !self.stopped
                    && !share::ends_session(scenario, revision, config.tools, args_given)
                    && self.wanted.is_some_and(|wanted| wanted())
            }
        };
        if !healthy {
            return (session.finish().await, None, None);
        }
        // Handed back: the shutdown it judges comes later, in another window.
        let rule = scenario.rule_id();
        let watch = (shared && share::judges_shutdown(scenario, revision))
            .then(|| session.watch_shutdown(rule));
        (session.take_window(), Some(session), watch)
    }
}

/// The scenario's outcome from its own findings and the session's record: the session's
/// findings of the scenario's rule are its own, the rest protocol findings; the verdict
/// is how the steps stopped, else what the findings break, else `unbroken` (what the
/// coverage makes of a run without failures).
fn conclude(
    shell: &Shell<'_>,
    rule: &str,
    mut findings: Vec<crate::outcome::Finding>,
    record: SessionRecord,
    skip: Option<Stop>,
    unbroken: Verdict,
    stderr: StderrExcerpt,
) -> ScenarioOutcome {
    let (mine, mut protocol): (Vec<_>, Vec<_>) =
        record.findings.into_iter().partition(|f| f.rule == rule);
    findings.extend(mine);
    let transcript = record
        .transcript
        .window(findings.iter_mut().chain(protocol.iter_mut()));
    let verdict = match (skip, Verdict::from_findings(&findings)) {
        (Some(Stop::Skip(reason)), _) => Verdict::Skip { reason },
        (Some(Stop::Refused(reason)), None) => Verdict::Skip { reason },
        (Some(Stop::Error(reason)), _) => Verdict::Error { reason },
        (_, Some(verdict)) => verdict,
        _ => unbroken,
    };
    ScenarioOutcome {
        findings,
        protocol,
        transcript,
        ..shell.outcome(verdict, stderr)
    }
}

/// The scenario's share of the server's stderr: from `mark` on.
fn stderr_since(log: Option<StderrLog>, mark: u64) -> StderrExcerpt {
    match log {
        Some(log) => log.excerpt_since(
            mark,
            crate::transport::stderr::EXCERPT_HEAD,
            crate::transport::stderr::EXCERPT_TAIL,
        ),
        None => StderrExcerpt::NotCaptured {
            reason: "not captured: the server is not a process mcpcheck started".into(),
        },
    }
}

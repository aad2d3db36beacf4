//! Runs a set of scenarios, `jobs` at a time: those that `scenario::share` allows on
//! sessions the workers share ([`Pool`]), over stdio and over HTTP alike, the rest (and all
//! of them with `--isolate`) each on a fresh server or session.
//!
//! Outcomes leave only as events (`scenario_finished` hands each one to the sinks), so the
//! terminal, the event log and the report aggregator all see the same thing. A scenario
//! that could only run into a wall the sweep found is blocked instead of started
//! ([`Walls`]); when the run's deadline passes, running scenarios are cut off and the rest
//! blocked, so a run always ends.

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

use tokio::time::Instant;

use super::known::Known;
use super::pool::{Demand, Donation, Pool, Seat};
use super::slots::Slots;
use super::walls::Walls;
use crate::outcome::events::{self, Emitter, Event};
use crate::outcome::{ScenarioOutcome, Verdict};
use crate::protocol::{RequestId, Revision};
use crate::scenario::Scenario;
use crate::scenario::exec::{self, ExecConfig, Lease};
use crate::scenario::share;
use crate::schema::SchemaStore;
use crate::session::{Session, ShutdownWatch};
use crate::transport::stdio::ShutdownWaits;
use crate::transport::target::{Target, TransportKind};

/// When the whole run must end, and the budget as the user gave it (for messages).
#[derive(Clone, Copy, Debug)]
pub struct Deadline {
    /// When the run must end.
    pub at: Instant,
    /// The budget as given (`--deadline`), for messages.
    pub budget: Duration,
}

impl Deadline {
    /// A deadline `budget` from now.
    pub fn after(budget: Duration) -> Self {
        Deadline {
            at: Instant::now() + budget,
            budget,
        }
    }

    /// What a scenario it stopped is told.
    pub fn reason(&self) -> String {
        format!(
            "the run's --deadline of {} passed",
            humantime::format_duration(self.budget)
        )
    }
}

/// Shutdown waits for a server the sweep saw ignore the end of its input: it will need a
/// signal anyway, so waiting the full 5 s + 2 s again in every scenario only costs time.
const SHORT_SHUTDOWN: ShutdownWaits = ShutdownWaits {
    after_close: Duration::from_millis(250),
    after_term: Duration::from_millis(250),
};

/// What the protocol sweep showed that the suite acts on: walls that block scenarios, and
/// answers that decide some without a server.
#[derive(Clone, Debug, Default)]
pub struct Swept {
    /// What the server cannot get past.
    pub walls: Walls,
    /// What decides a scenario without a server.
    pub known: Known,
    /// Whether the server may send without being asked on a stream it holds open (the
    /// sweep's `SweepOutcome::unasked`): then waits for silence run on a timer.
    pub unasked: bool,
}

/// The ids the shared scenarios choose themselves, when some of `scenarios` will share
/// sessions (the sweep's session can then be the first of them); `None` when none will.
pub fn sharing(scenarios: &[Scenario], config: &ExecConfig) -> Option<Vec<RequestId>> {
    // Before the sweep, whether waits run on a timer is not known: taken as not, every
    // scenario that may share is counted, and their ids are a superset of those chosen.
    let kinds: Vec<Kind> = scenarios.iter().map(|s| kind(s, config, false)).collect();
    kinds
        .iter()
        .any(|k| k.shared())
        .then(|| chosen_ids(scenarios, &kinds))
}

/// The ids the scenarios of a shared `kind` choose themselves.
fn chosen_ids(scenarios: &[Scenario], kinds: &[Kind]) -> Vec<RequestId> {
    scenarios
        .iter()
        .zip(kinds)
        .filter(|(_, kind)| kind.shared())
        .flat_map(|(s, _)| share::explicit_ids(s))
        .collect()
}

/// Runs `scenarios`, each holding one of the `jobs` `slots` while it runs, emitting each
/// scenario's events into `events` as they happen (started, steps, frames, findings,
/// skipped or harness error, finished with its outcome). `kept` is the sweep's session,
/// for the shared scenarios.
#[allow(clippy::too_many_arguments)]
pub async fn run(
    scenarios: &Arc<[Scenario]>,
    config: Arc<ExecConfig>,
    schemas: Arc<SchemaStore>,
    slots: Slots,
    events: Emitter,
    swept: Swept,
    kept: Option<Session>,
    deadline: Deadline,
) {
    let kinds: Vec<Kind> = scenarios
        .iter()
        .map(|s| kind(s, &config, swept.unasked))
        .collect();
    let chosen = chosen_ids(scenarios, &kinds);
    let count = |k: Kind| kinds.iter().filter(|x| **x == k).count();
    let demand = Demand {
        shared: count(Kind::Shared) + count(Kind::Ending),
        ending: count(Kind::Ending),
        donors: count(Kind::Donor) + usize::from(kept.is_some()),
    };
    let pool = Arc::new(Pool::new(demand, shared_sessions(slots.jobs()), chosen));
    let tasks = Tasks {
        // Short shutdown waits once a server was seen to ignore the end of its input: by
        // the sweep, or, when the sweep's session was kept (its shutdown not seen yet), by
        // any scenario's shutdown, for the scenarios that start after it.
        eof_ignored: Arc::new(AtomicBool::new(swept.walls.ignores_eof())),
        learn_eof: kept.is_some(),
        short: shortened(&config),
        revision: config.session.revision,
        config,
        schemas,
        slots,
        swept: Arc::new(swept),
        pool: pool.clone(),
        events,
        deadline,
    };
    if let Some(session) = kept {
        pool.donor().deliver(Some(session));
    }
    // Donors start first, so their sessions serve the shared scenarios; those that end
    // their session start last (the pool has them wait for the others anyway). Within a
    // kind, the longest timer waits start first, so the others run beside them instead
    // of after them.
    let mut order: Vec<(usize, Kind)> = kinds.into_iter().enumerate().collect();
    order.sort_by_cached_key(|&(n, kind)| {
        let windows = share::timer_windows(&scenarios[n].steps);
        (kind, std::cmp::Reverse(windows))
    });
    let handles: Vec<_> = order
        .iter()
        .map(|&(n, kind)| tokio::spawn(tasks.clone().scenario(scenarios.clone(), n, kind)))
        .collect();
    let mut waiting = Vec::new();
    for (h, (n, _)) in handles.into_iter().zip(order) {
        let s = &scenarios[n];
        match h.await {
            Ok(Some(deferred)) => waiting.push(deferred),
            Ok(None) => {}
            Err(e) => {
                // The task died (a panic): its scenario still ends, as a harness error.
                let reason = format!("the scenario task failed: {e}");
                let outcome = not_run(s, tasks.revision, Verdict::Error { reason });
                events::scenario_finished(&tasks.events, outcome);
            }
        }
    }
    pool.close().await;
    for (mut outcome, watch) in waiting {
        exec::settle(&mut outcome, watch, &tasks.events).await;
        events::scenario_finished(&tasks.events, outcome);
    }
}

/// An outcome that waits for its session's shutdown, and what it waits on.
type Deferred = (ScenarioOutcome, ShutdownWatch);

/// What every scenario task of a suite shares.
#[derive(Clone)]
struct Tasks {
    config: Arc<ExecConfig>,
    /// `config` with short shutdown waits, once `eof_ignored`.
    short: Arc<ExecConfig>,
    /// Whether the server was seen to ignore the end of its input.
    eof_ignored: Arc<AtomicBool>,
    /// Whether the scenarios' shutdowns can still show that (the sweep's session was kept,
    /// so its shutdown was not seen).
    learn_eof: bool,
    revision: Revision,
    schemas: Arc<SchemaStore>,
    /// The run's slots: a scenario holds one while it runs.
    slots: Slots,
    swept: Arc<Swept>,
    pool: Arc<Pool>,
    events: Emitter,
    deadline: Deadline,
}

impl Tasks {
    /// Runs one scenario in a slot, or decides it without running it, and tells its
    /// outcome; an outcome that waits for its session's shutdown is handed back instead,
    /// to be told after the pool has closed every session.
    async fn scenario(self, scenarios: Arc<[Scenario]>, n: usize, kind: Kind) -> Option<Deferred> {
        let scenario = &scenarios[n];
        let shared = kind.shared();
        let ends = kind == Kind::Ending;
        let swept_verdict = self.swept_verdict(scenario);
        // A shared scenario waits for its session before it takes a slot, so the slots
        // go to scenarios that can run meanwhile.
        let leased = match shared && swept_verdict.is_none() {
            true => self.lease(scenario, ends).await,
            false => None,
        };
        // Said once, when it ends (unkept if it does not run).
        let mut donation = (kind == Kind::Donor).then(|| self.pool.donor());
        let _permit = match kind {
            Kind::Waiting => self.slots.wait().await,
            _ => self.slots.work().await,
        };
        let config = match self.eof_ignored.load(Ordering::Relaxed) && !Walls::tests_eof(scenario) {
            true => self.short.clone(),
            false => self.config.clone(),
        };
        self.events.emit_with(|| Event::ScenarioStarted {
            scenario: scenario.id.clone(),
            title: scenario.title.clone(),
        });
        let decided = if Instant::now() >= self.deadline.at {
            Some(Verdict::Blocked {
                reason: self.deadline.reason(),
            })
        } else {
            swept_verdict
        };
        let outcome = match decided {
            Some(verdict) => {
                self.pass_on(leased, shared, ends);
                not_run(scenario, self.revision, verdict)
            }
            None => match self.execute(scenario, &config, leased, &mut donation).await {
                (outcome, Some(watch)) => return Some((outcome, watch)),
                (outcome, None) => outcome,
            },
        };
        if self.learn_eof && ignored_eof(&outcome) {
            self.eof_ignored.store(true, Ordering::Relaxed);
        }
        events::scenario_finished(&self.events, outcome);
        None
    }

    /// What the sweep decided for the scenario, if it applies at all: blocked by a wall,
    /// or skipped on what the server told.
    fn swept_verdict(&self, scenario: &Scenario) -> Option<Verdict> {
        applies(scenario, &self.config)
            .then(|| {
                self.swept
                    .walls
                    .blocks(scenario)
                    .map(|reason| Verdict::Blocked { reason })
                    .or_else(|| {
                        self.swept
                            .known
                            .skip(scenario, self.revision)
                            .map(|reason| Verdict::Skip { reason })
                    })
            })
            .flatten()
    }

    /// A shared session for the scenario, waited for until the deadline: only one that
    /// has not used an id the scenario chooses.
    async fn lease(&self, scenario: &Scenario, ends: bool) -> Option<(Lease, Seat)> {
        let ids = share::explicit_ids(scenario);
        // A session whose handshake broke the scenario's own rule stays with scenarios
        // that judge other rules: this one must see that handshake, as on a server of its
        // own (`Session::broke_on_opening`).
        let rule = scenario.rule.as_deref();
        let fits = |s: &Session| {
            !ids.iter().any(|id| s.used_id(id)) && !rule.is_some_and(|r| s.broke_on_opening(r))
        };
        let lease = self.pool.lease(fits, ends);
        tokio::time::timeout_at(self.deadline.at, lease).await.ok()
    }

    /// A scenario decided without running passes on what it was given: a session it got
    /// goes to the next scenario, and a shared scenario's turn to the pool.
    fn pass_on(&self, leased: Option<(Lease, Seat)>, shared: bool, ends: bool) {
        match leased {
            Some((lease, seat)) => match lease.into_session() {
                Some(session) => seat.give_back(session),
                None => drop(seat),
            },
            None if shared => self.pool.pass(ends),
            None => {}
        }
    }

    /// Runs the scenario on its lease (a shared session, a donor's server of its own, or
    /// a fresh one) until the deadline, and hands on the session it leaves: back to the
    /// pool, or the donor's to the shared scenarios. Gives the outcome and what it still
    /// waits for.
    async fn execute(
        &self,
        scenario: &Scenario,
        config: &ExecConfig,
        leased: Option<(Lease, Seat)>,
        donation: &mut Option<Donation>,
    ) -> (ScenarioOutcome, Option<ShutdownWatch>) {
        let (lease, seat) = match (leased, &*donation) {
            (Some((lease, seat)), _) => (lease, Some(seat)),
            (None, Some(_)) => (
                Lease::Donor {
                    chosen: self.pool.chosen(),
                },
                None,
            ),
            (None, None) => (Lease::Fresh, None),
        };
        let run = exec::run_leased(
            scenario,
            config,
            self.schemas.clone(),
            self.events.clone(),
            lease,
        );
        match tokio::time::timeout_at(self.deadline.at, run).await {
            Ok(ran) => {
                let session = ran.session;
                match (seat, donation.take()) {
                    (Some(seat), _) => {
                        if let Some(session) = session {
                            seat.give_back(session);
                        }
                    }
                    (None, Some(donation)) => donation.deliver(session),
                    (None, None) => {}
                }
                (ran.outcome, ran.watch)
            }
            Err(_) => (
                not_run(
                    scenario,
                    self.revision,
                    Verdict::Blocked {
                        reason: format!("cut off: {}", self.deadline.reason()),
                    },
                ),
                None,
            ),
        }
    }
}

/// How a scenario gets its server, in the order they start.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
enum Kind {
    /// Over HTTP, a session of its own for a scenario that mostly waits on a timer
    /// (`share::timer_windows`), on a wait slot: it costs the server an idle session,
    /// and it starts first, so its wait runs beside the others' work.
    Waiting,
    /// Its own server, which it may hand to the shared scenarios afterwards.
    Donor,
    /// A shared session.
    Shared,
    /// Its own server (`--isolate`, or what `share::needs_fresh` names).
    Fresh,
    /// A shared session no one uses after it, taken last (`share::ends_session`: its last
    /// user, or at 2026-07-28 one that declares capabilities of its own and retires it;
    /// taken last, the sessions they end are ones no one wants any more).
    Ending,
}

impl Kind {
    fn shared(self) -> bool {
        matches!(self, Kind::Shared | Kind::Ending)
    }
}

/// How `scenario` gets its server: sessions are shared, without `--isolate`, by the
/// scenarios that apply at all and whose steps allow it; over HTTP, when the server may
/// send unasked (`timers`: its waits for silence run on a timer), one that waits has a
/// session of its own on a wait slot.
fn kind(scenario: &Scenario, config: &ExecConfig, timers: bool) -> Kind {
    let (revision, tool_args) = (config.session.revision, !config.tool_args.is_empty());
    if !applies(scenario, config) {
        Kind::Fresh
    } else if timers
        && config.target.kind() == TransportKind::Http
        && !share::timer_windows(&scenario.steps).is_zero()
    {
        // A session of its own costs one handshake over HTTP; shared, the timer would
        // hold the session, and every scenario queued for it, for its whole length.
        Kind::Waiting
    } else if config.isolate {
        Kind::Fresh
    } else if share::needs_fresh(scenario, revision, config.tools, tool_args).is_none() {
        match share::ends_session(scenario, revision, config.tools, tool_args) {
            true => Kind::Ending,
            false => Kind::Shared,
        }
    } else if share::donates(scenario, revision, config.tools, tool_args) {
        Kind::Donor
    } else {
        Kind::Fresh
    }
}

/// Most shared sessions a leg keeps at once: one per core (at least two), and no more
/// than `jobs`. Shared scenarios take milliseconds on a warm server, and every session
/// more is a server start, which for a Python or Node server is about a second of CPU
/// (on 2 cores, one session per leg made the Python SDK server's run a third slower than
/// two, and three no faster).
fn shared_sessions(jobs: usize) -> usize {
    let cores = std::thread::available_parallelism().map_or(2, |n| n.get().clamp(2, 8));
    cores.min(jobs)
}

/// Whether the scenario would start a server at all (otherwise the executor skips it at
/// once, and the skip says more than a block would).
fn applies(scenario: &Scenario, config: &ExecConfig) -> bool {
    scenario.revisions.contains(&config.session.revision)
        && scenario.transports.contains(&config.target.kind())
}

/// Whether the scenario's server had to be signalled after its input closed.
fn ignored_eof(outcome: &ScenarioOutcome) -> bool {
    let rule = crate::check::rules::STDIO_SHUTDOWN.id;
    outcome
        .findings
        .iter()
        .chain(&outcome.protocol)
        .any(|f| f.rule == rule)
}

/// `config` with short shutdown waits (stdio; other transports have none).
fn shortened(config: &Arc<ExecConfig>) -> Arc<ExecConfig> {
    let mut short = ExecConfig::clone(config);
    if let Target::Stdio { options, .. } = &mut short.target {
        options.shutdown = SHORT_SHUTDOWN;
    }
    Arc::new(short)
}

/// The outcome of a scenario that did not run (or whose task died) with `verdict`.
fn not_run(s: &Scenario, revision: Revision, verdict: Verdict) -> ScenarioOutcome {
    let why = verdict.reason().unwrap_or_default().to_owned();
    ScenarioOutcome::not_run(
        &s.id,
        &s.title,
        s.spec_url(revision),
        s.official.clone(),
        verdict,
        why,
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::transport::http::HttpOptions;
    use crate::transport::stdio::{ServerCommand, StdioOptions};

    fn config(target: Target, isolate: bool) -> ExecConfig {
        ExecConfig {
            target,
            session: Default::default(),
            tools: crate::outcome::ToolPolicy::Readonly,
            tool_args: Default::default(),
            negotiation: Default::default(),
            isolate,
        }
    }

    fn scenario(steps: &str) -> Scenario {
        let yaml = format!("id: a/b\ntitle: t\nspec: basic\nsteps:\n{steps}");
        crate::scenario::parse::parse_scenario("test.yaml", &yaml).expect("a valid scenario")
    }

    #[test]
    fn over_http_a_timer_wait_on_a_server_holding_a_stream_takes_a_wait_slot() {
        let http = Target::Http(HttpOptions::new("http://127.0.0.1:9/mcp").unwrap());
        let stdio = Target::Stdio {
            server: ServerCommand {
                program: "server".into(),
                args: Vec::new(),
                env: Default::default(),
                cwd: None,
            },
            options: StdioOptions::default(),
        };
        let waits = scenario("  - request: ping\n  - sleep: 300ms\n");
        let works = scenario("  - request: ping\n");
        let kind_of = |s: &Scenario, target: &Target, isolate: bool| {
            kind(s, &config(target.clone(), isolate), true)
        };
        assert_eq!(kind_of(&waits, &http, false), Kind::Waiting);
        assert_eq!(kind_of(&waits, &http, true), Kind::Waiting);
        assert_eq!(kind_of(&works, &http, false), Kind::Shared);
        assert_eq!(kind_of(&works, &http, true), Kind::Fresh);
        // A server that holds no stream open ends every wait on evidence: it shares.
        assert_eq!(kind(&waits, &config(http, false), false), Kind::Shared);
        // Over stdio a session of its own is a server start: the wait shares.
        assert_eq!(kind_of(&waits, &stdio, false), Kind::Shared);
        assert_eq!(kind_of(&waits, &stdio, true), Kind::Fresh);
    }
}

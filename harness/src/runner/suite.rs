//! Runs a set of scenarios, `jobs` at a time: over stdio those that `scenario::share`
//! allows on sessions the workers share ([`Pool`]), the rest (and all of them with
//! `--isolate`, or over HTTP, where a session costs little) each on a fresh server.
//!
//! Outcomes leave only as events (`scenario_finished` hands each one to the sinks), so the
//! terminal, the event log and the report aggregator all see the same thing. A scenario
//! that could only run into a wall the sweep found is blocked instead of started
//! ([`Walls`]); when the run's deadline passes, running scenarios are cut off and the rest
//! blocked, so a run always ends.

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

use tokio::sync::Semaphore;
use tokio::time::Instant;

use super::events::{self, Emitter, Event};
use super::known::Known;
use super::pool::{Demand, Pool};
use super::walls::Walls;
use crate::outcome::{ScenarioOutcome, Verdict};
use crate::protocol::{RequestId, Revision};
use crate::scenario::Scenario;
use crate::scenario::exec::{self, ExecConfig, Lease};
use crate::scenario::share;
use crate::schema::SchemaStore;
use crate::session::Session;
use crate::transport::stdio::ShutdownWaits;
use crate::transport::target::Target;

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
}

/// The ids the shared scenarios choose themselves, when some of `scenarios` will share
/// sessions (the sweep's session can then be the first of them); `None` when none will.
pub fn sharing(scenarios: &[Scenario], config: &ExecConfig) -> Option<Vec<RequestId>> {
    let kinds: Vec<Kind> = scenarios.iter().map(|s| kind(s, config)).collect();
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
    scenarios: &[Scenario],
    config: Arc<ExecConfig>,
    schemas: Arc<SchemaStore>,
    (slots, jobs): (Arc<Semaphore>, usize),
    events: Emitter,
    swept: Swept,
    kept: Option<Session>,
    deadline: Deadline,
) {
    let swept = Arc::new(swept);
    // Short shutdown waits once a server was seen to ignore the end of its input: by the
    // sweep, or, when the sweep's session was kept (its shutdown not seen yet), by any
    // scenario's shutdown, for the scenarios that start after it.
    let eof_ignored = Arc::new(AtomicBool::new(swept.walls.ignores_eof()));
    let learn_eof = kept.is_some();
    let short = shortened(&config);
    let revision = config.session.revision;
    let kinds: Vec<Kind> = scenarios.iter().map(|s| kind(s, &config)).collect();
    let chosen = chosen_ids(scenarios, &kinds);
    let count = |k: Kind| kinds.iter().filter(|x| **x == k).count();
    let demand = Demand {
        shared: count(Kind::Shared) + count(Kind::Ending),
        ending: count(Kind::Ending),
        donors: count(Kind::Donor) + usize::from(kept.is_some()),
    };
    let pool = Arc::new(Pool::new(demand, shared_sessions(jobs), chosen));
    if let Some(session) = kept {
        pool.donor().deliver(Some(session));
    }
    // Donors start first, so their sessions serve the shared scenarios; those that end
    // their session start last (the pool has them wait for the others anyway).
    let mut order: Vec<(&Scenario, Kind)> = scenarios.iter().zip(kinds).collect();
    order.sort_by_key(|(_, kind)| *kind);
    let mut handles = Vec::new();
    for &(scenario, kind) in &order {
        let shared = kind.shared();
        let ends = kind == Kind::Ending;
        let scenario = scenario.clone();
        let (config, short) = (config.clone(), short.clone());
        let eof_ignored = eof_ignored.clone();
        let (schemas, gate, swept) = (schemas.clone(), slots.clone(), swept.clone());
        let pool = pool.clone();
        let events = events.clone();
        handles.push(tokio::spawn(async move {
            let swept_verdict = applies(&scenario, &config)
                .then(|| {
                    swept
                        .walls
                        .blocks(&scenario)
                        .map(|reason| Verdict::Blocked { reason })
                        .or_else(|| {
                            swept
                                .known
                                .skip(&scenario, revision)
                                .map(|reason| Verdict::Skip { reason })
                        })
                })
                .flatten();
            // A shared scenario waits for its session before it takes a slot, so the
            // slots go to scenarios that can run meanwhile.
            let leased = match shared && swept_verdict.is_none() {
                true => {
                    // Only a session that has not used an id the scenario chooses.
                    let ids = share::explicit_ids(&scenario);
                    let lease = pool.lease(|s| !ids.iter().any(|id| s.used_id(id)), ends);
                    tokio::time::timeout_at(deadline.at, lease).await.ok()
                }
                false => None,
            };
            // Said once, when it ends (unkept if it does not run).
            let donation = (kind == Kind::Donor).then(|| pool.donor());
            let _permit = gate
                .acquire_owned()
                .await
                .expect("the semaphore is never closed");
            let config = match eof_ignored.load(Ordering::Relaxed) && !Walls::tests_eof(&scenario) {
                true => short,
                false => config,
            };
            events.emit_with(|| Event::ScenarioStarted {
                scenario: scenario.id.clone(),
                title: scenario.title.clone(),
            });
            let decided = if Instant::now() >= deadline.at {
                Some(Verdict::Blocked {
                    reason: deadline.reason(),
                })
            } else {
                swept_verdict
            };
            let outcome = match decided {
                Some(verdict) => {
                    match leased {
                        // A session it got but will not use goes to the next scenario.
                        Some((lease, seat)) => match lease.into_session() {
                            Some(session) => seat.give_back(session),
                            None => drop(seat),
                        },
                        None if shared => pool.pass(ends),
                        None => {}
                    }
                    not_run(&scenario, revision, verdict)
                }
                None => {
                    let observer = Arc::new(events.clone());
                    let (lease, seat) = match (leased, &donation) {
                        (Some((lease, seat)), _) => (lease, Some(seat)),
                        (None, Some(_)) => (
                            Lease::Donor {
                                chosen: pool.chosen(),
                            },
                            None,
                        ),
                        (None, None) => (Lease::Fresh, None),
                    };
                    let run = exec::run_leased(&scenario, &config, schemas, observer, lease);
                    match tokio::time::timeout_at(deadline.at, run).await {
                        Ok(ran) => {
                            let session = ran.session;
                            match (seat, donation) {
                                (Some(seat), _) => {
                                    if let Some(session) = session {
                                        seat.give_back(session);
                                    }
                                }
                                (None, Some(donation)) => donation.deliver(session),
                                (None, None) => {}
                            }
                            // Its verdict waits for its session's shutdown: told after
                            // the pool has closed every session.
                            if let Some(watch) = ran.watch {
                                return Some((ran.outcome, watch));
                            }
                            ran.outcome
                        }
                        Err(_) => not_run(
                            &scenario,
                            revision,
                            Verdict::Blocked {
                                reason: format!("cut off: {}", deadline.reason()),
                            },
                        ),
                    }
                }
            };
            if learn_eof && ignored_eof(&outcome) {
                eof_ignored.store(true, Ordering::Relaxed);
            }
            events::scenario_finished(&events, outcome);
            None
        }));
    }
    let mut waiting = Vec::new();
    for (h, (s, _)) in handles.into_iter().zip(order) {
        match h.await {
            Ok(Some(deferred)) => waiting.push(deferred),
            Ok(None) => {}
            Err(e) => {
                // The task died (a panic): its scenario still ends, as a harness error.
                let reason = format!("the scenario task failed: {e}");
                let outcome = not_run(s, revision, Verdict::Error { reason });
                events::scenario_finished(&events, outcome);
            }
        }
    }
    pool.close().await;
    for (mut outcome, watch) in waiting {
        exec::settle(&mut outcome, watch, &events).await;
        events::scenario_finished(&events, outcome);
    }
}

/// How a scenario gets its server, in the order they start.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
enum Kind {
    /// Its own server, which it may hand to the shared scenarios afterwards.
    Donor,
    /// A shared session.
    Shared,
    /// Its own server (`--isolate`, HTTP, or what `share::needs_fresh` names).
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

/// How `scenario` gets its server: sessions are shared over stdio, without `--isolate`,
/// by the scenarios that apply at all and whose steps allow it.
fn kind(scenario: &Scenario, config: &ExecConfig) -> Kind {
    let sharing = !config.isolate
        && config.target.kind() == crate::scenario::TransportKind::Stdio
        && applies(scenario, config);
    let (revision, tool_args) = (config.session.revision, !config.tool_args.is_empty());
    if !sharing {
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

//! The revision matrix of `mcpcheck run`: a leg per revision, every one resolved before
//! any starts, run at once on the run's server slots, and each told whole and in plan
//! order (a later leg's events wait in its [`Relay`]).

use std::collections::BTreeMap;
use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

use serde_json::Value;
use tokio::sync::oneshot;

use super::aggregate::Aggregator;
use super::auto::Opened;
use super::leg::{self, LegPlan};
use super::relay::Relay;
use super::slots::Slots;
use super::sweep::{Opening, ProbeConfig};
use crate::outcome::events::{Emitter, Event, EventSink};
use crate::outcome::{FailOn, RunReport};
use crate::protocol::Revision;
use crate::scenario::Scenario;
use crate::scenario::exec::ExecConfig;
use crate::schema::SchemaStore;
use crate::schema::ensure::Unavailable;
use crate::snapshot::SnapshotError;
use crate::transport::TransportError;

/// The legs of a run and what they share, resolved from the arguments and the config
/// file before any leg starts.
#[derive(Debug)]
pub struct RevisionMatrix {
    /// The legs in revision order.
    pub legs: Vec<MatrixLeg>,
    /// The scenarios selected, in suite order (each leg skips those not at its revision).
    pub scenarios: Arc<[Scenario]>,
    /// Scenarios run at once (`--jobs`); also the number of servers the whole run may
    /// have alive at once, across its legs.
    pub jobs: usize,
    /// The whole run's budget (`--deadline`).
    pub deadline: Duration,
    /// User-given arguments per tool name (`--tool-args`).
    pub tool_args: Arc<BTreeMap<String, Value>>,
    /// Every scenario on a server of its own (`--isolate`, or `--deterministic`).
    pub isolate: bool,
    /// `--fail-on`: the level a leg's verdict fails at.
    pub fail_on: FailOn,
    /// `--partition K/N`, as the report names it.
    pub partition: Option<String>,
    /// `--snapshot-dir`: taken by the first leg that runs.
    pub snapshot: Option<SnapshotPlan>,
}

/// One leg as planned.
#[derive(Debug)]
pub enum MatrixLeg {
    /// The sweep and the suite run at the settings' revision.
    Run(Box<LegSettings>),
    /// The server does not speak the revision.
    NotSpoken(NotSpoken),
}

/// A revision the server does not speak, and how that showed.
#[derive(Clone, Debug)]
pub struct NotSpoken {
    /// The revision asked for.
    pub revision: Revision,
    /// What the server said.
    pub reason: String,
}

/// A leg that runs: its server, session settings and schemas.
#[derive(Debug)]
pub struct LegSettings {
    /// The protocol sweep's settings; every scenario reaches the server the same way.
    pub probe: ProbeConfig,
    /// The leg's schemas, found or fetched before any leg started.
    pub store: Arc<SchemaStore>,
    /// Which of the matrix's scenarios it runs.
    pub scope: Scope,
}

/// Which scenarios a leg runs.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Scope {
    /// Every scenario that applies at its revision.
    Full,
    /// Only those judged differently at its revision than at `base`, whose full leg runs
    /// the rest (`Scenario::differs_at`): an older revision the server claims, at the cost
    /// of a sweep and a handful of scenarios.
    Differential {
        /// The revision of the full leg.
        base: Revision,
    },
}

impl Scope {
    /// The scenarios of `all` this scope runs at `revision`.
    pub fn select(self, all: &Arc<[Scenario]>, revision: Revision) -> Arc<[Scenario]> {
        match self {
            Scope::Full => all.clone(),
            Scope::Differential { base } => all
                .iter()
                .filter(|s| s.differs_at(revision, base))
                .cloned()
                .collect(),
        }
    }
}

/// `--snapshot-dir`: where the accepted snapshot is, and the schemas to take one with.
#[derive(Clone, Debug)]
pub struct SnapshotPlan {
    /// The directory of the accepted snapshot.
    pub dir: PathBuf,
    /// `--schema-dir`.
    pub schema_dir: Option<PathBuf>,
}

/// One leg as it ended.
#[derive(Debug)]
pub enum LegEnd {
    /// The sweep and the suite ran.
    Ran(Box<RunReport>),
    /// The server does not speak the revision.
    NotSpoken(NotSpoken),
}

/// What a matrix run leaves: each leg's end in plan order, and the emitters of the legs
/// that ran, for the `run_finished` each is told once the baseline is applied.
#[derive(Debug)]
pub struct Told {
    /// Each leg's end, in plan order.
    pub ends: Vec<LegEnd>,
    /// One per leg that ran, in plan order.
    pub emitters: Vec<Emitter>,
}

/// What the terminal is told of the matrix itself, beside each leg's events.
pub trait Narration: Sync {
    /// Leg `index` begins (a heading; only said when the matrix has more than one leg).
    fn leg_opens(&self, index: usize, leg: &MatrixLeg);
    /// A leg that ran has been told whole: its verdict line.
    fn leg_told(&self, report: &RunReport);
}

/// Why a leg could not be run to its end: the run's harness error (exit 2).
#[derive(Debug, thiserror::Error)]
pub enum LegError {
    /// The server could not be reached or started.
    #[error(transparent)]
    Transport(#[from] TransportError),
    /// The leg's events held no sweep (a bug: every leg emits one).
    #[error("the run ended without a protocol sweep")]
    NoSweep,
    /// `--snapshot-dir`: the server could not be reached.
    #[error("connecting for --snapshot-dir")]
    SnapshotConnect(#[source] TransportError),
    /// `--snapshot-dir`: the snapshot could not be taken or compared.
    #[error("taking the snapshot for --snapshot-dir")]
    Snapshot(#[source] SnapshotError),
    /// The schema of the revision the server negotiated is not available.
    #[error(transparent)]
    Schema(#[from] Unavailable),
}

impl RevisionMatrix {
    /// Whether the matrix has more than one leg: each gets a heading then.
    pub fn is_multi(&self) -> bool {
        self.legs.len() > 1
    }

    /// Runs the legs at once, each told whole and in order into `sinks`: a leg's relay
    /// opens when the legs before it are done, and then `narration` tells its heading,
    /// its held events and the rest. The sessions planning `opened` that no leg took are
    /// shut down alongside.
    pub async fn run(
        &self,
        sinks: &[Arc<dyn EventSink>],
        narration: &dyn Narration,
        mut opened: Opened,
    ) -> Result<Told, LegError> {
        // One set of slots for every leg: `--jobs` bounds the servers of the whole run.
        let slots = Slots::new(self.jobs);
        let runs: Vec<(usize, &LegSettings)> = self
            .legs
            .iter()
            .enumerate()
            .filter_map(|(n, leg)| match leg {
                MatrixLeg::Run(settings) => Some((n, settings.as_ref())),
                MatrixLeg::NotSpoken(_) => None,
            })
            .collect();
        let relays: Vec<Arc<Relay>> = (0..runs.len())
            .map(|k| Arc::new(Relay::new(sinks.to_vec(), k == 0)))
            .collect();
        // Headings up to the first leg that runs (all of them when none does).
        let until = runs.first().map_or(self.legs.len(), |(first, _)| first + 1);
        self.headings(narration, 0..until);
        let (handoffs, turns) = turns(runs.len());
        let legs = runs.iter().zip(turns).zip(handoffs).enumerate();
        let legs = legs.map(|(k, ((&(n, settings), turn), handoff))| {
            let leg = LegStart {
                settings,
                opened: opened.take(settings.probe.session.revision),
                slots: slots.clone(),
                take_snapshot: k == 0,
            };
            let next = runs.get(k + 1).map(|(m, _)| *m);
            let relays = &relays;
            async move {
                let ran = self.leg(leg, relays[k].clone()).await;
                let _ = turn.await;
                if let Ok((report, _)) = &ran {
                    narration.leg_told(report);
                }
                // The not-spoken legs up to the next leg that runs, its heading, and its
                // events; a leg that failed hands over all the same.
                self.headings(narration, n + 1..next.unwrap_or(self.legs.len()));
                if let Some(next) = next {
                    self.headings(narration, next..next + 1);
                    relays[k + 1].open();
                }
                if let Some(tx) = handoff {
                    let _ = tx.send(());
                }
                ran
            }
        });
        // The legs take their sessions as they are built: collected first, so what no leg
        // took is known (and shut down alongside them).
        let legs: Vec<_> = legs.collect();
        let (ran, ()) = tokio::join!(futures_util::future::join_all(legs), opened.close());
        self.ends(ran)
    }

    fn headings(&self, narration: &dyn Narration, legs: std::ops::Range<usize>) {
        if self.is_multi() {
            for n in legs {
                narration.leg_opens(n, &self.legs[n]);
            }
        }
    }

    /// Runs one leg: the sweep and the suite at its revision, told to `relay` (into the
    /// shared sinks, once the legs before it are told) and to the leg's own aggregator.
    async fn leg(
        &self,
        leg: LegStart<'_>,
        relay: Arc<Relay>,
    ) -> Result<(RunReport, Emitter), LegError> {
        let probe = leg.settings.probe.clone();
        let scenarios = leg
            .settings
            .scope
            .select(&self.scenarios, probe.session.revision);
        let aggregator = Arc::new(Aggregator::new(
            scenarios.iter().map(|s| s.id.clone()).collect(),
        ));
        let events = Emitter::new(vec![relay, aggregator.clone()]);
        let exec = Arc::new(ExecConfig {
            target: probe.target.clone(),
            session: probe.session.clone(),
            tools: probe.session.calls.policy,
            tool_args: self.tool_args.clone(),
            negotiation: Default::default(),
            isolate: self.isolate,
        });
        let plan = LegPlan {
            probe,
            exec,
            scenarios,
            slots: leg.slots,
            deadline: self.deadline,
            opened: std::sync::Mutex::new(leg.opened),
        };
        let store = leg.settings.store.clone();
        if let Err(e) = leg::run(&plan, store.clone(), &events).await {
            // A bearer token never leaves the process, whatever echoed it.
            events.emit(Event::HarnessError {
                scenario: None,
                reason: crate::transport::http::redact(&e.to_string(), plan.probe.target.secrets()),
            });
            return Err(e.into());
        }
        let mut report = aggregator.finish().ok_or(LegError::NoSweep)?;
        report.set_fail_on(self.fail_on);
        report.partition = self.partition.clone();
        if let Scope::Differential { base } = leg.settings.scope {
            report.differential_from = Some(base);
        }
        if leg.take_snapshot
            && let Some(snapshot) = &self.snapshot
        {
            report.add_snapshot(snapshot.compare(&plan.probe).await?);
        }
        // The schema of a revision the server negotiated, missing, is the run's error.
        if let Some((revision, cause)) = store.unavailable().into_iter().next() {
            return Err(Unavailable::Negotiated { revision, cause }.into());
        }
        Ok((report, events))
    }

    /// Each leg's end in plan order, and the emitters of those that ran. A leg's harness
    /// error is the run's.
    fn ends(&self, ran: Vec<Result<(RunReport, Emitter), LegError>>) -> Result<Told, LegError> {
        let mut ran = ran.into_iter();
        let mut told = Told {
            ends: Vec::with_capacity(self.legs.len()),
            emitters: Vec::new(),
        };
        for leg in &self.legs {
            told.ends.push(match leg {
                MatrixLeg::NotSpoken(not) => LegEnd::NotSpoken(not.clone()),
                MatrixLeg::Run(_) => {
                    let (report, events) = ran.next().expect("a result per leg that ran")?;
                    told.emitters.push(events);
                    LegEnd::Ran(Box::new(report))
                }
            });
        }
        Ok(told)
    }
}

/// What one leg takes from the matrix run: its settings, the planning probe's session that
/// opens its sweep, and the run's server slots.
struct LegStart<'a> {
    settings: &'a LegSettings,
    opened: Option<Opening>,
    slots: Slots,
    /// Whether this leg takes the `--snapshot-dir` snapshot (the first leg that runs).
    take_snapshot: bool,
}

/// The turns of `n` legs told in order: leg k awaits `turns[k]` (leg 0's has come) and
/// hands the next turn on with `handoffs[k]` (the last has none).
fn turns(n: usize) -> (Vec<Option<oneshot::Sender<()>>>, Vec<oneshot::Receiver<()>>) {
    let (senders, turns): (Vec<_>, Vec<_>) = (0..n).map(|_| oneshot::channel::<()>()).unzip();
    let mut senders = senders.into_iter();
    if let Some(first) = senders.next() {
        let _ = first.send(());
    }
    let handoffs = senders.map(Some).chain(std::iter::once(None)).take(n);
    (handoffs.collect(), turns)
}

impl SnapshotPlan {
    /// The server's snapshot, taken as `probe` reaches it, compared with the accepted one.
    async fn compare(
        &self,
        probe: &ProbeConfig,
    ) -> Result<crate::outcome::SnapshotComparison, LegError> {
        let stdio = match &probe.target {
            crate::transport::target::Target::Stdio { options, .. } => options.clone(),
            _ => Default::default(),
        };
        let capture = crate::snapshot::Capture {
            options: crate::snapshot::SnapshotOptions {
                call_tools: probe.session.calls.policy,
                ..Default::default()
            },
            session: probe.session.clone(),
            stdio,
            schema_dir: self.schema_dir.clone(),
        };
        let transport = probe
            .target
            .open(std::time::Instant::now())
            .map_err(LegError::SnapshotConnect)?;
        let snap = capture
            .transport(transport)
            .await
            .map_err(LegError::Snapshot)?;
        crate::snapshot::compare(&snap, &self.dir, false).map_err(LegError::Snapshot)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_first_turn_has_come_and_each_leg_hands_on_to_the_next() {
        let (handoffs, mut waits) = turns(3);
        assert_eq!(handoffs.len(), 3);
        assert!(handoffs[2].is_none(), "the last leg hands on to no one");
        assert!(waits[0].try_recv().is_ok(), "leg 0 need not wait");
        assert!(waits[1].try_recv().is_err(), "leg 1 waits for leg 0");
        let mut handoffs = handoffs.into_iter();
        handoffs.next().flatten().unwrap().send(()).unwrap();
        assert!(waits[1].try_recv().is_ok());
        assert!(waits[2].try_recv().is_err());
        let (none, no_turns) = turns(0);
        assert!(none.is_empty() && no_turns.is_empty());
    }
}

//! One leg of `mcpcheck run` (one revision): the protocol sweep, then the scenario suite,
//! told as events.
//!
//! Nothing is returned but a harness error: the terminal, the event log and the report
//! aggregator learn the outcome from the events, so they cannot disagree.

use std::sync::Arc;
use std::time::Duration;

use super::known::Known;
use super::slots::Slots;
use super::suite::{self, Deadline};
use super::sweep::{self, ProbeConfig};
use super::walls::Walls;
use crate::outcome::events::{Emitter, Event, FindingScope};
use crate::scenario::Scenario;
use crate::scenario::exec::ExecConfig;
use crate::schema::SchemaStore;
use crate::transport::TransportError;

/// Everything a leg needs, resolved from the arguments and the config file.
#[derive(Debug)]
pub struct LegPlan {
    /// The protocol sweep: the server, the session settings, the revision.
    pub probe: ProbeConfig,
    /// How each scenario reaches the server and which tools it may call.
    pub exec: Arc<ExecConfig>,
    /// The scenarios selected, in suite order.
    pub scenarios: Arc<[Scenario]>,
    /// The servers that may be alive at once (`--jobs`), shared by every leg that runs
    /// at the same time: the sweep and each scenario hold one while they run.
    pub slots: Slots,
    /// The whole run's budget (`--deadline`): when it passes, what runs is cut off and
    /// the rest is blocked.
    pub deadline: Duration,
    /// A planning probe's session for this leg's sweep ([`super::sweep::Opening`]): opened
    /// just as the sweep would open it, or failed as the sweep's own opening would; the
    /// sweep goes on on it instead of starting a server.
    pub opened: std::sync::Mutex<Option<super::sweep::Opening>>,
}

/// Runs `plan`: `run_started`, the sweep's findings and `sweep_finished`, then every
/// scenario's events. `run_finished` is the caller's, after the baseline is applied.
pub async fn run(
    plan: &LegPlan,
    store: Arc<SchemaStore>,
    events: &Emitter,
) -> Result<(), TransportError> {
    events.emit(Event::RunStarted {
        planned: plan.scenarios.len(),
        target: plan.probe.target.describe(),
        revision: plan.probe.session.revision,
        jobs: plan.slots.jobs(),
    });
    let deadline = Deadline::after(plan.deadline);
    let started = std::time::Instant::now();
    let sweep = async {
        let _slot = plan.slots.work().await;
        let opened = plan.opened.lock().map(|mut o| o.take()).unwrap_or(None);
        // When scenarios will share sessions, the sweep's can be the first of them.
        let chosen = suite::sharing(&plan.scenarios, &plan.exec);
        sweep::sweep_on(&plan.probe, store.clone(), opened, chosen.as_deref()).await
    };
    let swept = match tokio::time::timeout_at(deadline.at, sweep).await {
        Ok(swept) => swept?,
        Err(_) => sweep::SweepOutcome {
            report: sweep::cut_off(&plan.probe, &deadline.reason(), started.elapsed()),
            walls: Walls::default(),
            known: Known::default(),
            unasked: true,
            kept: None,
        },
    };
    let sweep::SweepOutcome {
        report: sweep,
        walls,
        known,
        unasked,
        kept,
    } = swept;
    for f in &sweep.sweep.findings {
        events.emit_with(|| Event::Finding {
            scenario: None,
            scope: FindingScope::Sweep,
            finding: f.clone(),
        });
    }
    events.emit(Event::SweepFinished {
        revision: sweep.revision,
        failures: sweep.sweep.counts.failures,
        warnings: sweep.sweep.counts.warnings,
        report: Box::new(sweep),
    });
    suite::run(
        &plan.scenarios,
        plan.exec.clone(),
        store,
        plan.slots.clone(),
        events.clone(),
        suite::Swept {
            walls,
            known,
            unasked,
        },
        kept,
        deadline,
    )
    .await;
    Ok(())
}

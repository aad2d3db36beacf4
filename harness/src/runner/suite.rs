//! Runs a set of scenarios, each on a fresh server, `jobs` at a time.
//!
//! Outcomes leave only as events (`scenario_finished` hands each one to the sinks), so the
//! terminal, the event log and the report aggregator all see the same thing.

use std::sync::Arc;

use tokio::sync::Semaphore;

use super::events::{self, Emitter, Event};
use crate::outcome::{ScenarioOutcome, Verdict};
use crate::scenario::Scenario;
use crate::scenario::exec::{self, ExecConfig};
use crate::schema::SchemaStore;
use crate::transport::StderrExcerpt;

/// Runs `scenarios` with at most `jobs` servers alive at once, emitting each scenario's
/// events into `events` as they happen (started, steps, frames, findings, skipped or
/// harness error, finished with its outcome).
pub async fn run(
    scenarios: &[Scenario],
    config: Arc<ExecConfig>,
    schemas: Arc<SchemaStore>,
    jobs: usize,
    events: Emitter,
) {
    let gate = Arc::new(Semaphore::new(jobs.max(1)));
    let mut handles = Vec::new();
    for scenario in scenarios {
        let scenario = scenario.clone();
        let (config, schemas, gate) = (config.clone(), schemas.clone(), gate.clone());
        let events = events.clone();
        handles.push(tokio::spawn(async move {
            let _permit = gate
                .acquire_owned()
                .await
                .expect("the semaphore is never closed");
            events.emit_with(|| Event::ScenarioStarted {
                scenario: scenario.id.clone(),
                title: scenario.title.clone(),
            });
            let outcome =
                exec::run_observed(&scenario, &config, schemas, Arc::new(events.clone())).await;
            events::scenario_finished(&events, outcome);
        }));
    }
    for (h, s) in handles.into_iter().zip(scenarios) {
        if let Err(e) = h.await {
            // The task died (a panic): its scenario still ends, as a harness error.
            events::scenario_finished(&events, task_failed(s, &e.to_string()));
        }
    }
}

/// The outcome of a scenario whose task died before it could say anything.
fn task_failed(s: &Scenario, error: &str) -> ScenarioOutcome {
    ScenarioOutcome {
        id: s.id.clone(),
        title: s.title.clone(),
        spec: s.spec.clone(),
        verdict: Verdict::Error {
            reason: format!("the scenario task failed: {error}"),
        },
        findings: vec![],
        protocol: vec![],
        unchecked: vec![],
        skipped_steps: vec![],
        policy_skips: vec![],
        duration_ms: 0,
        transcript: vec![],
        stderr: StderrExcerpt::NotCaptured {
            reason: "the scenario task failed".into(),
        },
    }
}

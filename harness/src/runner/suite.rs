//! Runs a set of scenarios, each on a fresh server, `jobs` at a time.

use std::sync::Arc;
use std::time::Instant;

use serde::Serialize;
use tokio::sync::Semaphore;

use super::events::{self, Emitter, Event, FnSink};
use crate::scenario::Scenario;
use crate::scenario::exec::{self, ExecConfig, ScenarioOutcome, Verdict};
use crate::schema::SchemaStore;

/// How many scenarios ended each way.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize)]
pub struct Tally {
    pub pass: usize,
    pub fail: usize,
    pub warn: usize,
    pub skip: usize,
    pub error: usize,
}

impl Tally {
    pub fn of(outcomes: &[ScenarioOutcome]) -> Self {
        let mut t = Tally::default();
        for o in outcomes {
            match o.verdict {
                Verdict::Pass => t.pass += 1,
                Verdict::Fail => t.fail += 1,
                Verdict::Warn => t.warn += 1,
                Verdict::Skip { .. } => t.skip += 1,
                Verdict::Error { .. } => t.error += 1,
            }
        }
        t
    }
}

/// Called as each scenario finishes (in completion order), e.g. to advance a progress bar.
pub type OnDone = Arc<dyn Fn(&ScenarioOutcome) + Send + Sync>;

/// Runs `scenarios` with at most `jobs` servers alive at once; outcomes keep the input order.
pub async fn run(
    scenarios: &[Scenario],
    config: Arc<ExecConfig>,
    schemas: Arc<SchemaStore>,
    jobs: usize,
) -> (Vec<ScenarioOutcome>, u64) {
    run_with_progress(scenarios, config, schemas, jobs, None).await
}

/// [`run`], calling `on_done` with each outcome as it arrives.
pub async fn run_with_progress(
    scenarios: &[Scenario],
    config: Arc<ExecConfig>,
    schemas: Arc<SchemaStore>,
    jobs: usize,
    on_done: Option<OnDone>,
) -> (Vec<ScenarioOutcome>, u64) {
    let events = match on_done {
        Some(f) => Emitter::new(vec![Arc::new(FnSink(move |e: &Event| {
            if let Event::ScenarioFinished { outcome, .. } = e {
                f(outcome)
            }
        }))]),
        None => Emitter::default(),
    };
    run_with_events(scenarios, config, schemas, jobs, events).await
}

/// [`run`], emitting each scenario's events into `events` as they happen (scenario
/// started, steps, frames, findings, skipped or harness error, finished).
pub async fn run_with_events(
    scenarios: &[Scenario],
    config: Arc<ExecConfig>,
    schemas: Arc<SchemaStore>,
    jobs: usize,
    events: Emitter,
) -> (Vec<ScenarioOutcome>, u64) {
    let started = Instant::now();
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
            events::scenario_finished(&events, outcome)
        }));
    }
    let mut outcomes = Vec::new();
    for (h, s) in handles.into_iter().zip(scenarios) {
        outcomes.push(h.await.unwrap_or_else(|e| {
            // The task died (a panic): its scenario still ends, as a harness error.
            events::scenario_finished(
                &events,
                ScenarioOutcome {
                    id: s.id.clone(),
                    title: s.title.clone(),
                    spec: s.spec.clone(),
                    verdict: Verdict::Error {
                        reason: format!("the scenario task failed: {e}"),
                    },
                    findings: vec![],
                    protocol: vec![],
                    unchecked: vec![],
                    skipped_steps: vec![],
                    duration_ms: 0,
                    transcript: vec![],
                    stderr: crate::transport::StderrExcerpt::NotCaptured {
                        reason: "the scenario task failed".into(),
                    },
                },
            )
        }));
    }
    (outcomes, started.elapsed().as_millis() as u64)
}

//! The aggregator: the sink that turns a run's events into the final [`RunReport`].
//!
//! The file reporters (HTML, JUnit, JSON, Markdown) render that report, so they see
//! exactly what the terminal and the event log saw: one contract, the events.

use std::sync::Mutex;
use std::time::Instant;

use crate::outcome::events::{Event, EventSink};
use crate::outcome::{RunReport, ScenarioOutcome};

/// Collects the sweep's report and every scenario's outcome as they are emitted.
#[derive(Debug)]
pub struct Aggregator {
    /// Scenario ids in suite order: outcomes arrive in completion order.
    order: Vec<String>,
    state: Mutex<State>,
}

#[derive(Debug, Default)]
struct State {
    sweep: Option<RunReport>,
    suite_started: Option<Instant>,
    outcomes: Vec<ScenarioOutcome>,
}

impl Aggregator {
    /// An aggregator for a run of the scenarios `order` (their ids, in suite order).
    pub fn new(order: Vec<String>) -> Self {
        Aggregator {
            order,
            state: Mutex::default(),
        }
    }

    /// The run report: the sweep's, with every scenario outcome folded in, in suite
    /// order. `None` when no sweep finished (the run stopped on a harness error).
    pub fn finish(&self) -> Option<RunReport> {
        let mut state = self.state.lock().unwrap_or_else(|e| e.into_inner());
        let mut report = state.sweep.take()?;
        let took_ms = state
            .suite_started
            .map_or(0, |t| t.elapsed().as_millis() as u64);
        let mut outcomes = std::mem::take(&mut state.outcomes);
        let position = |id: &str| self.order.iter().position(|o| o == id);
        outcomes.sort_by_key(|o| position(&o.id).unwrap_or(usize::MAX));
        report.add_scenarios(outcomes, took_ms);
        Some(report)
    }
}

impl EventSink for Aggregator {
    fn event(&self, event: &Event) {
        let mut state = self.state.lock().unwrap_or_else(|e| e.into_inner());
        match event {
            Event::SweepFinished { report, .. } => {
                state.sweep = Some((**report).clone());
                state.suite_started = Some(Instant::now());
            }
            Event::ScenarioFinished { outcome, .. } => state.outcomes.push((**outcome).clone()),
            _ => {}
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::outcome::events::Emitter;
    use crate::outcome::{Tally, Verdict};
    use std::sync::Arc;

    fn outcome(id: &str, verdict: Verdict) -> ScenarioOutcome {
        ScenarioOutcome::not_run(id, id, "", vec![], verdict, "test")
    }

    #[test]
    fn outcomes_are_kept_in_suite_order_and_decide_the_verdict() {
        let agg = Arc::new(Aggregator::new(vec!["a".into(), "b".into()]));
        let events = Emitter::new(vec![agg.clone()]);
        let sweep = RunReport::empty("server", crate::protocol::Revision::V2025_11_25);
        events.emit(Event::SweepFinished {
            revision: sweep.revision,
            failures: 0,
            warnings: 0,
            report: Box::new(sweep),
        });
        // Completion order is b, then a.
        crate::outcome::events::scenario_finished(&events, outcome("b", Verdict::Fail));
        crate::outcome::events::scenario_finished(&events, outcome("a", Verdict::Pass));
        let report = agg.finish().expect("the sweep finished");
        let ids: Vec<_> = report.scenarios.iter().map(|o| o.id.as_str()).collect();
        assert_eq!(ids, ["a", "b"]);
        assert_eq!(
            report.tally,
            Tally {
                pass: 1,
                fail: 1,
                ..Tally::default()
            }
        );
        assert_eq!(report.verdict, crate::outcome::RunVerdict::Fail);
    }

    #[test]
    fn no_sweep_no_report() {
        assert!(Aggregator::new(vec![]).finish().is_none());
    }
}

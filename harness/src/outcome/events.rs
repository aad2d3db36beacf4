//! The one vocabulary between a frame and the reporters: every reporter (terminal, event
//! log, the aggregate the file reports render) learns of a run only through these events,
//! so a new reporter needs no change to the runner and none can disagree with another
//! about what happened.
//!
//! The runner emits [`Event`]s while it runs, and so does the scenario executor, step by
//! step, through the same [`Emitter`]; reporters are [`EventSink`]s and never reach back
//! into the runner. Defined here, below both, so neither imports the other.
//!
//! With `--jobs N` events of different scenarios interleave, so every scenario event names
//! its scenario; the events of one scenario always come in order: `scenario_started`, then
//! its steps (each `step_started` before the frames and findings it causes and its
//! `step_finished`), then the frames and findings of the server's shutdown, then
//! `scenario_skipped` or `harness_error` if it ended that way, then `scenario_finished`.
//! Frames come from the session's transcript as each entry is recorded
//! (`Transcript::tell`).
//!
//! The serialized form (one JSON object per line, `--report events=PATH`) is documented in
//! `reports/events.schema.json`.

use std::sync::Arc;

use serde::Serialize;

use super::{Direction, Entry, Finding, RunReport, RunVerdict, ScenarioOutcome, Tally, Verdict};
use crate::protocol::Revision;

/// Something that happened in a run, as it happened.
#[derive(Clone, Debug, Serialize)]
#[serde(tag = "event", rename_all = "snake_case")]
pub enum Event {
    /// Before anything is sent: what will run, against what.
    RunStarted {
        /// Scenarios selected to run (after --include/--exclude).
        planned: usize,
        /// The server command line or URL.
        target: String,
        /// The revision requested.
        revision: Revision,
        /// Scenarios run at a time (`--jobs`).
        jobs: usize,
    },
    /// The protocol sweep (handshake, ping, list methods) is done; its findings were
    /// emitted just before, with no scenario.
    SweepFinished {
        /// The revision negotiated.
        revision: Revision,
        /// MUST-level findings of the sweep.
        failures: usize,
        /// SHOULD-level findings of the sweep.
        warnings: usize,
        /// The sweep's report: the run report before any scenario, owned by the event
        /// (not serialized: its findings were events already).
        #[serde(skip)]
        report: Box<RunReport>,
    },
    /// A scenario's server is about to start.
    ScenarioStarted {
        /// The scenario's id, e.g. `tools/call-unknown`.
        scenario: String,
        /// The scenario's title.
        title: String,
    },
    /// A step is about to run.
    StepStarted {
        /// The scenario's id.
        scenario: String,
        /// Position among the scenario's executed steps, from 0 (a `for_each` body counts
        /// once per iteration).
        step: usize,
        /// The step's line in its scenario file.
        line: usize,
        /// How many `for_each` bodies the step is inside.
        depth: usize,
        /// What the step does, e.g. `request tools/list`.
        action: String,
    },
    /// A step is done; `status` says how it ended.
    StepFinished {
        /// The scenario's id.
        scenario: String,
        /// The step's position, as in its `step_started`.
        step: usize,
        /// The step's line in its scenario file.
        line: usize,
        /// How the step ended (flattened into the event).
        #[serde(flatten)]
        status: StepEnd,
    },
    /// A broken rule, as soon as it is known. `scenario` is null for the protocol sweep.
    Finding {
        /// The scenario it was seen in; `None` for the protocol sweep.
        scenario: Option<String>,
        /// Whether it counts for the scenario or for the run.
        scope: FindingScope,
        /// The broken rule, with its frame and spec section.
        finding: Finding,
    },
    /// A message mcpcheck sent (the transcript entry `index` of the scenario's session).
    FrameSent {
        /// The scenario's id.
        scenario: String,
        /// The entry's index in the session's transcript.
        index: usize,
        /// Milliseconds since the session started (microsecond precision).
        at_ms: f64,
        /// The message as sent.
        text: String,
    },
    /// A line or message the server sent.
    FrameReceived {
        /// The scenario's id.
        scenario: String,
        /// The entry's index in the session's transcript.
        index: usize,
        /// Milliseconds since the session started (microsecond precision).
        at_ms: f64,
        /// The line or message as received.
        text: String,
    },
    /// Something observed about the connection: an exit, a framing event, an HTTP exchange.
    Connection {
        /// The scenario's id.
        scenario: String,
        /// The entry's index in the session's transcript.
        index: usize,
        /// Milliseconds since the session started (microsecond precision).
        at_ms: f64,
        /// What was observed, in words.
        text: String,
    },
    /// The scenario did not apply to this server (e.g. a capability it does not declare).
    ScenarioSkipped {
        /// The scenario's id.
        scenario: String,
        /// Why it was skipped.
        reason: String,
    },
    /// A harness or setup problem (exit 2), in a scenario or (null) in the run itself.
    HarnessError {
        /// The scenario it happened in; `None` for the run itself.
        scenario: Option<String>,
        /// What went wrong.
        reason: String,
    },
    /// A scenario is done, with its verdict.
    ScenarioFinished {
        /// The scenario's id.
        scenario: String,
        /// The scenario's verdict (flattened into the event).
        #[serde(flatten)]
        verdict: Verdict,
        /// Findings that count for the scenario.
        findings: usize,
        /// Wall time of the scenario, in milliseconds.
        duration_ms: u64,
        /// The whole outcome, owned by the event: reporters print it and the aggregator
        /// keeps it (not serialized: its frames and findings were events already).
        #[serde(skip)]
        outcome: Box<ScenarioOutcome>,
    },
    /// The run is done: the last event.
    RunFinished {
        /// The run's verdict, which decides the exit code.
        verdict: RunVerdict,
        /// Scenarios counted by verdict.
        tally: Tally,
        /// Wall time of the run, in milliseconds.
        duration_ms: u64,
    },
}

impl Event {
    /// The scenario an event belongs to, if any.
    pub fn scenario(&self) -> Option<&str> {
        match self {
            Event::ScenarioStarted { scenario, .. }
            | Event::StepStarted { scenario, .. }
            | Event::StepFinished { scenario, .. }
            | Event::FrameSent { scenario, .. }
            | Event::FrameReceived { scenario, .. }
            | Event::Connection { scenario, .. }
            | Event::ScenarioSkipped { scenario, .. }
            | Event::ScenarioFinished { scenario, .. } => Some(scenario),
            Event::Finding { scenario, .. } | Event::HarnessError { scenario, .. } => {
                scenario.as_deref()
            }
            Event::RunStarted { .. } | Event::SweepFinished { .. } | Event::RunFinished { .. } => {
                None
            }
        }
    }

    /// The frame event for a transcript entry.
    pub fn frame(scenario: &str, index: usize, entry: &Entry) -> Event {
        let (scenario, text) = (scenario.to_owned(), entry.text.clone());
        let at_ms = (entry.at.as_secs_f64() * 1_000_000.0).round() / 1000.0;
        match entry.direction {
            Direction::Sent => Event::FrameSent {
                scenario,
                index,
                at_ms,
                text,
            },
            Direction::Received => Event::FrameReceived {
                scenario,
                index,
                at_ms,
                text,
            },
            Direction::Event => Event::Connection {
                scenario,
                index,
                at_ms,
                text,
            },
        }
    }

    /// The event for `finding`, seen while `scenario` ran, counting as `scope` says.
    pub fn finding(scenario: &str, scope: FindingScope, finding: &Finding) -> Event {
        Event::Finding {
            scenario: Some(scenario.to_owned()),
            scope,
            finding: finding.clone(),
        }
    }
}

/// Whether a finding counts for the scenario it was seen in.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum FindingScope {
    /// The scenario's own rule or expectation: it decides the scenario's verdict.
    Scenario,
    /// Another rule, seen on the way: it counts for the run (see `ScenarioOutcome::protocol`).
    Protocol,
    /// The protocol sweep.
    Sweep,
}

/// How a step ended.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
#[serde(tag = "status", rename_all = "snake_case")]
pub enum StepEnd {
    /// It ran and raised nothing.
    Passed,
    /// It raised a MUST-level finding, or stopped the scenario because the server failed.
    Failed,
    /// It raised only SHOULD-level findings.
    Warned,
    /// It did not run (a tool the policy forbids, a capability not declared), and why.
    Skipped {
        /// Why it did not run.
        reason: String,
    },
    /// A scenario-file or harness problem stopped it.
    Error {
        /// The problem.
        reason: String,
    },
}

/// A reporter that consumes events. Called from the scenario tasks as things happen, so
/// it must be quick and must not block on anything but its own output.
pub trait EventSink: Send + Sync {
    /// Receives one event.
    fn event(&self, event: &Event);
}

/// Fans events out to every sink. Empty by default, and then emitting costs nothing: no
/// event is even built (see [`Emitter::emit_with`]).
#[derive(Clone, Default)]
pub struct Emitter {
    sinks: Vec<Arc<dyn EventSink>>,
}

impl std::fmt::Debug for Emitter {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Emitter")
            .field("sinks", &self.sinks.len())
            .finish()
    }
}

impl Emitter {
    /// An emitter that sends every event to each of `sinks`.
    pub fn new(sinks: Vec<Arc<dyn EventSink>>) -> Self {
        Emitter { sinks }
    }

    /// True when no sink listens (emitting is then a no-op).
    pub fn is_empty(&self) -> bool {
        self.sinks.is_empty()
    }

    /// Sends `event` to every sink, in order.
    pub fn emit(&self, event: Event) {
        for s in &self.sinks {
            s.event(&event);
        }
    }

    /// Emits the event `make` builds, building it only if some sink listens.
    pub fn emit_with(&self, make: impl FnOnce() -> Event) {
        if !self.is_empty() {
            self.emit(make());
        }
    }
}

/// A sink that calls a function: tests, and small adapters such as a progress callback.
pub struct FnSink<F>(pub F);

impl<F> std::fmt::Debug for FnSink<F> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("FnSink")
    }
}

impl<F: Fn(&Event) + Send + Sync> EventSink for FnSink<F> {
    fn event(&self, event: &Event) {
        (self.0)(event)
    }
}

/// A sink that keeps every event, in arrival order (tests, and library users).
#[derive(Debug, Default)]
pub struct Collect(std::sync::Mutex<Vec<Event>>);

impl Collect {
    /// Takes the events collected so far, leaving none.
    pub fn take(&self) -> Vec<Event> {
        std::mem::take(&mut *self.0.lock().unwrap_or_else(|e| e.into_inner()))
    }
}

impl EventSink for Collect {
    fn event(&self, event: &Event) {
        self.0
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .push(event.clone());
    }
}

/// Emits the scenario-ending events for `outcome`: skipped or harness error if it ended
/// that way, then finished, which hands the outcome itself to the sinks.
pub fn scenario_finished(events: &Emitter, outcome: ScenarioOutcome) {
    let scenario = outcome.id.clone();
    match &outcome.verdict {
        Verdict::Skip { reason } => events.emit_with(|| Event::ScenarioSkipped {
            scenario: scenario.clone(),
            reason: reason.clone(),
        }),
        Verdict::Error { reason } => events.emit_with(|| Event::HarnessError {
            scenario: Some(scenario.clone()),
            reason: reason.clone(),
        }),
        _ => {}
    }
    events.emit_with(|| Event::ScenarioFinished {
        scenario,
        verdict: outcome.verdict.clone(),
        findings: outcome.findings.len(),
        duration_ms: outcome.duration_ms,
        outcome: Box::new(outcome),
    });
}

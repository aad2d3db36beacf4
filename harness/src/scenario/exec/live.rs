//! Telling a scenario's steps and findings as they happen, and how far that has got, so
//! each finding is told once.

use super::report_finding;
use crate::outcome::Finding;
use crate::outcome::events::Emitter;

/// Where steps and findings are told as they happen (nowhere by default), and how many
/// of each have been.
pub(super) struct Live {
    pub(super) events: Emitter,
    /// Steps started so far (the `step` number of the events).
    steps_started: usize,
    /// The executor's own findings already reported.
    findings_reported: usize,
    /// The session's findings already reported.
    session_findings_reported: usize,
}

impl Live {
    pub(super) fn new(events: Emitter) -> Self {
        Live {
            events,
            steps_started: 0,
            findings_reported: 0,
            session_findings_reported: 0,
        }
    }

    /// The number of the step starting now.
    pub(super) fn next_step(&mut self) -> usize {
        self.steps_started += 1;
        self.steps_started - 1
    }

    /// Reports the findings added to `own` and to `session` since the last call.
    pub(super) fn report_new(
        &mut self,
        scenario: &str,
        rule: &str,
        own: &[Finding],
        session: &[Finding],
    ) {
        for f in own.get(self.findings_reported..).unwrap_or_default() {
            report_finding(&self.events, scenario, rule, f);
        }
        self.findings_reported = own.len();
        for f in session.iter().skip(self.session_findings_reported) {
            report_finding(&self.events, scenario, rule, f);
        }
        self.session_findings_reported = session.len();
    }

    /// How many of the session's findings have been reported.
    pub(super) fn session_findings_reported(&self) -> usize {
        self.session_findings_reported
    }
}

//! What a baseline is made of and what comparing a run with it gives: accepted failures
//! (`Accepted`), the run's failures (`Failure`) and the `Comparison`. Shared by mcpcheck's own
//! format (`baseline`) and the official suite's (`baseline_official`).

use serde::Serialize;

/// One accepted failure.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct Accepted {
    /// The failure's id: a scenario id or a rule id.
    pub id: String,
    /// Why the failure is accepted.
    pub reason: String,
    /// The leg it is accepted in (`revision:` in the file); `None`: every leg.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub revision: Option<crate::protocol::Revision>,
}

/// How the run compares with the baseline.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize)]
pub struct Comparison {
    /// Failing and listed: accepted.
    pub expected: Vec<Accepted>,
    /// Failing and not listed: fail the run.
    pub unexpected: Vec<Failure>,
    /// Listed but no longer failing: fail the run until removed.
    pub stale: Vec<Accepted>,
    /// Listed scenarios that did not run or were skipped: neither confirmed nor stale.
    pub unverified: Vec<Accepted>,
}

impl Comparison {
    /// Whether the run passes once the baseline is taken into account.
    pub fn passes(&self) -> bool {
        self.unexpected.is_empty() && self.stale.is_empty()
    }
}

/// A failure of the run, by id.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct Failure {
    /// The scenario id or rule id.
    pub id: String,
    /// What failed, in a line (the scenario title or the first finding's message).
    pub what: String,
}

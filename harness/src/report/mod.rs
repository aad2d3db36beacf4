//! Turning a run into something a person or a machine reads.

pub mod human;

use crate::runner::RunReport;

/// Writes the JSON report (format documented in README, "JSON report").
pub fn to_json(report: &RunReport) -> String {
    serde_json::to_string_pretty(report).expect("reports always serialize")
}

//! The JSON report: the run as serialized, plus the baseline comparison. Its format is
//! documented by `reports/results.schema.json` (versioned by `format_version`).
//!
//! Serialized straight from the run, never through a `serde_json::Value` tree: with the
//! transcripts of two legs that tree was most of a run's peak memory.

use serde::Serialize;

use super::{Input, expected};
use crate::outcome::RunReport;

/// One leg as the JSON report writes it: the run's own fields, then `deterministic` and
/// the baseline comparison.
#[derive(Debug, Serialize)]
pub struct LegObject<'a> {
    #[serde(flatten)]
    run: &'a RunReport,
    deterministic: bool,
    #[serde(skip_serializing_if = "Option::is_none")]
    baseline: Option<&'a expected::Comparison>,
}

impl<'a> LegObject<'a> {
    /// The leg of `input`.
    pub fn of(input: &Input<'a>) -> Self {
        LegObject {
            run: input.run,
            deterministic: input.deterministic,
            baseline: input.baseline,
        }
    }
}

/// Renders the JSON report (pretty-printed).
pub fn render(input: &Input<'_>) -> Result<String, serde_json::Error> {
    serde_json::to_string_pretty(&LegObject::of(input))
}

//! The JSON report: the run as serialized, plus the baseline comparison. Its format is
//! documented by `reports/results.schema.json` (versioned by `format_version`).

use serde_json::Value;

use super::Input;

/// Renders the JSON report (pretty-printed).
pub fn render(input: &Input<'_>) -> Result<String, serde_json::Error> {
    let mut v = serde_json::to_value(input.run)?;
    if let Value::Object(map) = &mut v {
        map.insert("deterministic".into(), Value::Bool(input.deterministic));
        if let Some(b) = input.baseline {
            map.insert("baseline".into(), serde_json::to_value(b)?);
        }
    }
    serde_json::to_string_pretty(&v)
}

//! Reading `mcpcheck`'s JSON report: findings by severity, scenarios by verdict.

use std::collections::BTreeMap;

use serde_json::Value;

/// Rule ids of the findings in a report, at failure level.
pub fn failures(report: &Value) -> Vec<String> {
    findings_at(report, "failure")
}

/// Rule ids of the findings in a report at `severity` (`failure`, `warning`, `info`).
pub fn findings_at(report: &Value, severity: &str) -> Vec<String> {
    report["findings"]
        .as_array()
        .into_iter()
        .flatten()
        .filter(|f| f["severity"] == severity)
        .filter_map(|f| f["rule"].as_str().map(str::to_owned))
        .collect()
}

/// Scenario id -> verdict (`pass`, `fail`, `warn`, `skip`, `error`).
pub fn verdicts(report: &Value) -> BTreeMap<String, String> {
    scenarios(report)
        .map(|s| {
            (
                s["id"].as_str().unwrap_or("").to_owned(),
                s["verdict"].as_str().unwrap_or("").to_owned(),
            )
        })
        .collect()
}

/// Ids of the scenarios whose verdict is `verdict`, in report order.
pub fn scenarios_with(report: &Value, verdict: &str) -> Vec<String> {
    scenarios(report)
        .filter(|s| s["verdict"] == verdict)
        .map(|s| s["id"].as_str().unwrap_or("").to_owned())
        .collect()
}

fn scenarios(report: &Value) -> impl Iterator<Item = &Value> {
    report["scenarios"].as_array().into_iter().flatten()
}

/// The first scenario whose id starts with `prefix` (`fuzz/` for a reproducer).
pub fn scenario_starting<'a>(report: &'a Value, prefix: &str) -> Option<&'a Value> {
    scenarios(report).find(|s| s["id"].as_str().is_some_and(|i| i.starts_with(prefix)))
}

/// The `http` records of `kind` (`exchange`, `resume`, `stream_end`) in the run's own
/// transcript (the protocol sweep; scenarios keep their own).
pub fn sweep_http<'a>(report: &'a Value, kind: &str) -> Vec<&'a Value> {
    report["transcript"]
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(|e| e.get("http"))
        .filter(|h| h["kind"] == kind)
        .collect()
}

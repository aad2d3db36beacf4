//! Figures every reporter shows: totals by area, the run's failing ids, server identity.

use std::collections::BTreeMap;

use serde::Serialize;

use crate::outcome::{Finding, Forbidden, RunReport, ScenarioOutcome, Severity, Tally, Verdict};

/// The area of a scenario: the first segment of its id (`tools/call-unknown` -> `tools`).
pub fn area(id: &str) -> &str {
    id.split('/').next().unwrap_or(id)
}

/// Scenario verdicts counted for one area.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize)]
pub struct AreaTotals {
    /// The area (the first segment of the scenario ids).
    pub area: String,
    /// Its scenarios by verdict.
    #[serde(flatten)]
    pub tally: Tally,
}

/// Totals per area, areas in name order.
pub fn by_area(outcomes: &[ScenarioOutcome]) -> Vec<AreaTotals> {
    let mut map: BTreeMap<&str, AreaTotals> = BTreeMap::new();
    for o in outcomes {
        let a = area(&o.id);
        map.entry(a)
            .or_insert_with(|| AreaTotals {
                area: a.to_owned(),
                ..AreaTotals::default()
            })
            .tally
            .add(&o.verdict);
    }
    map.into_values().collect()
}

/// The short name of a verdict, as reports print it.
pub fn verdict_name(v: &Verdict) -> &'static str {
    match v {
        Verdict::Pass => "pass",
        Verdict::Fail => "fail",
        Verdict::Warn => "warn",
        Verdict::Skip { .. } => "skip",
        Verdict::Error { .. } => "error",
        Verdict::Blocked { .. } => "blocked",
    }
}

/// The reason of a skip, an error or a block.
pub fn verdict_reason(v: &Verdict) -> Option<&str> {
    v.reason()
}

/// Failure-level findings of the scenario sessions that belong to no scenario: they fail the
/// run (see [`RunReport::add_scenarios`]), with the scenario whose session saw them.
pub fn scenario_protocol_failures(report: &RunReport) -> Vec<(&str, &Finding)> {
    report
        .scenarios
        .iter()
        .flat_map(|o| o.protocol.iter().map(move |f| (o.id.as_str(), f)))
        .filter(|(_, f)| f.severity == Severity::Failure)
        .collect()
}

/// `name version` from serverInfo, if the handshake got that far.
pub fn server_identity(report: &RunReport) -> Option<String> {
    let p = report.profile.as_ref()?;
    let name = p.server_info.get("name").and_then(|v| v.as_str())?;
    let version = p
        .server_info
        .get("version")
        .and_then(|v| v.as_str())
        .unwrap_or("?");
    Some(format!("{name} {version}"))
}

/// One line per reason the tool policy skipped `tools/call`s in the run: how many calls in
/// how many scenarios, what forbade them, and the flag that enables them. Empty when the
/// policy skipped nothing. Shown first in the summaries, since those checks did not run.
pub fn policy_notes(outcomes: &[ScenarioOutcome]) -> Vec<String> {
    let mut by_reason: BTreeMap<Forbidden, (usize, usize)> = BTreeMap::new();
    for o in outcomes {
        let mut seen = Vec::new();
        for why in &o.policy_skips {
            let entry = by_reason.entry(*why).or_default();
            entry.1 += 1;
            if !seen.contains(why) {
                seen.push(*why);
                entry.0 += 1;
            }
        }
    }
    let s = |n: usize| if n == 1 { "" } else { "s" };
    let mut notes: Vec<String> = by_reason
        .into_iter()
        .map(|(why, (scenarios, calls))| {
            format!(
                "{calls} tool call{} in {scenarios} scenario{} skipped: {} forbids them; {}",
                s(calls),
                s(scenarios),
                why.forbidder(),
                why.remedy()
            )
        })
        .collect();
    let fixture: Vec<u32> = outcomes
        .iter()
        .map(|o| o.fixture_calls)
        .filter(|n| *n > 0)
        .collect();
    if !fixture.is_empty() {
        let calls = fixture.iter().sum::<u32>() as usize;
        notes.push(format!(
            "{calls} call{} in {} scenario{} to official fixture tools not annotated readOnlyHint, made because --profile official-fixture takes the server for that fixture",
            s(calls),
            fixture.len(),
            s(fixture.len())
        ));
    }
    notes
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_area_is_the_first_id_segment() {
        assert_eq!(area("tools/call/unknown"), "tools");
        assert_eq!(area("ping"), "ping");
    }
}

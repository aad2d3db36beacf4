//! The "official checks" table of the HTML and Markdown reports: each scenario id of the
//! official suite (`@modelcontextprotocol/conformance`) that the run's scenarios name
//! (`official:`), with the worst verdict among them, so a maintainer who swapped the official
//! suite for mcpcheck reads the ids they know.
//!
//! Shown only when the server is an official fixture (some `official/` scenario did not
//! skip): on any other server the table would list ids nobody there asked about.

use std::collections::BTreeMap;

use serde::Serialize;

use super::summary::verdict_name;
use crate::outcome::{ScenarioOutcome, Verdict};

/// One official id and what mcpcheck found for it.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct OfficialRow {
    /// The official suite's scenario id, e.g. `tools-call-image`.
    pub id: String,
    /// The worst verdict of the scenarios naming it (`fail` over `warn` over `pass` over
    /// `skip`; `error` and `blocked` count as failing).
    pub verdict: &'static str,
    /// The mcpcheck scenarios naming it, each with its own verdict.
    pub scenarios: Vec<(String, &'static str)>,
    /// What of the official scenario mcpcheck does not check, when it covers it in part.
    pub partial: Option<&'static str>,
}

/// How bad a verdict is, for the worst-of: a skip only wins when nothing ran.
fn rank(v: &Verdict) -> u8 {
    match v {
        Verdict::Skip { .. } => 0,
        Verdict::Pass => 1,
        Verdict::Warn => 2,
        Verdict::Fail | Verdict::Error { .. } | Verdict::Blocked { .. } => 3,
    }
}

/// The table's rows, by official id; empty unless the server is an official fixture.
pub fn rows(scenarios: &[ScenarioOutcome]) -> Vec<OfficialRow> {
    let fixture = scenarios
        .iter()
        .any(|s| s.id.starts_with("official/") && !matches!(s.verdict, Verdict::Skip { .. }));
    if !fixture {
        return Vec::new();
    }
    let mut by_id: BTreeMap<&str, Vec<&ScenarioOutcome>> = BTreeMap::new();
    for s in scenarios {
        for id in &s.official {
            by_id.entry(id).or_default().push(s);
        }
    }
    by_id
        .into_iter()
        .map(|(id, named)| {
            let worst = named
                .iter()
                .map(|s| &s.verdict)
                .max_by_key(|v| rank(v))
                .expect("an id is named by at least one scenario");
            OfficialRow {
                partial: crate::scenario::official::partial(id),
                id: id.to_owned(),
                verdict: verdict_name(worst),
                scenarios: named
                    .iter()
                    .map(|s| (s.id.clone(), verdict_name(&s.verdict)))
                    .collect(),
            }
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn outcome(id: &str, official: &[&str], verdict: Verdict) -> ScenarioOutcome {
        let official = official.iter().map(|s| s.to_string()).collect();
        ScenarioOutcome::not_run(id, id, "", official, verdict, "test")
    }

    #[test]
    fn each_id_gets_the_worst_verdict_of_the_scenarios_naming_it() {
        let skip = || Verdict::Skip { reason: "r".into() };
        let run = [
            outcome(
                "official/tools-call-image",
                &["tools-call-image"],
                Verdict::Pass,
            ),
            outcome(
                "resources/read-each",
                &["resources-read-text"],
                Verdict::Pass,
            ),
            outcome(
                "official/read-static",
                &["resources-read-text"],
                Verdict::Fail,
            ),
            outcome("resources/subscribe", &["resources-subscribe"], skip()),
            outcome("tools/list-result", &[], Verdict::Fail),
        ];
        let rows = rows(&run);
        let got: Vec<(&str, &str)> = rows.iter().map(|r| (r.id.as_str(), r.verdict)).collect();
        assert_eq!(
            got,
            [
                ("resources-read-text", "fail"),
                ("resources-subscribe", "skip"),
                ("tools-call-image", "pass")
            ]
        );
        assert_eq!(rows[0].scenarios.len(), 2);
        assert_eq!(rows[0].partial, None);
        let headers = super::rows(&[outcome(
            "official/tools-call-image",
            &["http-header-validation"],
            Verdict::Pass,
        )]);
        assert!(
            headers[0]
                .partial
                .is_some_and(|p| p.contains("letter-case"))
        );
    }

    #[test]
    fn no_table_when_every_official_fixture_scenario_skipped() {
        let skip = Verdict::Skip {
            reason: "no fixture".into(),
        };
        let run = [
            outcome("official/tools-call-image", &["tools-call-image"], skip),
            outcome("lifecycle/ping-result", &["ping"], Verdict::Pass),
        ];
        assert!(rows(&run).is_empty());
    }
}

//! The official suite's expected-failures file (`@modelcontextprotocol/conformance
//! --expected-failures`), read by `--expected-failures` so an SDK keeps the file it has:
//!
//! ```yaml
//! server:
//!   - tools-call-with-progress        # a whole scenario
//!   - server-stateless:some-check-id  # one check of a scenario
//! client:
//!   - sse-retry                       # client scenarios, for `mcpcheck client`
//! ```
//!
//! An entry is an official scenario id. It accepts the failure of every mcpcheck scenario
//! that names it (`official:` in the scenario file); it is stale when every scenario naming
//! it ran and passed, and unverified when none ran (or none names it). mcpcheck's verdicts
//! are per scenario, so a per-check entry (`scenario:check`) counts for its whole scenario,
//! which is coarser than the official suite (said in the note it leaves).
//!
//! The same file may also hold mcpcheck's own `expected-failures:` list, for failures no
//! official id covers (the protocol sweep's rules, mcpcheck-only scenarios).

use std::collections::{BTreeMap, BTreeSet};

use saphyr::Yaml;

use super::expected::{Accepted, Comparison};
use crate::outcome::{RunReport, Verdict};

/// The reason recorded for an entry of the official file's `key` list (it carries none).
pub fn reason(key: &str) -> String {
    format!("listed under `{key}:` in the official suite's expected-failures file")
}

/// The `key` list (`server` or `client`) of an official file, as entries (official ids):
/// `server:` for `mcpcheck run`, `client:` for `mcpcheck client`. `None` when the
/// document has neither key.
pub fn parse(doc: &Yaml, key: &str) -> Result<Option<Vec<Accepted>>, String> {
    if doc.as_mapping_get("server").is_none() && doc.as_mapping_get("client").is_none() {
        return Ok(None);
    }
    let Some(list) = doc.as_mapping_get(key).filter(|l| !l.is_null()) else {
        return Ok(Some(Vec::new()));
    };
    let items = list.as_vec().ok_or(format!(
        "`{key}` must be a list of official scenario ids, e.g. `- tools-call-image`"
    ))?;
    // Ids in file order; each with the checks named (none: the whole scenario).
    let mut order: Vec<String> = Vec::new();
    let mut checks: BTreeMap<String, Option<Vec<String>>> = BTreeMap::new();
    for (n, item) in items.iter().enumerate() {
        let Some(text) = item.as_str().map(str::trim).filter(|s| !s.is_empty()) else {
            return Err(format!(
                "{key} entry {}: expected a scenario id as a string (`- scenario` or \
                 `- scenario:check-id`; mind the space: `- scenario: check` is a mapping)",
                n + 1
            ));
        };
        let (id, check) = match text.split_once(':') {
            Some((id, check)) => (id.trim().to_owned(), Some(check.trim().to_owned())),
            None => (text.to_owned(), None),
        };
        let Some(slot) = checks.get_mut(&id) else {
            order.push(id.clone());
            checks.insert(id, check.map(|c| vec![c]));
            continue;
        };
        match (slot, check) {
            (Some(list), Some(check)) => list.push(check),
            (None, None) => {
                return Err(format!("{key} entry {}: `{id}` is listed twice", n + 1));
            }
            _ => {
                return Err(format!(
                    "{key} entry {}: `{id}` is listed both whole and per check; keep one",
                    n + 1
                ));
            }
        }
    }
    let entries = order
        .into_iter()
        .map(|id| {
            let reason = match &checks[&id] {
                None => reason(key),
                Some(list) => format!(
                    "{} (only its checks {}; mcpcheck judges the whole scenario)",
                    reason(key),
                    list.join(", ")
                ),
            };
            Accepted {
                id,
                reason,
                revision: None,
            }
        })
        .collect();
    Ok(Some(entries))
}

/// Adds the official entries to `c`: a failure already `unexpected` there whose scenario
/// names a listed official id becomes expected; the entries no failure confirmed are
/// stale or unverified.
pub fn compare(official: &[Accepted], report: &RunReport, c: &mut Comparison) {
    let listed: BTreeMap<&str, &Accepted> = official.iter().map(|e| (e.id.as_str(), e)).collect();
    let names = |scenario: &str| -> Vec<&str> {
        report
            .scenarios
            .iter()
            .find(|o| o.id == scenario)
            .map(|o| o.official.iter().map(String::as_str).collect())
            .unwrap_or_default()
    };
    // A rule broken only inside scenario sessions (not by the sweep) is that scenario's
    // failure, as the official suite counts its wire-schema check per scenario: the names
    // of every scenario whose session broke it, if all of them are listed.
    let rule_names = |rule: &str| -> Vec<&str> {
        let threshold = report.fail_on.threshold();
        let breaks = |f: &crate::outcome::Finding| f.rule == rule && f.severity >= threshold;
        if report.sweep.findings.iter().any(breaks) {
            return Vec::new();
        }
        let sessions: Vec<_> = report
            .scenarios
            .iter()
            .filter(|o| o.protocol.iter().any(breaks))
            .collect();
        let hits: Vec<&str> = sessions
            .iter()
            .flat_map(|o| o.official.iter().map(String::as_str))
            .filter(|id| listed.contains_key(id))
            .collect();
        let all_covered = sessions
            .iter()
            .all(|o| o.official.iter().any(|id| listed.contains_key(id.as_str())));
        if all_covered { hits } else { Vec::new() }
    };
    let mut confirmed = BTreeSet::new();
    c.unexpected.retain(|f| {
        let hits: Vec<&str> = if report.scenarios.iter().any(|o| o.id == f.id) {
            names(&f.id)
                .into_iter()
                .filter(|id| listed.contains_key(id))
                .collect()
        } else {
            rule_names(&f.id)
        };
        confirmed.extend(hits.iter().map(|s| s.to_string()));
        hits.is_empty()
    });
    // Failures the mcpcheck list already accepted confirm official entries too.
    for e in &c.expected {
        confirmed.extend(
            names(&e.id)
                .into_iter()
                .filter(|id| listed.contains_key(id))
                .map(str::to_owned),
        );
    }
    for e in official {
        if confirmed.contains(&e.id) {
            c.expected.push(e.clone());
            continue;
        }
        let naming: Vec<_> = report
            .scenarios
            .iter()
            .filter(|o| o.official.contains(&e.id))
            .collect();
        let all_passed = !naming.is_empty()
            && naming
                .iter()
                .all(|o| matches!(o.verdict, Verdict::Pass | Verdict::Warn));
        if all_passed {
            c.stale.push(e.clone());
        } else {
            c.unverified.push(e.clone());
        }
    }
}

/// The official ids this run's failing scenarios name (for `--update-baseline`).
pub fn failing_ids(report: &RunReport, failing: &BTreeSet<String>) -> BTreeSet<String> {
    report
        .scenarios
        .iter()
        .filter(|o| failing.contains(&o.id))
        .flat_map(|o| o.official.iter().cloned())
        .collect()
}

/// The `client:` list as YAML text.
pub fn client_yaml(entries: &[Accepted]) -> String {
    let mut out = String::from("client:\n");
    for e in entries {
        let id = serde_json::to_string(&e.id).expect("strings serialize");
        out.push_str(&format!("  - {id}\n"));
    }
    out
}

/// The `server:` list as YAML text.
pub fn to_yaml(entries: &[Accepted]) -> String {
    let mut out = String::from(
        "# The official suite's expected failures (@modelcontextprotocol/conformance), read by\n\
         # mcpcheck too: each id accepts the failures of the mcpcheck scenarios naming it.\n\
         server:",
    );
    if entries.is_empty() {
        out.push_str(" []\n");
        return out;
    }
    out.push('\n');
    for e in entries {
        let id = serde_json::to_string(&e.id).expect("strings serialize");
        out.push_str(&format!("  - {id}\n"));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::super::baseline::Baseline;
    use crate::outcome::{Finding, RunReport, ScenarioOutcome, Severity, Verdict};
    use crate::protocol::Revision;

    fn scenario(id: &str, official: &[&str], verdict: Verdict) -> ScenarioOutcome {
        let official = official.iter().map(|s| s.to_string()).collect();
        ScenarioOutcome::not_run(id, id, "", official, verdict, "test")
    }

    fn report(scenarios: Vec<ScenarioOutcome>) -> RunReport {
        let mut r = RunReport::empty("s", Revision::V2025_11_25);
        r.scenarios = scenarios;
        r
    }

    fn ids(entries: &[super::Accepted]) -> Vec<&str> {
        entries.iter().map(|e| e.id.as_str()).collect()
    }

    #[test]
    fn the_official_file_parses_with_per_check_entries_and_both_lists() {
        let b = Baseline::parse(
            "server:\n  - tools-list\n  - server-stateless:a\n  - server-stateless:b\nclient:\n  - sse-retry\n",
        )
        .unwrap();
        let official = b.official.unwrap();
        assert_eq!(ids(&official), ["tools-list", "server-stateless"]);
        assert!(
            official[1].reason.contains("a, b"),
            "{}",
            official[1].reason
        );
        assert!(b.entries.is_empty());
        assert_eq!(ids(b.official_client.as_deref().unwrap()), ["sse-retry"]);
        assert!(b.official_client.unwrap()[0].reason.contains("`client:`"));
        let client_only = Baseline::parse("client: [x]\n").unwrap();
        assert_eq!(client_only.official, Some(vec![]));
        assert_eq!(ids(client_only.official_client.as_deref().unwrap()), ["x"]);
    }

    #[test]
    fn mistakes_in_the_official_file_are_named() {
        let twice = Baseline::parse("server: [a, a]\n").unwrap_err();
        assert!(twice.contains("listed twice"), "{twice}");
        let both = Baseline::parse("server: [a, 'a:x']\n").unwrap_err();
        assert!(both.contains("both whole and per check"), "{both}");
        // `- scenario: check` is a mapping, as the official README warns.
        let mapping = Baseline::parse("server:\n  - a: x\n").unwrap_err();
        assert!(mapping.contains("mind the space"), "{mapping}");
        let neither = Baseline::parse("other: 1\n").unwrap_err();
        assert!(neither.contains("`server`"), "{neither}");
    }

    #[test]
    fn official_ids_accept_stale_and_leave_unverified_by_the_scenarios_naming_them() {
        let b = Baseline::parse("server: [tools-list, ping, resources-list, nowhere]\n").unwrap();
        let r = report(vec![
            scenario("tools/list-result", &["tools-list"], Verdict::Fail),
            scenario("lifecycle/ping-result", &["ping"], Verdict::Pass),
            scenario(
                "resources/list-result",
                &["resources-list"],
                Verdict::Skip {
                    reason: "no resources".into(),
                },
            ),
            scenario("tools/other", &[], Verdict::Fail),
        ]);
        let c = b.compare(&r);
        assert_eq!(ids(&c.expected), ["tools-list"]);
        assert_eq!(
            c.unexpected
                .iter()
                .map(|f| f.id.as_str())
                .collect::<Vec<_>>(),
            ["tools/other"]
        );
        assert_eq!(ids(&c.stale), ["ping"]);
        assert_eq!(ids(&c.unverified), ["resources-list", "nowhere"]);
        assert!(!c.passes());
    }

    #[test]
    fn a_rule_broken_only_in_listed_scenarios_sessions_is_accepted_but_not_from_the_sweep() {
        let b = Baseline::parse("server: [tools-list]\n").unwrap();
        let broke = Finding::custom("schema.valid", Severity::Failure, "", "bad");
        let mut listed = scenario("tools/list-result", &["tools-list"], Verdict::Fail);
        listed.protocol.push(broke.clone());
        let mut r = report(vec![listed]);
        assert!(b.compare(&r).passes());
        r.sweep.findings.push(broke);
        let c = b.compare(&r);
        assert_eq!(
            c.unexpected
                .iter()
                .map(|f| f.id.as_str())
                .collect::<Vec<_>>(),
            ["schema.valid"]
        );
    }

    #[test]
    fn update_keeps_the_official_list_by_official_id_and_the_rest_in_mcpcheck_s_list() {
        let b = Baseline::parse("server: [ping]\n").unwrap();
        let r = report(vec![
            scenario("tools/list-result", &["tools-list"], Verdict::Fail),
            scenario("lifecycle/ping-result", &["ping"], Verdict::Pass),
            scenario("tools/other", &[], Verdict::Fail),
        ]);
        let u = b.updated(&r);
        assert_eq!(ids(u.official.as_deref().unwrap()), ["tools-list"]);
        assert_eq!(ids(&u.entries), ["tools/other"]);
        let text = u.to_yaml();
        let again = Baseline::parse(&text).unwrap();
        assert_eq!(again.official, u.official);
        assert_eq!(ids(&again.entries), ["tools/other"]);
        assert!(again.compare(&r).passes(), "{text}");
        // Only official entries: the file stays in the official format alone.
        let only = Baseline::parse("server: [tools-list]\n").unwrap();
        let r = report(vec![scenario(
            "tools/list-result",
            &["tools-list"],
            Verdict::Fail,
        )]);
        let text = only.updated(&r).to_yaml();
        assert!(!text.contains("expected-failures"), "{text}");
    }
}

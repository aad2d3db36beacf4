//! `explain(id)`: what a built-in scenario or a rule checks, the spec section behind it and
//! how much it matters, as data.
//!
//! Ids are what a report names (`lifecycle/initialize-result` for a scenario,
//! `jsonrpc.id-echoed` for a rule), so this is the answer to "what does this line of my
//! report mean?". It lives in the scenario layer because it reads both the rule catalogue
//! (`check::rules`) and the embedded suite, and it is a function of its own so that every
//! front end (the `mcpcheck mcp` tool `explain`, a future `mcpcheck explain`) gives the
//! same answer.

use serde::Serialize;

use super::builtin::{BUILTIN, client_scenarios, scenarios};
use crate::check::{causes, rules};
use crate::outcome::{Rule, Severity};
use crate::protocol::Revision;

/// What [`explain`] knows about one id.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct Explanation {
    /// What the id names.
    pub kind: Kind,
    /// The id as asked.
    pub id: String,
    /// The scenario's title, or the rule's one-line summary.
    pub title: String,
    /// How a broken check counts in the newest revision it applies to: `must` (a failure),
    /// `should` (a warning) or `info` (worth knowing, never a failure).
    pub level: Level,
    /// Where the wording changed between revisions (a SHOULD that became a MUST): each
    /// revision from which `level` held, oldest first. Empty when it never changed.
    pub level_changes: Vec<LevelSince>,
    /// The spec sections behind it, oldest first: sections moved between revisions.
    pub spec: Vec<Section>,
    /// The revisions it applies to.
    pub revisions: Vec<String>,
    /// What is checked and why, in prose: a scenario's own commentary (the comment at the
    /// top of its file) or, for a rule, its summary.
    pub checks: String,
    /// A scenario's findings are filed under this rule id (its own id unless it names one).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub rule: Option<String>,
    /// For a rule: the built-in scenarios whose failures are filed under it. (Rules the
    /// session checks on every message have none: every scenario may report them.)
    pub scenarios: Vec<String>,
    /// Ids of the official conformance suite's scenarios this one stands for.
    pub official: Vec<String>,
    /// The scenario file, under `scenarios/` (none for a rule).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub source: Option<String>,
    /// How a finding under it usually comes about, and the fix: advice, not the spec
    /// (`check::causes`: the rule's own, else its area's).
    pub causes: Vec<&'static str>,
}

/// What an explained id names.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Kind {
    /// A server scenario (`mcpcheck run`).
    Scenario,
    /// A client scenario (`mcpcheck client`).
    ClientScenario,
    /// A rule of the catalogue, which findings are filed under.
    Rule,
}

/// The spec's keyword behind a check.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Level {
    /// MUST / MUST NOT, or the schema: a failure.
    Must,
    /// SHOULD / SHOULD NOT: a warning.
    Should,
    /// Worth knowing, not a violation.
    Info,
}

impl From<Severity> for Level {
    fn from(s: Severity) -> Self {
        match s {
            Severity::Failure => Level::Must,
            Severity::Warning => Level::Should,
            Severity::Info => Level::Info,
        }
    }
}

/// A level that holds from `since` on.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct LevelSince {
    /// The first revision with this level.
    pub since: String,
    /// The level from then on.
    pub level: Level,
}

/// One spec section, as of a revision.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct Section {
    /// The first revision where the text is at this section.
    pub since: String,
    /// `page#anchor` under the revision's specification (or a full URL).
    pub section: String,
    /// The link, under the newest revision the section holds for.
    pub url: String,
}

/// Explains a built-in scenario id, a client scenario id or a rule id; `None` when the id
/// is none of them (see [`suggest`] for a near miss).
pub fn explain(id: &str) -> Option<Explanation> {
    let id = id.trim();
    scenario(id)
        .or_else(|| client_scenario(id))
        .or_else(|| rules::by_id(id).map(rule))
}

/// The known id nearest to `id` (scenarios and rules), when one is near enough to be a
/// typo of it: the "did you mean" for an id [`explain`] does not know.
pub fn suggest(id: &str) -> Option<String> {
    let id = id.trim();
    let mut ids: Vec<String> = rules::ALL.iter().map(|r| r.id.to_owned()).collect();
    ids.extend(scenarios().unwrap_or_default().into_iter().map(|s| s.id));
    ids.extend(
        client_scenarios()
            .unwrap_or_default()
            .into_iter()
            .map(|s| s.id),
    );
    ids.into_iter()
        .map(|known| (strsim::normalized_levenshtein(id, &known), known))
        .filter(|(score, _)| *score >= 0.7)
        .max_by(|a, b| a.0.total_cmp(&b.0))
        .map(|(_, known)| known)
}

fn scenario(id: &str) -> Option<Explanation> {
    let s = scenarios().ok()?.into_iter().find(|s| s.id == id)?;
    Some(of_scenario(
        Kind::Scenario,
        Facts {
            id: &s.id,
            title: &s.title,
            severity: s.severity,
            spec: &s.spec,
            revisions: &s.revisions,
            rule: s.rule_id(),
            official: &s.official,
            source: &s.source,
        },
    ))
}

fn client_scenario(id: &str) -> Option<Explanation> {
    let s = client_scenarios().ok()?.into_iter().find(|s| s.id == id)?;
    Some(of_scenario(
        Kind::ClientScenario,
        Facts {
            id: &s.id,
            title: &s.title,
            severity: s.severity,
            spec: &s.spec,
            revisions: &s.revisions,
            rule: s.rule_id(),
            official: &s.official,
            source: &s.source,
        },
    ))
}

/// What a server and a client scenario both say of themselves.
struct Facts<'a> {
    id: &'a str,
    title: &'a str,
    severity: Severity,
    /// `page#anchor`, or a full URL.
    spec: &'a str,
    revisions: &'a [Revision],
    rule: &'a str,
    official: &'a [String],
    source: &'a str,
}

fn of_scenario(kind: Kind, s: Facts<'_>) -> Explanation {
    let newest = s
        .revisions
        .last()
        .copied()
        .unwrap_or(Revision::LATEST_HANDSHAKE);
    let since = s.revisions.first().copied().unwrap_or(newest);
    let url = if s.spec.starts_with("https://") {
        s.spec.to_owned()
    } else {
        newest.spec_url(s.spec)
    };
    Explanation {
        kind,
        id: s.id.to_owned(),
        checks: commentary(s.source).unwrap_or_else(|| s.title.to_owned()),
        title: s.title.to_owned(),
        level: s.severity.into(),
        level_changes: Vec::new(),
        spec: vec![Section {
            since: since.as_str().to_owned(),
            section: s.spec.to_owned(),
            url,
        }],
        revisions: names(s.revisions),
        rule: Some(s.rule.to_owned()),
        scenarios: Vec::new(),
        official: s.official.to_vec(),
        causes: causes_of(s.rule, s.id),
        source: Some(file(s.source)),
    }
}

fn rule(r: &'static Rule) -> Explanation {
    let first = r
        .sections
        .first()
        .map_or(Revision::ALL[0], |(since, _)| *since);
    let revisions: Vec<Revision> = Revision::ALL
        .iter()
        .copied()
        .filter(|rev| *rev >= first)
        .collect();
    let spec = r
        .sections
        .iter()
        .enumerate()
        .map(|(i, (since, section))| {
            // Linked under the newest revision this entry covers.
            let until = r.sections.get(i + 1).map(|(next, _)| *next);
            let newest = revisions
                .iter()
                .copied()
                .rfind(|rev| until.is_none_or(|u| *rev < u))
                .unwrap_or(*since);
            Section {
                since: since.as_str().to_owned(),
                section: (*section).to_owned(),
                url: newest.spec_url(section),
            }
        })
        .collect();
    let mut filed_under: Vec<String> = scenarios()
        .unwrap_or_default()
        .into_iter()
        .filter(|s| s.rule.as_deref() == Some(r.id))
        .map(|s| s.id)
        .collect();
    filed_under.extend(
        client_scenarios()
            .unwrap_or_default()
            .into_iter()
            .filter(|s| s.rule.as_deref() == Some(r.id))
            .map(|s| s.id),
    );
    Explanation {
        kind: Kind::Rule,
        id: r.id.to_owned(),
        title: r.summary.to_owned(),
        level: r.severity.into(),
        level_changes: r
            .severities
            .iter()
            .map(|(since, s)| LevelSince {
                since: since.as_str().to_owned(),
                level: (*s).into(),
            })
            .collect(),
        spec,
        revisions: names(&revisions),
        checks: r.summary.to_owned(),
        rule: None,
        scenarios: filed_under,
        official: Vec::new(),
        source: None,
        causes: causes::usual_causes(r.id).to_vec(),
    }
}

/// A scenario's advice: its rule's, else its own area's.
fn causes_of(rule: &str, id: &str) -> Vec<&'static str> {
    let by_rule = causes::usual_causes(rule);
    if by_rule.is_empty() {
        causes::usual_causes(id).to_vec()
    } else {
        by_rule.to_vec()
    }
}

fn names(revisions: &[Revision]) -> Vec<String> {
    revisions.iter().map(|r| r.as_str().to_owned()).collect()
}

/// `scenarios/lifecycle/x.yaml` for a built-in source `builtin:lifecycle/x.yaml`.
fn file(source: &str) -> String {
    match source.strip_prefix("builtin:") {
        Some(path) => format!("scenarios/{path}"),
        None => source.to_owned(),
    }
}

/// The comment at the top of a built-in scenario's file, as one paragraph: where the
/// suite writes down what a scenario checks and the judgement behind it (which keyword,
/// why a SHOULD). `None` for a file without one.
fn commentary(source: &str) -> Option<String> {
    let path = source.strip_prefix("builtin:")?;
    let (_, text) = BUILTIN.iter().find(|(p, _)| *p == path)?;
    let lines: Vec<&str> = text
        .lines()
        .take_while(|l| l.starts_with('#'))
        .filter(|l| !l.contains("yaml-language-server:"))
        .map(|l| l.trim_start_matches('#').trim())
        .collect();
    let prose = lines.join(" ").trim().to_owned();
    (!prose.is_empty()).then_some(prose)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_rule_is_explained_with_its_sections_per_revision() {
        let e = explain("jsonrpc.id-echoed").expect("a known rule");
        assert_eq!(e.kind, Kind::Rule);
        assert_eq!(e.level, Level::Must);
        assert_eq!(e.spec.len(), 3);
        assert_eq!(
            e.spec[0].url,
            "https://modelcontextprotocol.io/specification/2024-11-05/basic/messages#responses"
        );
        assert!(
            e.scenarios
                .contains(&"jsonrpc/id-integer-echoed".to_owned())
        );
        assert_eq!(e.revisions.len(), Revision::ALL.len());
    }

    #[test]
    fn a_rule_whose_wording_changed_says_when() {
        let e = explain("lifecycle.client-capability-respected").expect("a known rule");
        assert_eq!(
            e.level_changes,
            [
                LevelSince {
                    since: "2024-11-05".into(),
                    level: Level::Should
                },
                LevelSince {
                    since: "2025-06-18".into(),
                    level: Level::Must
                },
            ]
        );
    }

    #[test]
    fn a_scenario_is_explained_with_its_commentary() {
        let e = explain("jsonrpc/parse-error").expect("a built-in scenario");
        assert_eq!(e.kind, Kind::Scenario);
        assert_eq!(e.level, Level::Should);
        assert!(e.checks.contains("-32700"), "{}", e.checks);
        assert!(!e.checks.contains("yaml-language-server"));
        assert_eq!(
            e.source.as_deref(),
            Some("scenarios/jsonrpc/parse-error.yaml")
        );
        assert_eq!(e.rule.as_deref(), Some("jsonrpc/parse-error"));
    }

    #[test]
    fn client_scenarios_are_known_too() {
        let e = explain("client/cancellation").expect("a built-in client scenario");
        assert_eq!(e.kind, Kind::ClientScenario);
    }

    #[test]
    fn unknown_ids_are_none_with_a_suggestion_for_a_typo() {
        assert!(explain("no.such-rule").is_none());
        assert!(explain("").is_none());
        assert_eq!(
            suggest("jsonrpc.id-echoe").as_deref(),
            Some("jsonrpc.id-echoed")
        );
        assert_eq!(suggest("zzzzzzzzzzzzzzzzzzzz"), None);
    }
}

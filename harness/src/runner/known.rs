//! What the protocol sweep learnt about the server that decides some scenarios without
//! starting a server for them.
//!
//! A scenario that `requires` a capability the server does not declare, or whose deciding
//! loop selects a tool the server does not have (the official-fixture scenarios look for
//! `test_image_content`, ...), ends as a skip after its handshake. Against a server that
//! takes a second to start, a third of a default run went into such starts. The sweep's
//! handshake, at the leg's revision, and its complete `tools/list` already tell the answer.
//!
//! Only what the sweep saw at the same revision counts, and a server's own capabilities do
//! not depend on the client's (basic/lifecycle#capability-negotiation: each side declares
//! what it supports), so a scenario that declares extra client capabilities is decided the
//! same way. Anything the sweep could not settle (a failed listing, a filter that needs
//! variables or the schema) still runs.

use serde_json::Value;

use crate::protocol::Revision;
use crate::scenario::Scenario;
use crate::scenario::matcher::{MatchContext, check_all};
use crate::scenario::model::{Check, Initialize, Matcher, Step, StepKind, Template};
use crate::scenario::template::Vars;

/// The sweep's answers a scenario can be decided on.
#[derive(Clone, Debug, Default)]
pub struct Known {
    /// The revision the sweep's session spoke.
    revision: Option<Revision>,
    /// The server's `capabilities`, from the sweep's handshake.
    capabilities: Option<Value>,
    /// Every tool of a `tools/list` the sweep paginated to its end without a finding.
    tools: Option<Vec<Value>>,
}

impl Known {
    /// What a sweep at `revision` saw: the server's capabilities, and its tools when the
    /// listing completed cleanly.
    pub fn new(revision: Revision, capabilities: Option<Value>, tools: Option<Vec<Value>>) -> Self {
        Known {
            revision: Some(revision),
            capabilities,
            tools,
        }
    }

    /// Why `scenario` would only end as a skip on this server, or `None` when it must run.
    pub fn skip(&self, scenario: &Scenario, revision: Revision) -> Option<String> {
        if self.revision != Some(revision) {
            return None;
        }
        let (first, rest) = scenario.steps.split_first()?;
        // Its own `protocolVersion` may negotiate another revision, with other answers.
        match &first.kind {
            StepKind::Initialize(Initialize::Handshake(o)) if o.protocol_version.is_none() => {}
            _ => return None,
        }
        let unmet = self
            .capabilities
            .as_ref()
            .and_then(|caps| scenario.requires.iter().find_map(|need| need.unmet(caps)));
        if let Some(why) = unmet {
            return Some(format!("{why} (in the protocol sweep's handshake)"));
        }
        self.no_tool_selected(rest)
    }

    /// A scenario that lists the tools and then loops over those its `where` selects:
    /// when none of the server's tools is selected, its deciding loop never runs.
    fn no_tool_selected(&self, steps: &[Step]) -> Option<String> {
        let tools = self.tools.as_ref()?;
        let mut listed = None;
        for step in steps {
            match &step.kind {
                StepKind::Paginate {
                    method,
                    into,
                    params: None,
                    ..
                } if method == "tools/list" => listed = Some(into),
                StepKind::ForEach { list, filter, .. }
                    if Some(list) == listed && !filter.is_empty() && is_static(filter) =>
                {
                    let vars = Vars::new();
                    let cx = MatchContext {
                        vars: &vars,
                        schema: None,
                    };
                    let selected = tools.iter().any(|tool| {
                        let report = check_all(filter, tool, cx);
                        report.mismatches.is_empty() || !report.skipped.is_empty()
                    });
                    return (!selected).then(|| {
                        format!(
                            "nothing to check: no element of `{list}` to run on (none of the {} tools the protocol sweep listed is selected)",
                            tools.len()
                        )
                    });
                }
                // Anything else first (a request, a check) might fail or end the scenario
                // before the loop: it runs.
                _ => return None,
            }
        }
        None
    }
}

/// Whether a filter means the same with no variables and no schema at hand.
fn is_static(filter: &[Check]) -> bool {
    fn matcher(m: &Matcher) -> bool {
        let renders = |t: &Template| t.render(&Vars::new()).is_ok();
        match m {
            Matcher::Equals(t) | Matcher::Subset(t) | Matcher::ConformsTo(t) => renders(t),
            Matcher::OneOf(ts) => ts.iter().all(renders),
            Matcher::All(ms) => ms.iter().all(matcher),
            Matcher::Contains(sets) | Matcher::Excludes(sets) => {
                sets.iter().all(|set| is_static(set))
            }
            Matcher::First(set) => is_static(set),
            Matcher::Schema(_) => false,
            _ => true,
        }
    }
    filter.iter().all(|c| matcher(&c.matcher))
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    const R: Revision = Revision::V2025_11_25;

    fn scenario(yaml: &str) -> Scenario {
        crate::scenario::parse::parse_scenario("t.yaml", yaml).expect("a valid scenario")
    }

    fn known(caps: Value, tools: &[&str]) -> Known {
        let tools = tools.iter().map(|n| json!({ "name": n })).collect();
        Known::new(R, Some(caps), Some(tools))
    }

    const LOGGING: &str = "id: t/logging\ntitle: t\nspec: s\nrequires: [logging]\nsteps:\n  - initialize: {}\n  - request: { method: logging/setLevel, params: { level: info } }\n";

    const FIXTURE_TOOL: &str = "id: t/tool\ntitle: t\nspec: s\nsteps:\n  - initialize: { capabilities: { elicitation: {} } }\n  - paginate: { method: tools/list, into: tools }\n  - for_each:\n      in: tools\n      as: tool\n      where: { /name: test_image_content }\n      steps:\n        - request: { method: tools/call, params: { name: \"${tool.name}\", arguments: {} } }\n";

    #[test]
    fn an_undeclared_capability_skips_without_a_server() {
        let s = scenario(LOGGING);
        let why = known(json!({"tools": {}}), &[])
            .skip(&s, R)
            .expect("a skip");
        assert!(
            why.starts_with("the server does not declare `logging`"),
            "{why}"
        );
        assert_eq!(known(json!({"logging": {}}), &[]).skip(&s, R), None);
        // Another revision's sweep, or none at all, decides nothing.
        assert_eq!(known(json!({}), &[]).skip(&s, Revision::V2025_06_18), None);
        assert_eq!(Known::default().skip(&s, R), None);
    }

    #[test]
    fn a_loop_that_selects_no_listed_tool_skips_and_one_that_does_runs() {
        let s = scenario(FIXTURE_TOOL);
        let why = known(json!({"tools": {}}), &["echo", "add"])
            .skip(&s, R)
            .expect("a skip");
        assert!(why.contains("no element of `tools`"), "{why}");
        let with = known(json!({"tools": {}}), &["echo", "test_image_content"]);
        assert_eq!(with.skip(&s, R), None);
        // A listing the sweep did not complete decides nothing.
        assert_eq!(
            Known::new(R, Some(json!({"tools": {}})), None).skip(&s, R),
            None
        );
    }

    #[test]
    fn filters_with_variables_or_steps_before_the_loop_still_run() {
        let with_var = FIXTURE_TOOL.replace("/name: test_image_content", "/name: \"${revision}\"");
        let after_request = FIXTURE_TOOL.replace(
            "  - paginate:",
            "  - request: { method: ping }\n  - paginate:",
        );
        let own_version = LOGGING.replace(
            "initialize: {}",
            "initialize: { protocol_version: \"2025-06-18\" }",
        );
        for yaml in [with_var, after_request, own_version] {
            let s = scenario(&yaml);
            assert_eq!(known(json!({}), &["echo"]).skip(&s, R), None, "{yaml}");
        }
    }
}

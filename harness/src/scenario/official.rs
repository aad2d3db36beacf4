//! The official conformance suite's fixture (`@modelcontextprotocol/conformance`): the tool
//! names its server scenarios call, which the SDKs' "everything servers" implement.
//!
//! A server listing one of these tools is such a fixture, and the tool does what the
//! official suite documents for it (return content, log, report progress, fail as a tool
//! error, ask the client to sample or elicit): no side effects. So the scenarios in `scenarios/official/` may call exactly these
//! tools under any `--call-tools` but `none`, the way the official suite would, unless the
//! server itself annotates one `destructiveHint: true`.

use serde_json::Value;

use super::model::Scenario;

/// `--profile`: which scenarios a run keeps (its command-line spelling is in
/// `cli/values.rs`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Profile {
    /// Only the scenarios that stand for an official suite scenario (`official:` ids): what
    /// an SDK's CI ran with `@modelcontextprotocol/conformance` against its fixture server.
    OfficialFixture,
}

/// The scenarios `profile` keeps (all of them without one).
pub fn select(profile: Option<Profile>, scenarios: Vec<Scenario>) -> Vec<Scenario> {
    match profile {
        None => scenarios,
        Some(Profile::OfficialFixture) => scenarios
            .into_iter()
            .filter(|s| !s.official.is_empty())
            .collect(),
    }
}

/// Official ids whose checks mcpcheck's scenarios cover only in part, with what they leave
/// out (thirdparty/OFFICIAL.md has the detail): the reports say so beside the verdict, so a
/// pass there is never read as the whole official scenario passing.
pub const PARTIAL: &[(&str, &str)] = &[
    (
        "http-header-validation",
        "the whitespace and letter-case variants are not sent",
    ),
    (
        "elicitation-sep1330-enums",
        "the length of `enumNames` is not compared with that of `enum`",
    ),
];

/// What mcpcheck leaves out of official id `id`, if it covers it only in part.
pub fn partial(id: &str) -> Option<&'static str> {
    PARTIAL
        .iter()
        .find(|(p, _)| *p == id)
        .map(|(_, what)| *what)
}

/// The fixture tools the official-fixture scenarios call.
pub const FIXTURE_TOOLS: &[&str] = &[
    "test_simple_text",
    "test_image_content",
    "test_audio_content",
    "test_embedded_resource",
    "test_multiple_content_types",
    "test_tool_with_logging",
    "test_tool_with_progress",
    "test_error_handling",
    "test_sampling",
    "test_elicitation",
    "test_elicitation_sep1034_defaults",
    "test_elicitation_sep1330_enums",
    "test_reconnection",
    // Multi round-trip requests (2026-07-28): they ask by returning input_required results.
    "test_input_required_result_elicitation",
    "test_input_required_result_sampling",
    "test_input_required_result_list_roots",
    "test_input_required_result_request_state",
    "test_input_required_result_multiple_inputs",
    "test_input_required_result_multi_round",
    "test_input_required_result_tampered_state",
    "test_input_required_result_capabilities",
    // Needs the client's sampling capability: called without it, refused with -32021.
    "test_missing_capability",
];

/// Whether `name` is an official fixture tool that may be called whatever the policy
/// (`none` aside): `listed` is the server's `tools/list` entry for it.
pub fn callable(name: &str, listed: Option<&Value>) -> bool {
    let destructive = listed
        .and_then(|t| t.pointer("/annotations/destructiveHint"))
        .and_then(Value::as_bool)
        == Some(true);
    FIXTURE_TOOLS.contains(&name) && listed.is_some() && !destructive
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn only_listed_fixture_tools_not_marked_destructive_are_callable() {
        let plain = json!({"name": "test_simple_text"});
        assert!(callable("test_simple_text", Some(&plain)));
        assert!(
            !callable("test_simple_text", None),
            "not listed: not a fixture"
        );
        assert!(!callable("echo", Some(&json!({"name": "echo"}))));
        let marked =
            json!({"name": "test_error_handling", "annotations": {"destructiveHint": true}});
        assert!(!callable("test_error_handling", Some(&marked)));
    }

    #[test]
    fn the_official_fixture_profile_keeps_the_scenarios_naming_official_ids() {
        let all = crate::scenario::builtin::scenarios().expect("the built-in suite parses");
        let kept = select(Some(Profile::OfficialFixture), all.clone());
        assert!(kept.iter().all(|s| !s.official.is_empty()));
        let named = all.iter().filter(|s| !s.official.is_empty()).count();
        assert_eq!(kept.len(), named);
        assert!(kept.iter().any(|s| s.id == "official/tools-call-sampling"));
        assert!(kept.iter().any(|s| s.id == "lifecycle/ping-result"));
        assert_eq!(select(None, all.clone()).len(), all.len());
    }
}

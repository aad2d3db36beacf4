//! The official conformance suite's fixture (`@modelcontextprotocol/conformance`): the tool
//! names its server scenarios call, which the SDKs' "everything servers" implement.
//!
//! On that fixture each tool does what the official suite documents for it (return
//! content, log, report progress, fail as a tool error, ask the client to sample or
//! elicit): no side effects. But a server that merely shares a name is not the fixture, so
//! those tools are called without `readOnlyHint` only when the user says it is one
//! (`--profile official-fixture`, [`Profile::OfficialFixture`]); the tool-call gate
//! (`session::gate`) holds the list and the rule.

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

#[cfg(test)]
mod tests {
    use super::*;

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

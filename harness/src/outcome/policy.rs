//! Which tools mcpcheck may call: real tools have side effects, so calling them is the user's choice.

use std::collections::BTreeSet;
use std::sync::Arc;

use serde::Serialize;
use serde_json::Value;

/// Which tools a scenario may call: real tools have side effects.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum ToolPolicy {
    /// No `tools/call` at all.
    None,
    /// Only tools annotated `readOnlyHint: true`.
    #[default]
    Readonly,
    /// Every tool (except `destructiveHint: true` ones, unless allowed).
    All,
}

impl ToolPolicy {
    /// Why this policy forbids calling `tool` (its `tools/list` entry, if known), if it
    /// does: `readonly` needs `readOnlyHint: true`; `all` still skips `destructiveHint: true`.
    pub fn forbids(self, tool: Option<&Value>) -> Option<Forbidden> {
        let annotations = tool.and_then(|t| t.get("annotations"));
        let flag = |k: &str| annotations.and_then(|a| a.get(k)).and_then(Value::as_bool);
        match self {
            ToolPolicy::None => Some(Forbidden::NoCalls),
            ToolPolicy::Readonly if flag("readOnlyHint") != Some(true) => {
                Some(Forbidden::NotReadOnly)
            }
            ToolPolicy::All if flag("destructiveHint") == Some(true) => {
                Some(Forbidden::Destructive)
            }
            _ => None,
        }
    }
}

/// Why the tool policy skipped a `tools/call`: what the summary counts, and what it
/// tells the user to change.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Forbidden {
    /// `--call-tools none`: no call at all.
    NoCalls,
    /// `--call-tools readonly` and the tool is not annotated `readOnlyHint: true`.
    NotReadOnly,
    /// The tool is annotated `destructiveHint: true`, never called without user arguments.
    Destructive,
    /// One of the official conformance fixture's tools, not annotated `readOnlyHint`: its
    /// contract makes it side-effect free only on that fixture, so it is called under
    /// `readonly` only when the user says the server is one (`--profile official-fixture`).
    FixtureNotAsked,
    /// A `tools/call` whose tool cannot be told from the bytes (garbled raw text quoting a
    /// tool the policy forbids, or a name no scan can read while no call at all is allowed).
    Unreadable,
}

impl Forbidden {
    /// What forbids the call, for a sentence "... that {forbidder} forbids".
    pub fn forbidder(self) -> &'static str {
        match self {
            Forbidden::NoCalls => "--call-tools none",
            Forbidden::NotReadOnly => "--call-tools readonly (tools not annotated readOnlyHint)",
            Forbidden::Destructive => "the destructiveHint annotation",
            Forbidden::FixtureNotAsked => {
                "--call-tools readonly (official fixture tools not annotated readOnlyHint)"
            }
            Forbidden::Unreadable => "the tool-call gate (a call whose tool it cannot read)",
        }
    }

    /// What the user can do to run the skipped checks.
    pub fn remedy(self) -> &'static str {
        match self {
            Forbidden::NoCalls => {
                "run with --call-tools readonly, or --call-tools all on a test instance"
            }
            Forbidden::NotReadOnly => "run with --call-tools all on a test instance",
            Forbidden::Destructive => {
                "give such a tool its arguments with --tool-args to call it on a test instance"
            }
            Forbidden::FixtureNotAsked => {
                "run with --profile official-fixture if the server is the official conformance fixture, or --call-tools all on a test instance"
            }
            Forbidden::Unreadable => "run with --call-tools all on a test instance",
        }
    }
}

impl std::fmt::Display for Forbidden {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            Forbidden::NoCalls => "--call-tools none",
            Forbidden::NotReadOnly => "not annotated readOnlyHint (--call-tools readonly)",
            Forbidden::Destructive => "annotated destructiveHint",
            Forbidden::FixtureNotAsked => {
                "an official fixture tool not annotated readOnlyHint (--call-tools readonly without --profile official-fixture)"
            }
            Forbidden::Unreadable => "a call whose tool cannot be read from the bytes",
        })
    }
}

/// The official conformance suite's fixture tools (`@modelcontextprotocol/conformance`, the
/// tools its server scenarios call and the SDKs' "everything servers" implement). Its
/// contract makes them side-effect free, but a server that merely shares a name is not that
/// fixture: they are called without `readOnlyHint` only under [`CallGrant::official_fixture`].
pub const OFFICIAL_FIXTURE_TOOLS: &[&str] = &[
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
    // 2026-07-28 custom headers: its `region` argument is mirrored into Mcp-Param-Region.
    "test_custom_headers",
];

/// Everything the user allowed a run to call: the policy, the tools given their own
/// arguments, and whether the server is taken for the official fixture. The tool-call gate
/// of every session holds one; nothing else decides whether a `tools/call` leaves.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct CallGrant {
    /// `--call-tools`.
    pub policy: ToolPolicy,
    /// Tools the user gave arguments for (`--tool-args`): an opt-in to calling them, under
    /// any policy but `none`, `destructiveHint` included.
    pub opted_in: Arc<BTreeSet<String>>,
    /// `--profile official-fixture`: the official fixture's tools may be called under
    /// `readonly` as its contract allows.
    pub official_fixture: bool,
    /// `fuzz --allow-destructive` (with `--call-tools all`): tools annotated
    /// `destructiveHint` may be called too.
    pub allow_destructive: bool,
}

impl CallGrant {
    /// A grant of `policy` alone.
    pub fn of(policy: ToolPolicy) -> Self {
        CallGrant {
            policy,
            ..CallGrant::default()
        }
    }
}

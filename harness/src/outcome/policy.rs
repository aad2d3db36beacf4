//! Which tools mcpcheck may call: real tools have side effects, so calling them is the user's choice.

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
}

impl Forbidden {
    /// What forbids the call, for a sentence "... that {forbidder} forbids".
    pub fn forbidder(self) -> &'static str {
        match self {
            Forbidden::NoCalls => "--call-tools none",
            Forbidden::NotReadOnly => "--call-tools readonly (tools not annotated readOnlyHint)",
            Forbidden::Destructive => "the destructiveHint annotation",
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
        }
    }
}

impl std::fmt::Display for Forbidden {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            Forbidden::NoCalls => "--call-tools none",
            Forbidden::NotReadOnly => "not annotated readOnlyHint (--call-tools readonly)",
            Forbidden::Destructive => "annotated destructiveHint",
        })
    }
}

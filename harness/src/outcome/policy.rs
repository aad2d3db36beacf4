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
    pub fn forbids(self, tool: Option<&Value>) -> Option<String> {
        let annotations = tool.and_then(|t| t.get("annotations"));
        let flag = |k: &str| annotations.and_then(|a| a.get(k)).and_then(Value::as_bool);
        match self {
            ToolPolicy::None => Some("--call-tools none".into()),
            ToolPolicy::Readonly if flag("readOnlyHint") != Some(true) => {
                Some("not annotated readOnlyHint (--call-tools readonly)".into())
            }
            ToolPolicy::All if flag("destructiveHint") == Some(true) => {
                Some("annotated destructiveHint".into())
            }
            _ => None,
        }
    }
}

//! Which calls a snapshot makes, and with what arguments.
//!
//! Tools obey the same `--call-tools` policy as scenarios (real tools have side effects).
//! Arguments are synthesized from the tool's `inputSchema`: only required properties,
//! each with a deterministic value, so the same schema always yields the same call.

use serde_json::{Value, json};

use crate::outcome::ToolPolicy;
use crate::scenario::synth;

/// Why `policy` forbids calling `tool` (a `tools/list` entry), if it does: the
/// scenario executor's rule ([`ToolPolicy::forbids`]).
pub fn forbidden(policy: ToolPolicy, tool: &Value) -> Option<String> {
    policy.forbids(Some(tool)).map(|why| why.to_string())
}

/// Arguments for a tool: every required property of its input schema, synthesized as
/// scenarios synthesize them ([`crate::scenario::synth`]).
pub fn tool_arguments(input_schema: Option<&Value>) -> Value {
    match input_schema {
        Some(schema) => synth::sample_arguments(&json!({ "inputSchema": schema })),
        None => json!({}),
    }
}

/// Arguments for `prompts/get`: each required argument, as a string (prompt arguments are
/// strings); `None` for a prompt that lists no arguments.
pub fn prompt_arguments(prompt: &Value) -> Option<Value> {
    prompt.get("arguments").and_then(Value::as_array)?;
    Some(synth::required_arguments(prompt))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_required_properties_get_values() {
        let schema = json!({
            "type": "object",
            "properties": {
                "message": {"type": "string"},
                "level": {"type": "string", "enum": ["debug", "info"]},
                "n": {"type": "integer", "minimum": 3},
                "x": {"type": "number"},
                "flag": {"type": "boolean"},
                "opt": {"type": "string"}
            },
            "required": ["message", "level", "n", "x", "flag"]
        });
        assert_eq!(
            tool_arguments(Some(&schema)),
            json!({"message": "mcpcheck", "level": "debug", "n": 3, "x": 1, "flag": true})
        );
        assert_eq!(tool_arguments(None), json!({}));
    }

    #[test]
    fn the_policy_matches_the_scenario_executor() {
        let ro = json!({"annotations": {"readOnlyHint": true}});
        let destructive = json!({"annotations": {"destructiveHint": true}});
        let plain = json!({});
        assert!(forbidden(ToolPolicy::Readonly, &ro).is_none());
        assert!(forbidden(ToolPolicy::Readonly, &plain).is_some());
        assert!(forbidden(ToolPolicy::All, &plain).is_none());
        assert!(forbidden(ToolPolicy::All, &destructive).is_some());
        assert!(forbidden(ToolPolicy::None, &ro).is_some());
    }

    #[test]
    fn prompts_get_their_required_arguments() {
        let p = json!({"arguments": [{"name": "name", "required": true}, {"name": "style"}]});
        assert_eq!(prompt_arguments(&p), Some(json!({"name": "mcpcheck"})));
        assert_eq!(prompt_arguments(&json!({})), None);
    }
}

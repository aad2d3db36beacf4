//! Which calls a snapshot makes, and with what arguments.
//!
//! Tools obey the same `--call-tools` policy as scenarios (real tools have side effects).
//! Arguments are synthesized from the tool's `inputSchema`: only required properties,
//! each with a deterministic value, so the same schema always yields the same call.

use serde_json::{Map, Value, json};

use crate::scenario::exec::ToolPolicy;

/// Why `policy` forbids calling `tool` (a `tools/list` entry), if it does. Same rules as
/// the scenario executor: readonly needs `readOnlyHint: true`; all still skips
/// `destructiveHint: true`.
pub fn forbidden(policy: ToolPolicy, tool: &Value) -> Option<String> {
    let flag = |k: &str| {
        tool.get("annotations")
            .and_then(|a| a.get(k))
            .and_then(Value::as_bool)
    };
    match policy {
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

/// Arguments for a tool: every required property of its input schema, synthesized.
pub fn tool_arguments(input_schema: Option<&Value>) -> Value {
    match input_schema {
        Some(schema) => required_object(schema, 0),
        None => json!({}),
    }
}

/// Arguments for `prompts/get`: each required argument, as a string (prompt arguments are
/// strings).
pub fn prompt_arguments(prompt: &Value) -> Option<Value> {
    let args = prompt.get("arguments").and_then(Value::as_array)?;
    let mut out = Map::new();
    for a in args {
        if a.get("required").and_then(Value::as_bool) == Some(true)
            && let Some(name) = a.get("name").and_then(Value::as_str)
        {
            out.insert(name.to_owned(), json!("example"));
        }
    }
    Some(Value::Object(out))
}

/// Nesting limit for recursive schemas.
const MAX_DEPTH: usize = 8;

fn required_object(schema: &Value, depth: usize) -> Value {
    let mut out = Map::new();
    let props = schema.get("properties").and_then(Value::as_object);
    let required = schema.get("required").and_then(Value::as_array);
    for name in required.into_iter().flatten().filter_map(Value::as_str) {
        let prop = props.and_then(|p| p.get(name)).unwrap_or(&Value::Null);
        out.insert(name.to_owned(), value_for(prop, depth + 1));
    }
    Value::Object(out)
}

/// A value `schema` accepts, chosen deterministically: its `const`, `default`, first
/// `enum` or `examples` entry, else a plain value of its type.
fn value_for(schema: &Value, depth: usize) -> Value {
    if depth > MAX_DEPTH {
        return Value::Null;
    }
    for key in ["const", "default"] {
        if let Some(v) = schema.get(key) {
            return v.clone();
        }
    }
    for key in ["enum", "examples"] {
        if let Some(v) = schema
            .get(key)
            .and_then(Value::as_array)
            .and_then(|a| a.first())
        {
            return v.clone();
        }
    }
    for key in ["anyOf", "oneOf"] {
        if let Some(first) = schema
            .get(key)
            .and_then(Value::as_array)
            .and_then(|a| a.first())
        {
            return value_for(first, depth + 1);
        }
    }
    let ty = match schema.get("type") {
        Some(Value::String(t)) => t.as_str(),
        Some(Value::Array(ts)) => ts
            .iter()
            .filter_map(Value::as_str)
            .find(|t| *t != "null")
            .unwrap_or("null"),
        _ if schema.get("properties").is_some() => "object",
        _ => "string",
    };
    let bound = |k: &str| schema.get(k).and_then(Value::as_f64);
    match ty {
        "integer" => json!(
            bound("minimum").map(|m| m.ceil() as i64).unwrap_or(0).max(
                bound("exclusiveMinimum")
                    .map(|m| m.floor() as i64 + 1)
                    .unwrap_or(i64::MIN)
            )
        ),
        "number" => json!(bound("minimum").unwrap_or(0.0)),
        "boolean" => json!(false),
        "null" => Value::Null,
        "array" => {
            let min = schema.get("minItems").and_then(Value::as_u64).unwrap_or(0);
            let item = schema.get("items").unwrap_or(&Value::Null);
            Value::Array(
                (0..min.min(3))
                    .map(|_| value_for(item, depth + 1))
                    .collect(),
            )
        }
        "object" => required_object(schema, depth),
        _ => json!(string_for(schema)),
    }
}

fn string_for(schema: &Value) -> String {
    let base = match schema.get("format").and_then(Value::as_str) {
        Some("uri" | "uri-reference" | "iri") => "https://example.com/".to_owned(),
        Some("email") => "user@example.com".to_owned(),
        Some("date-time") => "2000-01-01T00:00:00Z".to_owned(),
        Some("date") => "2000-01-01".to_owned(),
        Some("uuid") => "00000000-0000-0000-0000-000000000000".to_owned(),
        _ => "example".to_owned(),
    };
    let min = schema.get("minLength").and_then(Value::as_u64).unwrap_or(0) as usize;
    if base.len() >= min {
        base
    } else {
        format!("{base}{}", "x".repeat(min - base.len()))
    }
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
            json!({"message": "example", "level": "debug", "n": 3, "x": 0.0, "flag": false})
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
        assert_eq!(prompt_arguments(&p), Some(json!({"name": "example"})));
        assert_eq!(prompt_arguments(&json!({})), None);
    }
}

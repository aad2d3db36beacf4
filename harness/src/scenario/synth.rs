//! Argument synthesis: valid arguments for a tool or a prompt the scenario only knows by
//! what the server listed, so that "call every tool" and "get every prompt" exercise the
//! success path instead of the invalid-arguments path.
//!
//! Used through template filters: `${tool|sample_arguments}` (from the tool's
//! `inputSchema`) and `${prompt|required_arguments}` (from the prompt's `arguments`);
//! `${tools|mcp_param_calls}` builds `Mcp-Param-*` calls (see `scenario::mcp_param`).

use serde_json::{Map, Value, json};

/// The filters a `${...|filter}` reference may name.
pub const FILTERS: &[&str] = &[
    "sample_arguments",
    "required_arguments",
    "mcp_param_calls",
    "first_key",
    "repeat:BYTES",
];

/// The most bytes `repeat:BYTES` builds: large requests, not memory exhaustion.
pub const MAX_REPEAT: usize = 64 * 1024 * 1024;

/// Whether `filter` is one of [`FILTERS`]: a name, or `repeat:` with a byte count of at
/// most [`MAX_REPEAT`]. `Err` says what is wrong with a `repeat:` count.
pub fn known_filter(filter: &str) -> Result<bool, String> {
    match filter.strip_prefix("repeat:") {
        Some(n) => repeat_len(n).map(|_| true),
        None => Ok(FILTERS[..FILTERS.len() - 1].contains(&filter)),
    }
}

fn repeat_len(n: &str) -> Result<usize, String> {
    match n.trim().parse::<usize>() {
        Ok(len) if (1..=MAX_REPEAT).contains(&len) => Ok(len),
        _ => Err(format!(
            "`repeat:{n}` needs a byte count from 1 to {MAX_REPEAT}"
        )),
    }
}

/// The value's text repeated, then cut, to exactly `len` bytes (at a char boundary at or
/// below it; a value with no text gives `x`s).
fn repeat(value: &Value, len: usize) -> Value {
    let unit = match value {
        Value::String(s) if !s.is_empty() => s.clone(),
        Value::String(_) => "x".to_owned(),
        other => other.to_string(),
    };
    let mut out = unit.repeat(len / unit.len() + 1);
    let mut cut = len;
    while !out.is_char_boundary(cut) {
        cut -= 1;
    }
    out.truncate(cut);
    Value::String(out)
}

/// The first member name of an object, in the order the server wrote it: the key a
/// server chose for its first input request (`${first/result/inputRequests|first_key}`).
fn first_key(value: &Value) -> Result<Value, String> {
    match value {
        Value::Object(o) => o
            .keys()
            .next()
            .map(|k| Value::String(k.clone()))
            .ok_or_else(|| "`first_key` of an empty object".to_owned()),
        other => Err(format!(
            "`first_key` needs an object, not {}",
            crate::protocol::jsonrpc::type_name(other)
        )),
    }
}

/// The built-in variable holding `--tool-args`: tool name -> arguments object.
pub const TOOL_ARGS: &str = "tool_args";

/// Applies a filter to a value; `Err` says why it cannot. `tool_args` is the user's
/// `--tool-args` (the [`TOOL_ARGS`] variable), whose arguments win over synthesized ones.
pub fn apply(filter: &str, value: &Value, tool_args: Option<&Value>) -> Result<Value, String> {
    match filter {
        "sample_arguments" => {
            let given = value
                .get("name")
                .and_then(Value::as_str)
                .and_then(|name| tool_args?.get(name));
            Ok(given.cloned().unwrap_or_else(|| sample_arguments(value)))
        }
        "required_arguments" => Ok(required_arguments(value)),
        "mcp_param_calls" => Ok(super::mcp_param::calls(value, tool_args, sample_arguments)),
        "first_key" => first_key(value),
        other if other.starts_with("repeat:") => {
            Ok(repeat(value, repeat_len(&other["repeat:".len()..])?))
        }
        other => Err(format!(
            "no filter `{other}` (filters: {})",
            FILTERS.join(", ")
        )),
    }
}

/// Arguments for a tool: every required property of its `inputSchema`, with a value
/// the schema accepts where one can be read off it (const, enum, default, examples,
/// type and bounds). A tool without an `inputSchema` gets `{}`.
pub fn sample_arguments(tool: &Value) -> Value {
    match tool.get("inputSchema") {
        Some(schema) => match sample(schema, 0) {
            v @ Value::Object(_) => v,
            _ => json!({}),
        },
        None => json!({}),
    }
}

/// Arguments for a prompt: each argument marked `required: true`, given a short string
/// (prompt arguments are strings in every revision).
pub fn required_arguments(prompt: &Value) -> Value {
    let mut out = Map::new();
    for arg in prompt
        .get("arguments")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
    {
        if arg.get("required").and_then(Value::as_bool) == Some(true)
            && let Some(name) = arg.get("name").and_then(Value::as_str)
        {
            out.insert(name.to_owned(), json!("mcpcheck"));
        }
    }
    Value::Object(out)
}

/// Deep enough for real tool schemas; deeper nesting gets `null`.
const MAX_DEPTH: usize = 8;

/// A value valid against `schema` as far as its keywords tell.
fn sample(schema: &Value, depth: usize) -> Value {
    let Some(s) = schema.as_object() else {
        return Value::Null;
    };
    if depth > MAX_DEPTH {
        return Value::Null;
    }
    if let Some(v) = given(s) {
        return v.clone();
    }
    for key in ["anyOf", "oneOf"] {
        if let Some(first) = s.get(key).and_then(Value::as_array).and_then(|a| a.first()) {
            return sample(first, depth + 1);
        }
    }
    if let Some(all) = s.get("allOf").and_then(Value::as_array) {
        let mut merged = Map::new();
        for part in all {
            if let Value::Object(o) = sample(part, depth + 1) {
                merged.extend(o);
            }
        }
        return Value::Object(merged);
    }
    let ty = match s.get("type") {
        Some(Value::String(t)) => t.as_str(),
        Some(Value::Array(types)) => types
            .iter()
            .filter_map(Value::as_str)
            .find(|t| *t != "null")
            .unwrap_or("null"),
        _ if s.contains_key("properties") => "object",
        _ => "string",
    };
    match ty {
        "object" => sample_object(s, depth),
        "array" => {
            let n = s
                .get("minItems")
                .and_then(Value::as_u64)
                .unwrap_or(0)
                .min(8);
            let item = s
                .get("items")
                .map_or(json!("mcpcheck"), |i| sample(i, depth + 1));
            Value::Array(vec![item; n as usize])
        }
        "integer" | "number" => sample_number(s, ty == "integer"),
        "boolean" => json!(true),
        "null" => Value::Null,
        _ => sample_string(s),
    }
}

/// A value the schema names itself: its `const`, first `enum` value, `default` or first
/// example.
fn given(s: &Map<String, Value>) -> Option<&Value> {
    let first = |k: &str| s.get(k).and_then(Value::as_array).and_then(|e| e.first());
    s.get("const")
        .or_else(|| first("enum"))
        .or_else(|| s.get("default"))
        .or_else(|| first("examples"))
}

/// An object with its required properties, each sampled from its own schema.
fn sample_object(s: &Map<String, Value>, depth: usize) -> Value {
    let props = s.get("properties").and_then(Value::as_object);
    let mut out = Map::new();
    for name in s
        .get("required")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
        .filter_map(Value::as_str)
    {
        let v = props
            .and_then(|p| p.get(name))
            .map(|p| sample(p, depth + 1))
            .unwrap_or_else(|| json!("mcpcheck"));
        out.insert(name.to_owned(), v);
    }
    Value::Object(out)
}

/// A number within the schema's bounds (1 when it has none).
fn sample_number(s: &Map<String, Value>, integer: bool) -> Value {
    let bound = |k: &str| s.get(k).and_then(Value::as_f64);
    let low = bound("minimum").or_else(|| bound("exclusiveMinimum").map(|m| m.floor() + 1.0));
    let high = bound("maximum").or_else(|| bound("exclusiveMaximum").map(|m| m.ceil() - 1.0));
    let n = match (low, high) {
        (Some(l), _) => l.ceil(),
        (None, Some(h)) => h.floor().min(1.0),
        (None, None) => 1.0,
    };
    if integer || n.fract() == 0.0 {
        json!(n as i64)
    } else {
        json!(n)
    }
}

/// A string of the schema's `format`, padded or cut to its length bounds.
fn sample_string(s: &Map<String, Value>) -> Value {
    let min = s.get("minLength").and_then(Value::as_u64).unwrap_or(0) as usize;
    let mut text = match s.get("format").and_then(Value::as_str) {
        Some("uri" | "uri-reference" | "iri" | "url") => "https://example.com/".to_owned(),
        Some("email") => "user@example.com".to_owned(),
        Some("date-time") => "2000-01-01T00:00:00Z".to_owned(),
        Some("date") => "2000-01-01".to_owned(),
        Some("time") => "00:00:00Z".to_owned(),
        Some("uuid") => "00000000-0000-0000-0000-000000000000".to_owned(),
        _ => "mcpcheck".to_owned(),
    };
    while text.len() < min {
        text.push('x');
    }
    if let Some(max) = s.get("maxLength").and_then(Value::as_u64) {
        text.truncate(max as usize);
    }
    json!(text)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn repeat_builds_exactly_the_bytes_asked_for() {
        let v = apply("repeat:1048576", &json!("2025-11-25"), None).unwrap();
        assert_eq!(v.as_str().unwrap().len(), 1_048_576);
        assert!(v.as_str().unwrap().starts_with("2025-11-252025"));
        let multibyte = apply("repeat:5", &json!("é"), None).unwrap();
        assert_eq!(multibyte, json!("éé"));
        assert_eq!(known_filter("repeat:10"), Ok(true));
        assert_eq!(known_filter("sample_arguments"), Ok(true));
        assert_eq!(known_filter("repeat"), Ok(false));
        assert!(known_filter("repeat:0").is_err());
        assert!(known_filter("repeat:999999999999").is_err());
    }

    fn validates(schema: &Value, v: &Value) -> bool {
        jsonschema::is_valid(schema, v)
    }

    #[test]
    fn required_properties_get_values_their_schemas_accept() {
        let schema = json!({
            "type": "object",
            "properties": {
                "message": {"type": "string", "minLength": 12},
                "count": {"type": "integer", "minimum": 3, "maximum": 9},
                "ratio": {"type": "number", "exclusiveMinimum": 0.5},
                "mode": {"type": "string", "enum": ["fast", "slow"]},
                "tags": {"type": "array", "items": {"type": "string"}, "minItems": 2},
                "nested": {"type": "object", "properties": {"on": {"type": "boolean"}}, "required": ["on"]},
                "optional": {"type": "string"}
            },
            "required": ["message", "count", "ratio", "mode", "tags", "nested"]
        });
        let args = sample_arguments(&json!({"name": "t", "inputSchema": schema}));
        let dated = json!({"type": "object", "required": ["when"],
            "properties": {"when": {"type": "string", "format": "date-time"}}});
        assert_eq!(
            sample_arguments(&json!({"inputSchema": dated}))["when"],
            "2000-01-01T00:00:00Z"
        );
        assert!(validates(&schema, &args), "{args}");
        assert!(
            args.get("optional").is_none(),
            "only required properties: {args}"
        );
        assert_eq!(args["mode"], "fast");
        assert_eq!(args["count"], 3);
    }

    #[test]
    fn tools_without_schema_or_required_properties_get_an_empty_object() {
        assert_eq!(sample_arguments(&json!({"name": "t"})), json!({}));
        assert_eq!(
            sample_arguments(&json!({"inputSchema": {"type": "object"}})),
            json!({})
        );
    }

    #[test]
    fn prompts_get_their_required_arguments_only() {
        let prompt = json!({"name": "greet", "arguments": [
            {"name": "who", "required": true},
            {"name": "tone"},
            {"name": "lang", "required": false}
        ]});
        assert_eq!(required_arguments(&prompt), json!({"who": "mcpcheck"}));
        assert_eq!(required_arguments(&json!({"name": "hello"})), json!({}));
    }

    #[test]
    fn first_key_is_the_first_member_the_server_wrote() {
        let object: Value = serde_json::from_str(r#"{"zeta": 1, "alpha": 2}"#).unwrap();
        assert_eq!(apply("first_key", &object, None), Ok(json!("zeta")));
        assert!(
            apply("first_key", &json!({}), None)
                .unwrap_err()
                .contains("empty")
        );
        assert!(
            apply("first_key", &json!([1]), None)
                .unwrap_err()
                .contains("array")
        );
        assert_eq!(known_filter("first_key"), Ok(true));
    }

    #[test]
    fn unknown_filters_are_named() {
        assert!(
            apply("nope", &json!({}), None)
                .unwrap_err()
                .contains("sample_arguments")
        );
    }

    #[test]
    fn user_given_tool_arguments_win() {
        let tool_args = json!({"echo": {"message": "from the user"}});
        let given = Some(&tool_args);
        let tool =
            json!({"name": "echo", "inputSchema": {"type": "object", "required": ["message"]}});
        assert_eq!(
            apply("sample_arguments", &tool, given).unwrap(),
            json!({"message": "from the user"})
        );
        let other = json!({"name": "add", "inputSchema": {"type": "object"}});
        assert_eq!(apply("sample_arguments", &other, given).unwrap(), json!({}));
    }
}

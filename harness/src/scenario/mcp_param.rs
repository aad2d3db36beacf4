//! `Mcp-Param-*` calls (2026-07-28 basic/transports/streamable-http#custom-headers-from-tool-parameters):
//! for each listed tool with an `x-mcp-header` annotation on a top-level string property,
//! a `tools/call` a scenario can send by hand in an `http` step, with the headers a
//! conforming client sends and the variants a server must reject. Used through the filter
//! `mcp_param_calls` on a list of tools (`for_each: { in: tools|mcp_param_calls, ... }`).
//!
//! One element: `name` (the tool), `property` and `header` (the annotated property and its
//! full header name), `arguments` (sampled arguments with [`VALUE`] in the property), and
//! header objects: `headers` (Mcp-Method, Mcp-Name and every `Mcp-Param-*` the arguments
//! call for, plainly encoded), `headers_base64` (the property's header Base64-encoded, as
//! the sentinel form allows for any value), `headers_mismatched` (the property's header
//! with another value), `headers_bad_base64` (the sentinel around invalid Base64) and
//! `headers_missing` (without it).

use base64::Engine as _;
use serde_json::{Map, Value, json};

use crate::check::x_mcp_header;
use crate::transport::http::{METHOD_HEADER, NAME_HEADER, header_value};

/// The value put in the chosen property.
pub const VALUE: &str = "mcpcheck-param";
/// The value its header carries in `headers_mismatched`.
pub const OTHER_VALUE: &str = "mcpcheck-other";
/// The value its header carries in `headers_bad_base64`: the sentinel around characters
/// outside the Base64 alphabet.
pub const BAD_BASE64: &str = "=?base64?bWNw!!!Y2hlY2s=?=";

/// The calls for every tool of `tools` that has an annotated top-level string property
/// (the first one; tools whose annotations break the rules are left out, as clients drop
/// them). `tool_args` (`--tool-args`) give a tool's other arguments, else `sample` makes them
/// from the tool (`synth::sample_arguments`).
pub fn calls(tools: &Value, tool_args: Option<&Value>, sample: fn(&Value) -> Value) -> Value {
    let calls = tools
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(|tool| call(tool, tool_args, sample))
        .collect();
    Value::Array(calls)
}

fn call(tool: &Value, tool_args: Option<&Value>, sample: fn(&Value) -> Value) -> Option<Value> {
    let name = tool.get("name")?.as_str()?;
    let schema = tool.get("inputSchema")?;
    if !x_mcp_header::problems(schema).is_empty() {
        return None;
    }
    let found = x_mcp_header::annotations(schema);
    let chosen = found.iter().find(|a| {
        a.path.as_ref().is_some_and(|p| p.len() == 1)
            && a.schema.get("type").and_then(Value::as_str) == Some("string")
    })?;
    let property = chosen.path.as_ref()?[0].clone();
    let header = format!("Mcp-Param-{}", chosen.header.as_str()?);
    let mut arguments = tool_args
        .and_then(|a| a.get(name))
        .cloned()
        .unwrap_or_else(|| sample(tool));
    arguments
        .as_object_mut()?
        .insert(property.clone(), json!(VALUE));
    let mut headers = Map::new();
    headers.insert(METHOD_HEADER.into(), json!("tools/call"));
    headers.insert(NAME_HEADER.into(), json!(header_value(name)));
    for a in &found {
        let Some(path) = &a.path else { continue };
        let value = path.iter().try_fold(&arguments, |v, key| v.get(key));
        if let (Some(text), Some(h)) = (value.and_then(as_header_text), a.header.as_str()) {
            headers.insert(format!("Mcp-Param-{h}"), json!(header_value(&text)));
        }
    }
    let with = |value: Value| {
        let mut h = headers.clone();
        h.insert(header.clone(), value);
        Value::Object(h)
    };
    let encoded = base64::engine::general_purpose::STANDARD.encode(VALUE);
    let mut missing = headers.clone();
    missing.remove(&header);
    Some(json!({
        "name": name,
        "property": property,
        "header": header,
        "arguments": arguments,
        "headers": Value::Object(headers.clone()),
        "headers_base64": with(json!(format!("=?base64?{encoded}?="))),
        "headers_mismatched": with(json!(OTHER_VALUE)),
        "headers_bad_base64": with(json!(BAD_BASE64)),
        "headers_missing": Value::Object(missing),
    }))
}

/// A value as its header carries it (#value-encoding "Type conversion"); `None` for a null
/// (the header is left out) or a value no annotation may be on.
fn as_header_text(value: &Value) -> Option<String> {
    match value {
        Value::String(s) => Some(s.clone()),
        Value::Bool(b) => Some(b.to_string()),
        Value::Number(n) if n.is_i64() || n.is_u64() => Some(n.to_string()),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_call_carries_every_mirrored_argument_and_the_variants_differ_in_one_header() {
        let tools = json!([
            {"name": "plain", "inputSchema": {"type": "object"}},
            {"name": "bad", "inputSchema": {"type": "object", "properties": {
                "n": {"type": "number", "x-mcp-header": "N"}}}},
            {"name": "route", "inputSchema": {"type": "object", "properties": {
                "count": {"type": "integer", "x-mcp-header": "Count", "default": 3},
                "region": {"type": "string", "x-mcp-header": "Region"},
                "flag": {"type": "boolean", "x-mcp-header": "Flag"}},
                "required": ["count"]}}
        ]);
        let sample = |_: &Value| json!({"count": 3});
        let calls = calls(&tools, None, sample);
        let calls = calls.as_array().unwrap();
        assert_eq!(calls.len(), 1, "{calls:?}");
        let c = &calls[0];
        assert_eq!(c["name"], "route");
        assert_eq!(c["header"], "Mcp-Param-Region");
        assert_eq!(c["arguments"], json!({"count": 3, "region": VALUE}));
        assert_eq!(
            c["headers"],
            json!({"mcp-method": "tools/call", "mcp-name": "route",
                   "Mcp-Param-Count": "3", "Mcp-Param-Region": VALUE})
        );
        assert_eq!(
            c["headers_base64"]["Mcp-Param-Region"],
            "=?base64?bWNwY2hlY2stcGFyYW0=?="
        );
        assert_eq!(c["headers_mismatched"]["Mcp-Param-Region"], OTHER_VALUE);
        assert_eq!(c["headers_bad_base64"]["Mcp-Param-Region"], BAD_BASE64);
        assert_eq!(c["headers_missing"].get("Mcp-Param-Region"), None);
        assert_eq!(c["headers_missing"]["Mcp-Param-Count"], "3");
    }
}

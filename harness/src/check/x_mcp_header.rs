//! `x-mcp-header` on tool input schemas (2026-07-28 server/tools#x-mcp-header and
//! basic/transports/streamable-http#schema-extension): a property may name an HTTP header
//! `Mcp-Param-{name}` that clients mirror its value into. The spec constrains the annotation
//! (every constraint a MUST; a tool breaking one is invalid and clients drop it): a
//! non-empty RFC 9110 token, unique among the schema's annotations ignoring case, only on a
//! property of type integer, string or boolean, and only where a chain of `properties` keys
//! from the schema root reaches it. Pure: a `tools/list` result in, findings out.

use serde_json::Value;

use super::{Finding, rules};
use crate::protocol::Revision;

/// The annotation's key in a property schema.
pub const KEY: &str = "x-mcp-header";

/// One `x-mcp-header` annotation found in an input schema.
#[derive(Clone, Debug, PartialEq)]
pub struct Annotation<'a> {
    /// JSON pointer (inside the input schema) of the schema that carries the annotation.
    pub at: String,
    /// The argument path the annotation mirrors: the `properties` keys from the root, or
    /// `None` when something other than a `properties` chain leads to it.
    pub path: Option<Vec<String>>,
    /// The annotation's value as written.
    pub header: &'a Value,
    /// The schema that carries it.
    pub schema: &'a Value,
}

/// Every annotation in `schema`, in document order. Values of keywords that hold data,
/// not schemas (`const`, `enum`, `default`, `examples`), are not searched.
pub fn annotations(schema: &Value) -> Vec<Annotation<'_>> {
    let mut out = Vec::new();
    walk(schema, String::new(), Some(Vec::new()), &mut out);
    out
}

fn walk<'a>(
    schema: &'a Value,
    at: String,
    path: Option<Vec<String>>,
    out: &mut Vec<Annotation<'a>>,
) {
    match schema {
        Value::Object(map) => {
            if let Some(header) = map.get(KEY) {
                // The root is the arguments object, not a parameter.
                let path = path.clone().filter(|p| !p.is_empty());
                out.push(Annotation {
                    at: at.clone(),
                    path,
                    header,
                    schema,
                });
            }
            for (key, value) in map {
                let here = format!("{at}/{}", crate::protocol::pointer_token(key));
                match key.as_str() {
                    KEY | "const" | "enum" | "default" | "examples" => {}
                    "properties" => {
                        if let Value::Object(props) = value {
                            for (name, sub) in props {
                                let chain = path.clone().map(|mut p| {
                                    p.push(name.clone());
                                    p
                                });
                                walk(
                                    sub,
                                    format!("{here}/{}", crate::protocol::pointer_token(name)),
                                    chain,
                                    out,
                                );
                            }
                        }
                    }
                    _ => walk(value, here, None, out),
                }
            }
        }
        Value::Array(items) => {
            for (i, item) in items.iter().enumerate() {
                walk(item, format!("{at}/{i}"), None, out);
            }
        }
        _ => {}
    }
}

/// RFC 9110 section 5.6.2 `tchar`.
fn is_tchar(c: char) -> bool {
    c.is_ascii_alphanumeric() || "!#$%&'*+-.^_`|~".contains(c)
}

/// The types an annotated property may have: integer, string, boolean (and `null` beside
/// one of them: a null value just leaves the header out).
fn primitive_type(schema: &Value) -> Result<(), String> {
    let allowed = ["integer", "string", "boolean"];
    match schema.get("type") {
        Some(Value::String(t)) if allowed.contains(&t.as_str()) => Ok(()),
        Some(Value::Array(types))
            if types.iter().all(|t| {
                t.as_str()
                    .is_some_and(|t| t == "null" || allowed.contains(&t))
            }) && types.iter().any(|t| t != "null") =>
        {
            Ok(())
        }
        Some(other) => Err(format!("a property of type {other}")),
        None => Err("a property that declares no `type`".into()),
    }
}

/// The broken constraints of one tool's input schema, as (pointer inside the schema,
/// message) pairs.
pub fn problems(schema: &Value) -> Vec<(String, String)> {
    let found = annotations(schema);
    let mut out = Vec::new();
    let mut seen: Vec<String> = Vec::new();
    for a in &found {
        let at = format!("{}/{KEY}", a.at);
        let Some(name) = a.header.as_str() else {
            out.push((at, format!("`{KEY}` is {}, not a string", a.header)));
            continue;
        };
        if name.is_empty() {
            out.push((at.clone(), format!("`{KEY}` is empty")));
        } else if let Some(bad) = name.chars().find(|c| !is_tchar(*c)) {
            out.push((
                at.clone(),
                format!("`{KEY}` {name:?} has {bad:?}, which is not an HTTP token character"),
            ));
        }
        let folded = name.to_ascii_lowercase();
        if seen.contains(&folded) {
            out.push((
                at.clone(),
                format!(
                    "`{KEY}` {name:?} repeats another annotation of the schema (ignoring case)"
                ),
            ));
        } else {
            seen.push(folded);
        }
        if let Err(what) = primitive_type(a.schema) {
            out.push((
                at.clone(),
                format!("`{KEY}` {name:?} is on {what} (only integer, string or boolean)"),
            ));
        }
        if a.path.is_none() {
            out.push((
                at,
                format!(
                    "`{KEY}` {name:?} is not on a property reached from the root by `properties` keys alone"
                ),
            ));
        }
    }
    out
}

/// Checks every tool of a `tools/list` result found at `base` (`.../result`).
pub fn tool_list(result: &Value, revision: Revision, base: &str) -> Vec<Finding> {
    let Some(tools) = result.get("tools").and_then(Value::as_array) else {
        return Vec::new();
    };
    let mut findings = Vec::new();
    for (i, tool) in tools.iter().enumerate() {
        let Some(schema) = tool.get("inputSchema") else {
            continue;
        };
        let name = tool.get("name").and_then(Value::as_str).unwrap_or("?");
        for (at, message) in problems(schema) {
            findings.push(
                Finding::new(
                    &rules::TOOLS_X_MCP_HEADER,
                    revision,
                    format!("tool `{name}`: {message}"),
                )
                .pointer(format!("{base}/tools/{i}/inputSchema{at}"))
                .expected(
                    "a non-empty HTTP token, unique ignoring case, on an integer, string or boolean property reached by `properties` keys",
                ),
            );
        }
    }
    findings
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn messages(schema: Value) -> Vec<String> {
        problems(&schema).into_iter().map(|(_, m)| m).collect()
    }

    #[test]
    fn a_valid_annotation_passes_and_reports_its_path() {
        let schema = json!({"type": "object", "properties": {
            "region": {"type": "string", "x-mcp-header": "Region"},
            "opts": {"type": "object", "properties": {"n": {"type": ["integer", "null"], "x-mcp-header": "N"}}},
            "enum-data": {"type": "string", "enum": [{"x-mcp-header": "not an annotation"}]}
        }});
        assert!(messages(schema.clone()).is_empty());
        let found = annotations(&schema);
        assert_eq!(found.len(), 2);
        let paths: Vec<_> = found.iter().map(|a| a.path.clone()).collect();
        assert!(paths.contains(&Some(vec!["region".to_owned()])));
        assert!(paths.contains(&Some(vec!["opts".to_owned(), "n".to_owned()])));
    }

    #[test]
    fn each_constraint_is_reported() {
        let bad = |prop: Value| json!({"type": "object", "properties": {"p": prop}});
        for (prop, says) in [
            (json!({"type": "string", "x-mcp-header": ""}), "empty"),
            (
                json!({"type": "string", "x-mcp-header": "My Region"}),
                "token",
            ),
            (json!({"type": "string", "x-mcp-header": "Région"}), "token"),
            (json!({"type": "string", "x-mcp-header": "A\r\nB"}), "token"),
            (
                json!({"type": "number", "x-mcp-header": "N"}),
                "only integer",
            ),
            (
                json!({"type": "object", "x-mcp-header": "O"}),
                "only integer",
            ),
            (json!({"x-mcp-header": "Untyped"}), "no `type`"),
            (json!({"type": "string", "x-mcp-header": 7}), "not a string"),
            (
                json!({"type": "array", "items": {"type": "string", "x-mcp-header": "I"}}),
                "`properties` keys",
            ),
        ] {
            let got = messages(bad(prop.clone()));
            assert!(
                got.iter().any(|m| m.contains(says)),
                "{prop}: {got:?} should say {says}"
            );
        }
        let twice = json!({"type": "object", "properties": {
            "a": {"type": "string", "x-mcp-header": "MyField"},
            "b": {"type": "string", "x-mcp-header": "myfield"}}});
        assert!(messages(twice)[0].contains("repeats"));
        let composed = json!({"type": "object", "anyOf": [{"properties": {
            "a": {"type": "string", "x-mcp-header": "A"}}}]});
        assert!(messages(composed)[0].contains("`properties` keys"));
        let root = json!({"type": "object", "x-mcp-header": "Root"});
        assert!(
            messages(root)
                .iter()
                .any(|m| m.contains("`properties` keys"))
        );
    }

    #[test]
    fn findings_point_into_the_listed_tool() {
        let result = json!({"tools": [
            {"name": "ok", "inputSchema": {"type": "object"}},
            {"name": "bad", "inputSchema": {"type": "object", "properties": {"a/b": {"type": "number", "x-mcp-header": "A"}}}}
        ]});
        let f = tool_list(&result, Revision::V2026_07_28, "/result");
        assert_eq!(f.len(), 1);
        assert_eq!(
            f[0].pointer.as_deref(),
            Some("/result/tools/1/inputSchema/properties/a~1b/x-mcp-header")
        );
        assert_eq!(f[0].rule, "tools.x-mcp-header-valid");
    }
}

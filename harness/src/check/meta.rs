//! `_meta` key names (basic#meta, from 2025-06-18): "valid `_meta` key names have two
//! segments: an optional prefix, and a name". The prefix, if any, "MUST be a series of
//! labels separated by dots, followed by a slash", each label starting with a letter and
//! ending with a letter or digit, with letters, digits and hyphens between; the name,
//! "unless empty, MUST begin and end with an alphanumeric character" and may hold hyphens,
//! underscores, dots and alphanumerics between. 2024-11-05 and 2025-03-26 state no format.
//! Pure: a message in, findings out.

use serde_json::Value;

use super::{Finding, rules};
use crate::protocol::Revision;

/// Members whose values are not MCP metadata though they may hold a `_meta` key: JSON
/// Schemas (a property may be called `_meta`), a tool's own output and arguments.
const NOT_METADATA: &[&str] = &[
    "inputSchema",
    "outputSchema",
    "requestedSchema",
    "structuredContent",
    "arguments",
];

/// Every `_meta` object in `message` (found at `base` in its frame) whose key names break
/// the format, one finding per key.
pub fn key_names(message: &Value, revision: Revision, base: &str) -> Vec<Finding> {
    if revision < Revision::V2025_06_18 {
        return Vec::new();
    }
    let mut findings = Vec::new();
    walk(message, base, revision, &mut findings);
    findings
}

fn walk(value: &Value, path: &str, revision: Revision, findings: &mut Vec<Finding>) {
    match value {
        Value::Object(map) => {
            for (key, member) in map {
                let here = format!("{path}/{}", escape(key));
                if key == "_meta"
                    && let Value::Object(meta) = member
                {
                    for name in meta.keys() {
                        if let Some(why) = key_problem(name) {
                            findings.push(finding(name, &why, &here, revision));
                        }
                    }
                }
                if !NOT_METADATA.contains(&key.as_str()) {
                    walk(member, &here, revision, findings);
                }
            }
        }
        Value::Array(items) => {
            for (i, item) in items.iter().enumerate() {
                walk(item, &format!("{path}/{i}"), revision, findings);
            }
        }
        _ => {}
    }
}

fn finding(key: &str, why: &str, at: &str, revision: Revision) -> Finding {
    Finding::new(
        &rules::META_KEY_NAME,
        revision,
        format!("`_meta` key {key:?}: {why}"),
    )
    .pointer(format!("{at}/{}", escape(key)))
    .expected(
        "an optional prefix of dot-separated labels and a slash, then a name that begins and \
         ends with a letter or digit (hyphens, underscores and dots between): `com.example/name`",
    )
}

/// A JSON Pointer token for `key`.
fn escape(key: &str) -> String {
    key.replace('~', "~0").replace('/', "~1")
}

/// Why `key` is not a valid `_meta` key name, if it is not.
fn key_problem(key: &str) -> Option<String> {
    let (prefix, name) = match key.rsplit_once('/') {
        Some((prefix, name)) => (Some(prefix), name),
        None => (None, key),
    };
    if let Some(label) = prefix.and_then(|p| p.split('.').find(|l| !valid_label(l))) {
        return Some(format!(
            "the prefix label {label:?} does not start with a letter, end with a letter or \
             digit and hold only letters, digits and hyphens"
        ));
    }
    let edge = |c: Option<char>| c.is_some_and(|c| c.is_ascii_alphanumeric());
    let inner = |c: char| c.is_ascii_alphanumeric() || matches!(c, '-' | '_' | '.');
    if name.is_empty() {
        return None;
    }
    if !edge(name.chars().next()) || !edge(name.chars().last()) {
        return Some(format!(
            "the name {name:?} does not begin and end with a letter or digit"
        ));
    }
    if let Some(c) = name.chars().find(|c| !inner(*c)) {
        return Some(format!(
            "the name {name:?} holds {c:?}, where only letters, digits, hyphens, underscores and dots may be"
        ));
    }
    None
}

/// A prefix label: a letter first, a letter or digit last, letters, digits and hyphens
/// between.
fn valid_label(label: &str) -> bool {
    let mut chars = label.chars();
    let first = chars.next().is_some_and(|c| c.is_ascii_alphabetic());
    let last = label
        .chars()
        .last()
        .is_some_and(|c| c.is_ascii_alphanumeric());
    first && last && label.chars().all(|c| c.is_ascii_alphanumeric() || c == '-')
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn valid_names_pass() {
        for key in [
            "progressToken",
            "io.modelcontextprotocol/serverInfo",
            "com.example-corp/trace.id",
            "com.example/",
            "x",
            "a_b-c.d9",
            "fastmcp",
        ] {
            assert_eq!(key_problem(key), None, "{key}");
        }
    }

    #[test]
    fn invalid_names_and_prefixes_are_named() {
        for key in [
            "_fastmcp",
            "trailing-",
            "has space",
            "colon:name",
            "/name",
            "1com.example/name",
            "com..example/name",
            "com.example-/name",
            "a/b/c",
        ] {
            assert!(key_problem(key).is_some(), "{key}");
        }
    }

    #[test]
    fn every_meta_object_is_checked_but_schemas_and_tool_data_are_not() {
        let message = json!({
            "jsonrpc": "2.0", "id": 1,
            "result": {
                "_meta": { "ok": 1 },
                "tools": [{
                    "name": "t",
                    "_meta": { "_private": true },
                    "inputSchema": { "properties": { "_meta": { "_x": 1 } } }
                }],
                "structuredContent": { "_meta": { "_y": 1 } }
            }
        });
        let f = key_names(&message, Revision::V2025_11_25, "");
        assert_eq!(f.len(), 1, "{f:?}");
        assert_eq!(
            f[0].pointer.as_deref(),
            Some("/result/tools/0/_meta/_private")
        );
        assert_eq!(f[0].severity, crate::outcome::Severity::Failure);
        assert!(key_names(&message, Revision::V2025_03_26, "").is_empty());
    }
}

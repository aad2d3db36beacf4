//! Canonical form and redaction: what makes two captures of an unchanged server compare
//! equal byte for byte.
//!
//! Canonical form sorts object keys and the arrays that are sets (a JSON Schema's
//! `required` and `type` lists). Every other array keeps the server's order, because order
//! can mean something there (content items, prompt arguments, enum choices). The
//! top-level lists (tools, resources, templates, prompts) are sorted by their identity by
//! the capture, since MCP gives their order no meaning.
//!
//! Redaction replaces volatile values with placeholders: the server's version, anything
//! that looks like a UUID or an RFC 3339 timestamp, scalar values of id-like keys, and any
//! value at a JSON pointer the user marks volatile (`*` matches any one segment).

use std::sync::LazyLock;

use regex::Regex;
use serde_json::{Map, Value};

/// Placeholder for a value at a user-marked volatile pointer.
pub const VOLATILE: &str = "[volatile]";
/// Placeholder for the server's version.
pub const VERSION: &str = "[version]";
/// Placeholder for the value of an id-like key.
pub const ID: &str = "[id]";

static UUID: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r"(?i)\b[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}\b")
        .expect("valid regex")
});
static TIMESTAMP: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r"\b\d{4}-\d{2}-\d{2}[Tt ]\d{2}:\d{2}:\d{2}(\.\d+)?([Zz]|[+-]\d{2}:?\d{2})?\b")
        .expect("valid regex")
});

/// Sorts object keys everywhere, and the set-valued arrays of JSON Schemas.
pub fn canonicalize(value: &Value) -> Value {
    match value {
        Value::Object(map) => {
            let mut keys: Vec<&String> = map.keys().collect();
            keys.sort();
            let mut out = Map::new();
            for k in keys {
                let mut v = canonicalize(&map[k]);
                if matches!(k.as_str(), "required" | "type")
                    && let Value::Array(items) = &mut v
                    && items.iter().all(Value::is_string)
                {
                    items.sort_by(|a, b| a.as_str().cmp(&b.as_str()));
                }
                out.insert(k.clone(), v);
            }
            Value::Object(out)
        }
        Value::Array(items) => Value::Array(items.iter().map(canonicalize).collect()),
        other => other.clone(),
    }
}

/// A JSON pointer pattern: segments, where `*` matches any one segment.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct PointerPattern {
    text: String,
    segments: Vec<String>,
}

impl PointerPattern {
    /// Parses `/a/*/b` (RFC 6901 escapes `~0`, `~1` apply). The empty pattern is rejected:
    /// redacting the whole document would hide every change.
    pub fn parse(text: &str) -> Result<Self, String> {
        let Some(rest) = text.strip_prefix('/') else {
            return Err(format!(
                "{text:?}: a JSON pointer starts with `/`, e.g. /tools/list/*/description"
            ));
        };
        let segments = rest
            .split('/')
            .map(|s| s.replace("~1", "/").replace("~0", "~"))
            .collect();
        Ok(PointerPattern {
            text: text.to_owned(),
            segments,
        })
    }

    /// The pattern as written.
    pub fn as_str(&self) -> &str {
        &self.text
    }

    fn matches(&self, path: &[String]) -> bool {
        self.segments.len() == path.len()
            && self
                .segments
                .iter()
                .zip(path)
                .all(|(p, s)| p == "*" || p == s)
    }
}

/// One value a redaction replaced: where (path segments from the root) and with what.
#[derive(Clone, Debug, PartialEq)]
pub struct Redacted {
    /// Path segments from the document's root.
    pub path: Vec<String>,
    /// What replaced the value.
    pub placeholder: Value,
}

/// The redaction rules of one capture.
#[derive(Clone, Debug, Default)]
pub struct Redactions {
    /// Pointers (into the whole snapshot document) whose values are volatile.
    pub volatile: Vec<PointerPattern>,
}

impl Redactions {
    /// Redacts `doc` in place and lists what it replaced, in document order.
    pub fn apply(&self, doc: &mut Value) -> Vec<Redacted> {
        let mut done = Vec::new();
        let mut path = Vec::new();
        self.walk(doc, &mut path, &mut done);
        done
    }

    fn walk(&self, v: &mut Value, path: &mut Vec<String>, done: &mut Vec<Redacted>) {
        if let Some(placeholder) = self.placeholder(v, path) {
            *v = placeholder.clone();
            done.push(Redacted {
                path: path.clone(),
                placeholder,
            });
            return;
        }
        match v {
            Value::Object(map) => {
                for (k, child) in map.iter_mut() {
                    path.push(k.clone());
                    self.walk(child, path, done);
                    path.pop();
                }
            }
            Value::Array(items) => {
                for (i, child) in items.iter_mut().enumerate() {
                    path.push(i.to_string());
                    self.walk(child, path, done);
                    path.pop();
                }
            }
            _ => {}
        }
    }

    /// What replaces `v` at `path`, if anything.
    fn placeholder(&self, v: &Value, path: &[String]) -> Option<Value> {
        if self.volatile.iter().any(|p| p.matches(path)) {
            return Some(Value::String(VOLATILE.into()));
        }
        let key = path.last().map(String::as_str).unwrap_or_default();
        let parent = path.len().checked_sub(2).map(|i| path[i].as_str());
        if key == "version" && parent == Some("serverInfo") {
            return Some(Value::String(VERSION.into()));
        }
        let scalar = matches!(v, Value::String(_) | Value::Number(_));
        if scalar && id_like(key) && !is_placeholder(v) {
            return Some(Value::String(ID.into()));
        }
        if let Value::String(s) = v {
            let r = UUID.replace_all(s, "[uuid]");
            let r = TIMESTAMP.replace_all(&r, "[timestamp]");
            if r != s.as_str() {
                return Some(Value::String(r.into_owned()));
            }
        }
        None
    }
}

/// `id`, `sessionId`, `requestId`, ...: keys whose values identify one instance, never a kind.
fn id_like(key: &str) -> bool {
    key == "id" || (key.len() > 2 && key.ends_with("Id"))
}

/// Shape placeholders (`<string>`) are already free of data.
fn is_placeholder(v: &Value) -> bool {
    v.as_str()
        .is_some_and(|s| s.starts_with('<') && s.ends_with('>'))
}

/// An insta selector for a path (`.tools[0]["a/b"]`), for `Settings::add_redaction`.
pub fn insta_selector(path: &[String], arrays: &[bool]) -> String {
    let mut s = String::new();
    for (seg, is_index) in path.iter().zip(arrays) {
        if *is_index {
            s.push_str(&format!("[{seg}]"));
        } else if !seg.is_empty()
            && seg.chars().all(|c| c.is_ascii_alphanumeric() || c == '_')
            && !seg.starts_with(|c: char| c.is_ascii_digit())
        {
            s.push('.');
            s.push_str(seg);
        } else {
            s.push_str(&format!(
                "[{}]",
                serde_json::to_string(seg).expect("strings serialize")
            ));
        }
    }
    s
}

/// For each segment of `path` in `root`, whether it indexes an array.
pub fn array_steps(root: &Value, path: &[String]) -> Vec<bool> {
    let mut out = Vec::with_capacity(path.len());
    let mut cur = Some(root);
    for seg in path {
        let is_array = matches!(cur, Some(Value::Array(_)));
        out.push(is_array);
        cur = match cur {
            Some(Value::Array(a)) => seg.parse::<usize>().ok().and_then(|i| a.get(i)),
            Some(Value::Object(m)) => m.get(seg),
            _ => None,
        };
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn canonical_form_sorts_keys_and_schema_sets_only() {
        let a = json!({"b": {"required": ["y", "x"], "enum": ["z", "a"]}, "a": [3, 1], "type": ["null", "string"]});
        let c = canonicalize(&a);
        assert_eq!(
            serde_json::to_string(&c).unwrap(),
            r#"{"a":[3,1],"b":{"enum":["z","a"],"required":["x","y"]},"type":["null","string"]}"#
        );
    }

    #[test]
    fn volatile_values_get_placeholders() {
        let mut doc = json!({
            "server": {"serverInfo": {"name": "s", "version": "1.2.3"}},
            "tools": {"list": [{"name": "t", "description": "made 2026-01-02T03:04:05Z by 123e4567-e89b-12d3-a456-426614174000"}]},
            "x": {"sessionId": "abc", "id": 7, "nested": {"id": {"type": "string"}}}
        });
        let r = Redactions {
            volatile: vec![PointerPattern::parse("/tools/list/*/name").unwrap()],
        };
        let done = r.apply(&mut doc);
        assert_eq!(doc["server"]["serverInfo"]["version"], "[version]");
        assert_eq!(doc["tools"]["list"][0]["name"], "[volatile]");
        assert_eq!(
            doc["tools"]["list"][0]["description"],
            "made [timestamp] by [uuid]"
        );
        assert_eq!(doc["x"]["sessionId"], "[id]");
        assert_eq!(doc["x"]["id"], "[id]");
        // An id-named key holding a schema is structure, not an id.
        assert_eq!(doc["x"]["nested"]["id"], json!({"type": "string"}));
        assert_eq!(done.len(), 5);
        assert!(PointerPattern::parse("tools").is_err());
    }

    #[test]
    fn selectors_follow_insta_syntax() {
        let root = json!({"list": [{"a/b": 1}]});
        let path: Vec<String> = ["list", "0", "a/b"].iter().map(|s| s.to_string()).collect();
        let arrays = array_steps(&root, &path);
        assert_eq!(insta_selector(&path, &arrays), r#".list[0]["a/b"]"#);
    }
}

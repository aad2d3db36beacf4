//! A small deterministic YAML writer for JSON values, for snapshot bodies.
//!
//! Snapshot files are reviewed as text, so the output must be byte-stable and readable:
//! block style, two-space indents, keys in the order the value holds them (the callers
//! sort them), and strings plain only when YAML cannot misread them; anything else is
//! written in double quotes with JSON escapes, which YAML's double-quoted style accepts.

use serde_json::Value;

/// Renders `value` as a YAML document body (no `---`), ending in a newline.
pub fn to_yaml(value: &Value) -> String {
    let mut out = String::new();
    if is_inline(value) {
        out.push_str(&scalar(value));
        out.push('\n');
    } else {
        block(value, 0, &mut out);
    }
    out
}

/// Scalars and empty collections go on the line of their key or dash.
fn is_inline(v: &Value) -> bool {
    match v {
        Value::Object(m) => m.is_empty(),
        Value::Array(a) => a.is_empty(),
        _ => true,
    }
}

fn block(v: &Value, indent: usize, out: &mut String) {
    let pad = " ".repeat(indent);
    match v {
        Value::Object(map) => {
            for (k, val) in map {
                out.push_str(&pad);
                out.push_str(&string(k));
                out.push(':');
                after(val, indent + 2, out);
            }
        }
        Value::Array(items) => {
            for item in items {
                out.push_str(&pad);
                out.push('-');
                if is_inline(item) {
                    out.push(' ');
                    out.push_str(&scalar(item));
                    out.push('\n');
                } else {
                    // A collection in a list starts on the dash's line.
                    let mut inner = String::new();
                    block(item, indent + 2, &mut inner);
                    out.push(' ');
                    out.push_str(&inner[indent + 2..]);
                }
            }
        }
        other => {
            out.push_str(&pad);
            out.push_str(&scalar(other));
            out.push('\n');
        }
    }
}

/// The value of a key: on the same line if inline, else an indented block.
fn after(val: &Value, indent: usize, out: &mut String) {
    if is_inline(val) {
        out.push(' ');
        out.push_str(&scalar(val));
        out.push('\n');
    } else {
        out.push('\n');
        // YAML lets a list under a key sit at the key's own indent; indenting it reads better.
        block(val, indent, out);
    }
}

fn scalar(v: &Value) -> String {
    match v {
        Value::Null => "~".into(),
        Value::Bool(b) => b.to_string(),
        Value::Number(n) => n.to_string(),
        Value::String(s) => string(s),
        Value::Object(_) => "{}".into(),
        Value::Array(_) => "[]".into(),
    }
}

/// A string plain if that is unambiguous, else double-quoted.
fn string(s: &str) -> String {
    if plain_ok(s) {
        s.to_owned()
    } else {
        serde_json::to_string(s).expect("strings serialize")
    }
}

fn plain_ok(s: &str) -> bool {
    let Some(first) = s.chars().next() else {
        return false;
    };
    let allowed_first = first.is_ascii_alphabetic() || matches!(first, '_' | '/' | '<');
    let allowed = |c: char| {
        c.is_ascii_alphanumeric()
            || matches!(c, '_' | ' ' | '.' | '/' | '-' | '<' | '>' | '(' | ')' | ',')
    };
    const WORDS: &[&str] = &[
        "true", "false", "null", "yes", "no", "on", "off", "y", "n", "~",
    ];
    allowed_first
        && s.chars().all(allowed)
        && !s.ends_with(' ')
        && !WORDS.contains(&s.to_ascii_lowercase().as_str())
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn nested_values_render_as_block_yaml() {
        let v = json!({
            "name": "echo",
            "required": ["message"],
            "empty": {},
            "list": [{"a": 1, "b": [true, null]}, "x", []],
            "odd": "2025-11-25",
            "yes": "no",
            "multi": "two\nlines"
        });
        let want = "\
name: echo
required:
  - message
empty: {}
list:
  - a: 1
    b:
      - true
      - ~
  - x
  - []
odd: \"2025-11-25\"
\"yes\": \"no\"
multi: \"two\\nlines\"
";
        assert_eq!(to_yaml(&v), want);
    }

    #[test]
    fn placeholders_stay_plain_and_brackets_are_quoted() {
        assert_eq!(string("<string>"), "<string>");
        assert_eq!(string("[uuid]"), "\"[uuid]\"");
        assert_eq!(string("a: b"), "\"a: b\"");
        assert_eq!(string(""), "\"\"");
        assert_eq!(to_yaml(&json!([[1, 2], 3])), "- - 1\n  - 2\n- 3\n");
    }
}

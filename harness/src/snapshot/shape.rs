//! The *shape* of a result: its structure without its data.
//!
//! A result's text changes with every input and every run; its structure is what clients
//! depend on. A shape keeps object keys (sorted), JSON types (as `<string>`, `<number>`,
//! ...), the kinds of content items, and the literal values of the few keys that name a
//! kind rather than carry data ([`KIND_KEYS`]).

use serde_json::{Map, Value};

/// Keys whose values say what kind of thing an object is, so a change of them is a change
/// of shape: content item `type`, message `role`, `mimeType`, a tool result's `isError`,
/// and a JSON-RPC error `code`.
pub const KIND_KEYS: &[&str] = &["type", "role", "mimeType", "isError", "code"];

/// How shapes are derived.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct ShapeOptions {
    /// Keep one entry per array element (so lengths show). Off: one entry per distinct
    /// element shape, in order of first appearance, so three text items and five text items
    /// have the same shape.
    pub array_lengths: bool,
}

/// The shape of `value`.
pub fn shape(value: &Value, options: ShapeOptions) -> Value {
    shape_at(value, None, options)
}

fn shape_at(value: &Value, key: Option<&str>, options: ShapeOptions) -> Value {
    let keep = key.is_some_and(|k| KIND_KEYS.contains(&k));
    match value {
        Value::Object(map) => {
            let mut keys: Vec<&String> = map.keys().collect();
            keys.sort();
            let mut out = Map::new();
            for k in keys {
                out.insert(k.clone(), shape_at(&map[k], Some(k), options));
            }
            Value::Object(out)
        }
        Value::Array(items) => {
            let mut out: Vec<Value> = Vec::new();
            for item in items {
                let s = shape_at(item, None, options);
                if options.array_lengths || !out.contains(&s) {
                    out.push(s);
                }
            }
            Value::Array(out)
        }
        _ if keep => value.clone(),
        Value::Null => placeholder("null"),
        Value::Bool(_) => placeholder("boolean"),
        // JSON has one number type; `3` and `3.0` and `3.5` are the same shape.
        Value::Number(_) => placeholder("number"),
        Value::String(_) => placeholder("string"),
    }
}

fn placeholder(kind: &str) -> Value {
    Value::String(format!("<{kind}>"))
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn data_becomes_types_and_kinds_stay() {
        let result = json!({
            "content": [
                {"type": "text", "text": "hello"},
                {"type": "text", "text": "again"},
                {"type": "image", "data": "AAAA", "mimeType": "image/png"}
            ],
            "structuredContent": {"sum": 3.5, "n": 2, "ok": true, "none": null},
            "isError": false
        });
        let s = shape(&result, ShapeOptions::default());
        assert_eq!(
            s,
            json!({
                "content": [
                    {"text": "<string>", "type": "text"},
                    {"data": "<string>", "mimeType": "image/png", "type": "image"}
                ],
                "isError": false,
                "structuredContent": {"n": "<number>", "none": "<null>", "ok": "<boolean>", "sum": "<number>"}
            })
        );
        let with_lengths = shape(
            &result,
            ShapeOptions {
                array_lengths: true,
            },
        );
        assert_eq!(with_lengths["content"].as_array().unwrap().len(), 3);
    }

    #[test]
    fn keys_come_out_sorted_whatever_the_input_order() {
        let a = shape(&json!({"b": 1, "a": "x"}), ShapeOptions::default());
        let b = shape(&json!({"a": "y", "b": 2}), ShapeOptions::default());
        assert_eq!(
            serde_json::to_string(&a).unwrap(),
            serde_json::to_string(&b).unwrap()
        );
    }
}

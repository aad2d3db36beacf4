//! JSON values from a JSON Schema: valid ones, and ones broken in one chosen way.
//!
//! Covers the subset MCP's schemas and tools' `inputSchema`s use: `type` (one or a list),
//! `properties`/`required`/`additionalProperties`, `items`, `enum`, `const`, `$ref` into the
//! document's definitions, `anyOf`/`oneOf`/`allOf`, numeric and length bounds. Anything
//! else falls back to an arbitrary small value.

use rand::RngExt;
use rand::seq::IndexedRandom;
use serde_json::{Map, Value, json};

use super::Rng;

/// How a generated value relates to its schema.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Shape {
    /// Valid against the schema.
    Valid,
    /// Valid, with numbers, strings and arrays at or just past their bounds.
    Boundary,
    /// One value somewhere replaced by one of another JSON type.
    WrongType,
    /// One required property left out.
    MissingRequired,
    /// Properties the schema does not declare added.
    ExtraProperties,
    /// One string or array made very large.
    Huge,
    /// One value replaced by deeply nested arrays and objects.
    Deep,
    /// Strings drawn from unicode edge cases.
    Unicode,
}

impl Shape {
    /// Every shape; the generator picks among them.
    pub const ALL: [Shape; 8] = [
        Shape::Valid,
        Shape::Boundary,
        Shape::WrongType,
        Shape::MissingRequired,
        Shape::ExtraProperties,
        Shape::Huge,
        Shape::Deep,
        Shape::Unicode,
    ];

    /// The shape's name in case descriptions.
    pub fn name(self) -> &'static str {
        match self {
            Shape::Valid => "valid",
            Shape::Boundary => "boundary",
            Shape::WrongType => "wrong-type",
            Shape::MissingRequired => "missing-required",
            Shape::ExtraProperties => "extra-properties",
            Shape::Huge => "huge",
            Shape::Deep => "deep",
            Shape::Unicode => "unicode",
        }
    }
}

/// Deepest nesting a generated value gets: serde_json (ours, and many servers') stops at
/// 128 levels, and a request we cannot parse back cannot be correlated.
pub const MAX_DEEP: usize = 100;

/// Strings that break naive handling: empty, whitespace, control characters, bidi
/// overrides, zero-width and combining characters, non-BMP, noncharacters, look-alikes of
/// JSON and paths. All valid UTF-8 and valid JSON strings (no lone surrogates).
pub const UNICODE_EDGES: &[&str] = &[
    "",
    " ",
    "\u{0}",
    "\u{7}\u{8}\u{1b}[31m",
    "a\u{0}b",
    "line\nbreak\r\n",
    "\u{202e}gnp.exe",
    "\u{200b}\u{200d}\u{feff}",
    "e\u{301}\u{301}\u{301}\u{301}\u{301}",
    "\u{1f600}\u{1f469}\u{200d}\u{1f469}\u{200d}\u{1f467}",
    "\u{ffff}\u{fffe}\u{fffd}",
    "\u{10ffff}",
    "\u{2028}\u{2029}",
    "Ω≈ç√∫",
    "ｆｕｌｌｗｉｄｔｈ",
    "../../../../etc/passwd",
    "%s%n%x%d",
    "{\"jsonrpc\":\"2.0\"}",
    "null",
    "-0",
    "1e309",
    "\\u0000",
    "'; DROP TABLE tools; --",
    "<script>alert(1)</script>",
];

/// Generates values for schemas found in `root` (the document `$ref`s point into).
#[derive(Debug)]
pub struct ValueGen<'a> {
    root: &'a Value,
    /// Nodes left for the value being generated: recursive schemas with arrays of
    /// objects would otherwise grow exponentially with depth.
    nodes: std::cell::Cell<usize>,
}

/// Most nodes one generated value gets (before a `Huge` or `Deep` part is put in).
const MAX_NODES: usize = 200;

impl<'a> ValueGen<'a> {
    /// A generator of values for schemas in the document `root` (`$ref`s resolve against it).
    pub fn new(root: &'a Value) -> Self {
        ValueGen {
            root,
            nodes: std::cell::Cell::new(MAX_NODES),
        }
    }

    /// A value for `schema` in the given shape.
    pub fn generate(&self, schema: &Value, shape: Shape, rng: &mut Rng) -> Value {
        self.nodes.set(MAX_NODES);
        let base = if shape == Shape::Boundary || shape == Shape::Unicode {
            self.value(schema, shape, rng, 0)
        } else {
            self.value(schema, Shape::Valid, rng, 0)
        };
        match shape {
            Shape::Valid | Shape::Boundary | Shape::Unicode => base,
            Shape::WrongType => {
                let mut v = base;
                replace_random(&mut v, rng, &mut |old, rng| other_type(old, rng));
                v
            }
            Shape::MissingRequired => self.drop_required(schema, base, rng),
            Shape::ExtraProperties => {
                let mut v = base;
                if let Value::Object(map) = &mut v {
                    for i in 0..rng.random_range(1..4) {
                        map.insert(format!("mcpcheck_extra_{i}"), small_value(rng));
                    }
                }
                v
            }
            Shape::Huge => {
                let mut v = base;
                let big = huge_value(rng);
                replace_random(&mut v, rng, &mut |_, _| big.clone());
                v
            }
            Shape::Deep => {
                let mut v = base;
                let depth = rng.random_range(20..MAX_DEEP - 10);
                let deep = deep_value(depth, rng);
                replace_random(&mut v, rng, &mut |_, _| deep.clone());
                v
            }
        }
    }

    fn resolve<'s>(&'s self, schema: &'s Value) -> &'s Value {
        let mut s = schema;
        for _ in 0..16 {
            let Some(r) = s.get("$ref").and_then(Value::as_str) else {
                return s;
            };
            let Some(target) = r
                .strip_prefix('#')
                .and_then(|p| self.root.pointer(&p.replace("~1", "/")))
            else {
                return s;
            };
            s = target;
        }
        s
    }

    fn value(&self, schema: &Value, shape: Shape, rng: &mut Rng, depth: usize) -> Value {
        let schema = self.resolve(schema);
        let left = self.nodes.get();
        if depth > 6 || left == 0 {
            return Value::Null;
        }
        self.nodes.set(left - 1);
        if let Some(c) = schema.get("const") {
            return c.clone();
        }
        if let Some(Value::Array(options)) = schema.get("enum")
            && let Some(v) = options.choose(rng)
        {
            return v.clone();
        }
        for key in ["anyOf", "oneOf"] {
            if let Some(Value::Array(options)) = schema.get(key)
                && let Some(option) = options.choose(rng)
            {
                return self.value(option, shape, rng, depth + 1);
            }
        }
        if let Some(Value::Array(parts)) = schema.get("allOf") {
            let mut merged = Map::new();
            for part in parts {
                if let Value::Object(m) = self.value(part, shape, rng, depth + 1) {
                    merged.extend(m);
                }
            }
            return Value::Object(merged);
        }
        let ty = match schema.get("type") {
            Some(Value::String(t)) => t.as_str(),
            Some(Value::Array(ts)) => ts.choose(rng).and_then(Value::as_str).unwrap_or("null"),
            _ if schema.get("properties").is_some() => "object",
            _ => return small_value(rng),
        };
        match ty {
            "object" => self.object(schema, shape, rng, depth),
            "array" => {
                let min = schema.get("minItems").and_then(Value::as_u64).unwrap_or(0) as usize;
                let max = schema
                    .get("maxItems")
                    .and_then(Value::as_u64)
                    .map(|m| m as usize)
                    .unwrap_or(min + 3);
                let n = if shape == Shape::Boundary {
                    *[min, max, 0].choose(rng).unwrap_or(&min)
                } else {
                    rng.random_range(min..=max.max(min))
                };
                let items = schema.get("items").cloned().unwrap_or(json!({}));
                Value::Array(
                    (0..n.min(16))
                        .map(|_| self.value(&items, shape, rng, depth + 1))
                        .collect(),
                )
            }
            "string" => string_for(schema, shape, rng),
            "integer" => integer_for(schema, shape, rng),
            "number" => number_for(schema, shape, rng),
            "boolean" => Value::Bool(rng.random_bool(0.5)),
            _ => Value::Null,
        }
    }

    fn object(&self, schema: &Value, shape: Shape, rng: &mut Rng, depth: usize) -> Value {
        let required: Vec<&str> = schema
            .get("required")
            .and_then(Value::as_array)
            .map(|r| r.iter().filter_map(Value::as_str).collect())
            .unwrap_or_default();
        let mut out = Map::new();
        if let Some(Value::Object(props)) = schema.get("properties") {
            for (name, prop) in props {
                let needed = required.contains(&name.as_str());
                // `_meta` and `task` change what a request means (task-augmented results,
                // progress); they are added deliberately elsewhere, never by chance.
                if !needed && (name == "_meta" || name == "task" || !rng.random_bool(0.6)) {
                    continue;
                }
                out.insert(name.clone(), self.value(prop, shape, rng, depth + 1));
            }
        }
        Value::Object(out)
    }

    fn drop_required(&self, schema: &Value, mut value: Value, rng: &mut Rng) -> Value {
        let schema = self.resolve(schema);
        let required: Vec<String> = schema
            .get("required")
            .and_then(Value::as_array)
            .map(|r| {
                r.iter()
                    .filter_map(Value::as_str)
                    .map(str::to_owned)
                    .collect()
            })
            .unwrap_or_default();
        if let (Value::Object(map), Some(name)) = (&mut value, required.choose(rng)) {
            map.remove(name);
        }
        value
    }
}

fn string_for(schema: &Value, shape: Shape, rng: &mut Rng) -> Value {
    let min = schema.get("minLength").and_then(Value::as_u64).unwrap_or(0) as usize;
    let max = schema
        .get("maxLength")
        .and_then(Value::as_u64)
        .map(|m| m as usize);
    match shape {
        Shape::Unicode => Value::String(UNICODE_EDGES.choose(rng).copied().unwrap_or("").into()),
        Shape::Boundary => {
            let n = *[min, max.unwrap_or(min), max.map_or(min, |m| m + 1), 0]
                .choose(rng)
                .unwrap_or(&min);
            Value::String("x".repeat(n.min(1 << 16)))
        }
        _ => {
            if schema.get("format").and_then(Value::as_str) == Some("uri") {
                return Value::String(format!("fixture://fuzz/{}", rng.random_range(0..100)));
            }
            let n = rng.random_range(min..=max.unwrap_or(min + 12).max(min));
            Value::String(word(n.min(64), rng))
        }
    }
}

fn integer_for(schema: &Value, shape: Shape, rng: &mut Rng) -> Value {
    let min = schema.get("minimum").and_then(Value::as_i64);
    let max = schema.get("maximum").and_then(Value::as_i64);
    if shape == Shape::Boundary {
        let mut picks = vec![0, -1, 1, i64::MAX, i64::MIN];
        if let Some(m) = min {
            picks.extend([m, m.saturating_sub(1)]);
        }
        if let Some(m) = max {
            picks.extend([m, m.saturating_add(1)]);
        }
        return json!(*picks.choose(rng).unwrap_or(&0));
    }
    let lo = min.unwrap_or(-1000);
    let hi = max.unwrap_or(1000).max(lo);
    // Stay near the low end: a real tool's integer is often a count or a delay.
    json!(rng.random_range(lo..=hi.min(lo.saturating_add(100))))
}

fn number_for(schema: &Value, shape: Shape, rng: &mut Rng) -> Value {
    if shape == Shape::Boundary {
        let picks = [
            json!(0),
            json!(-0.0),
            json!(f64::MAX),
            json!(f64::MIN_POSITIVE),
            json!(-1e308),
            json!(9007199254740993u64),
            json!(0.1),
        ];
        return picks.choose(rng).cloned().unwrap_or(json!(0));
    }
    let lo = schema
        .get("minimum")
        .and_then(Value::as_f64)
        .unwrap_or(-1e6);
    let hi = schema
        .get("maximum")
        .and_then(Value::as_f64)
        .unwrap_or(1e6)
        .max(lo);
    json!(lo + (hi - lo) * rng.random::<f64>())
}

/// A short lower-case word.
pub fn word(n: usize, rng: &mut Rng) -> String {
    (0..n)
        .map(|_| (b'a' + rng.random_range(0..26u8)) as char)
        .collect()
}

/// A small value of any JSON type.
pub fn small_value(rng: &mut Rng) -> Value {
    match rng.random_range(0..7) {
        0 => Value::Null,
        1 => Value::Bool(rng.random_bool(0.5)),
        2 => json!(rng.random_range(-1000..1000)),
        3 => json!(rng.random::<f64>() * 1e6),
        4 => Value::String(word(rng.random_range(0..12), rng)),
        5 => json!([word(3, rng), rng.random_range(0..9)]),
        _ => json!({ word(4, rng): word(4, rng) }),
    }
}

/// A value of another JSON type than `old`.
pub fn other_type(old: &Value, rng: &mut Rng) -> Value {
    loop {
        let v = small_value(rng);
        if std::mem::discriminant(&v) != std::mem::discriminant(old) {
            return v;
        }
    }
}

/// A very large string or array (64 KiB to 1 MiB of text, or 10 000 elements).
pub fn huge_value(rng: &mut Rng) -> Value {
    match rng.random_range(0..3) {
        0 => Value::String("A".repeat(rng.random_range(64 * 1024..512 * 1024))),
        1 => Value::String("\u{1f600}".repeat(rng.random_range(20_000..100_000))),
        _ => Value::Array((0..10_000).map(|i| json!(i)).collect()),
    }
}

/// Arrays and objects nested `depth` levels.
pub fn deep_value(depth: usize, rng: &mut Rng) -> Value {
    let arrays = rng.random_bool(0.5);
    let mut v = json!(1);
    // Built by hand: `json!` with a value inside serializes it again (quadratic).
    for _ in 0..depth {
        v = if arrays {
            Value::Array(vec![v])
        } else {
            let mut m = Map::new();
            m.insert("a".into(), v);
            Value::Object(m)
        };
    }
    v
}

/// Replaces one node of `v` (the root included), chosen uniformly, by `f(old)`.
pub fn replace_random(v: &mut Value, rng: &mut Rng, f: &mut dyn FnMut(&Value, &mut Rng) -> Value) {
    let n = count_nodes(v);
    let target = rng.random_range(0..n);
    let mut seen = 0;
    replace_nth(v, target, &mut seen, rng, f);
}

fn count_nodes(v: &Value) -> usize {
    1 + match v {
        Value::Array(a) => a.iter().map(count_nodes).sum(),
        Value::Object(o) => o.values().map(count_nodes).sum(),
        _ => 0,
    }
}

fn replace_nth(
    v: &mut Value,
    target: usize,
    seen: &mut usize,
    rng: &mut Rng,
    f: &mut dyn FnMut(&Value, &mut Rng) -> Value,
) -> bool {
    if *seen == target {
        *v = f(v, rng);
        return true;
    }
    *seen += 1;
    match v {
        Value::Array(a) => a.iter_mut().any(|x| replace_nth(x, target, seen, rng, f)),
        Value::Object(o) => o.values_mut().any(|x| replace_nth(x, target, seen, rng, f)),
        _ => false,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use rand::SeedableRng;

    fn rng() -> Rng {
        Rng::seed_from_u64(7)
    }

    #[test]
    fn valid_values_follow_the_schema() {
        let root = json!({"$defs": {"Level": {"type": "string", "enum": ["debug", "info"]}}});
        let schema = json!({
            "type": "object",
            "properties": {
                "level": {"$ref": "#/$defs/Level"},
                "n": {"type": "integer", "minimum": 3, "maximum": 5},
                "tags": {"type": "array", "items": {"type": "string"}, "maxItems": 2}
            },
            "required": ["level", "n"]
        });
        let g = ValueGen::new(&root);
        let mut r = rng();
        for _ in 0..200 {
            let v = g.generate(&schema, Shape::Valid, &mut r);
            assert!(
                ["debug", "info"].contains(&v["level"].as_str().unwrap()),
                "{v}"
            );
            let n = v["n"].as_i64().unwrap();
            assert!((3..=5).contains(&n), "{v}");
            if let Some(t) = v.get("tags") {
                assert!(t.as_array().unwrap().len() <= 2);
            }
        }
    }

    #[test]
    fn broken_shapes_break_the_schema_as_named() {
        let root = json!({});
        let schema =
            json!({"type": "object", "properties": {"a": {"type": "string"}}, "required": ["a"]});
        let g = ValueGen::new(&root);
        let mut r = rng();
        let missing = g.generate(&schema, Shape::MissingRequired, &mut r);
        assert!(missing.get("a").is_none());
        let extra = g.generate(&schema, Shape::ExtraProperties, &mut r);
        assert!(extra.get("mcpcheck_extra_0").is_some());
        let deep = deep_value(50, &mut r);
        let text = deep.to_string();
        assert!(
            serde_json::from_str::<Value>(&text).is_ok(),
            "within serde's depth"
        );
        for _ in 0..50 {
            let wrong = g.generate(&schema, Shape::WrongType, &mut r);
            assert!(!(wrong.is_object() && wrong["a"].is_string()), "{wrong}");
        }
    }

    #[test]
    fn generation_is_deterministic_for_a_seed() {
        let root = json!({});
        let schema = json!({"type": "object", "properties": {"a": {"type": "number"}, "b": {"type": "string"}}});
        let g = ValueGen::new(&root);
        let run = || {
            let mut r = rng();
            (0..20)
                .map(|i| {
                    g.generate(&schema, Shape::ALL[i % 8], &mut r)
                        .to_string()
                        .len()
                })
                .collect::<Vec<_>>()
        };
        assert_eq!(run(), run());
    }
}

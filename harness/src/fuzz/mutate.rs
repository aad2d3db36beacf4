//! Mutations of a well-formed message: structural (on its JSON value) and on its bytes
//! (framing, encoding, syntax).

use rand::RngExt;
use rand::seq::IndexedRandom;
use serde_json::{Value, json};

use super::Rng;
use super::values::{UNICODE_EDGES, huge_value, other_type, replace_random};
use super::wire::Wire;

/// The mutations, by name (the name goes into the finding's origin).
pub const MUTATIONS: &[&str] = &[
    "drop-field",
    "duplicate-field",
    "type-swap",
    "numeric-boundary",
    "string-explosion",
    "unicode",
    "truncate",
    "invalid-utf8",
    "split-frame",
    "embedded-newline",
    "giant-line",
    "syntax-damage",
];

/// Mutations that mean nothing over HTTP, where each write is a whole POST body: there is
/// no byte stream to split a frame across (two POSTs of half a message are two truncations).
pub const STREAM_ONLY: &[&str] = &["split-frame"];

/// Applies one mutation, chosen at random, to `message`. Returns the writes it becomes
/// (a split frame is two writes).
pub fn mutate(message: &Value, rng: &mut Rng) -> Vec<Wire> {
    let name = *MUTATIONS.choose(rng).unwrap_or(&"type-swap");
    apply(name, message, rng)
}

/// [`mutate`] for a transport whose writes are POST bodies: [`STREAM_ONLY`] mutations are
/// never chosen.
pub fn mutate_body(message: &Value, rng: &mut Rng) -> Vec<Wire> {
    let names: Vec<&str> = MUTATIONS
        .iter()
        .copied()
        .filter(|m| !STREAM_ONLY.contains(m))
        .collect();
    let name = *names.choose(rng).unwrap_or(&"type-swap");
    apply(name, message, rng)
}

/// Applies the named mutation.
pub fn apply(name: &str, message: &Value, rng: &mut Rng) -> Vec<Wire> {
    let method = message
        .get("method")
        .and_then(Value::as_str)
        .unwrap_or("(raw)")
        .to_owned();
    let origin = format!("mutated:{name}");
    if let Some(v) = mutate_value(name, message, rng) {
        return vec![Wire::line(&v, origin)];
    }
    let text = serde_json::to_vec(message).unwrap_or_default();
    mutate_bytes(name, message, &text, rng)
        .into_iter()
        .map(|bytes| Wire::raw(bytes, &method, origin.clone()))
        .collect()
}

/// The structural mutations, on the message's JSON value: the result is still one valid
/// JSON line. `None` for a mutation of the bytes.
fn mutate_value(name: &str, message: &Value, rng: &mut Rng) -> Option<Value> {
    let mut v = message.clone();
    match name {
        "drop-field" => drop_random_member(&mut v, rng),
        "type-swap" => replace_keeping_ids(&mut v, rng, &mut |old, rng| other_type(old, rng)),
        "string-explosion" => {
            let big = huge_value(rng);
            replace_keeping_ids(&mut v, rng, &mut |old, _| {
                if old.is_string() || old.is_null() {
                    big.clone()
                } else {
                    old.clone()
                }
            });
        }
        "unicode" => {
            let s = UNICODE_EDGES.choose(rng).copied().unwrap_or("");
            replace_keeping_ids(&mut v, rng, &mut |_, _| json!(s));
        }
        _ => return None,
    }
    Some(v)
}

/// Replaces a random value of `v`, but not its id or progress token: a changed id could
/// collide with one already used, and a changed token with one already sent.
fn replace_keeping_ids(
    v: &mut Value,
    rng: &mut Rng,
    replace: &mut dyn FnMut(&Value, &mut Rng) -> Value,
) {
    let id = v.get("id").cloned();
    let token = progress_token(v);
    replace_random(v, rng, replace);
    restore_id(v, id);
    restore_token(v, token);
}

/// The mutations of the message's bytes (`text`, its JSON): framing, encoding, syntax.
/// Gives the bytes of each write, with the newline that ends a line.
fn mutate_bytes(name: &str, message: &Value, text: &[u8], rng: &mut Rng) -> Vec<Vec<u8>> {
    let with_nl = |mut b: Vec<u8>| {
        b.push(b'\n');
        b
    };
    let bytes = match name {
        "duplicate-field" => duplicate_member(text, rng),
        "numeric-boundary" => numeric_boundary(message, rng),
        "truncate" => {
            let cut = rng.random_range(0..text.len().max(1));
            text[..cut].to_vec()
        }
        "invalid-utf8" => invalid_utf8(text, rng),
        "split-frame" => {
            let cut = rng.random_range(1..text.len().max(2));
            let (a, b) = text.split_at(cut.min(text.len()));
            return vec![a.to_vec(), with_nl(b.to_vec())];
        }
        "embedded-newline" => {
            let mut b = text.to_vec();
            let at = rng.random_range(0..b.len().max(1));
            b.insert(at.min(b.len()), b'\n');
            b
        }
        "giant-line" => {
            // Valid JSON, padded with whitespace to megabytes: the server must still answer.
            let pad = rng.random_range(256 << 10..2 << 20);
            let mut b = text.to_vec();
            b.extend(std::iter::repeat_n(b' ', pad));
            b
        }
        _ => syntax_damage(text, rng),
    };
    vec![with_nl(bytes)]
}

/// The message with a random value (not its id or progress token) replaced by a number at
/// an edge of what parsers take: written as JSON text, since `Value` cannot hold most.
fn numeric_boundary(message: &Value, rng: &mut Rng) -> Vec<u8> {
    const NUMBERS: &[&str] = &[
        "0",
        "-0",
        "-1",
        "1.0",
        "1e309",
        "-1e309",
        "9223372036854775807",
        "9223372036854775808",
        "-9223372036854775809",
        "18446744073709551616",
        "123456789012345678901234567890",
        "4.9e-324",
        "0.30000000000000004",
    ];
    let marker = "__mcpcheck_number__";
    let mut v = message.clone();
    replace_keeping_ids(&mut v, rng, &mut |_, _| json!(marker));
    let text = serde_json::to_string(&v).unwrap_or_default();
    let n = NUMBERS.choose(rng).copied().unwrap_or("0");
    text.replacen(&format!("\"{marker}\""), n, 1).into_bytes()
}

/// The message's bytes with a malformed UTF-8 sequence put in.
fn invalid_utf8(text: &[u8], rng: &mut Rng) -> Vec<u8> {
    const BAD: &[&[u8]] = &[
        b"\xff",
        b"\xc0\x80",
        b"\xed\xa0\x80",
        b"\x80",
        b"\xf4\x90\x80\x80",
        b"\xe2\x82",
    ];
    let mut b = text.to_vec();
    // Inside a string where one is at hand, so the rest still parses as JSON.
    let at = b
        .iter()
        .rposition(|&c| c == b'"')
        .unwrap_or(b.len() / 2)
        .min(b.len());
    let bad = BAD.choose(rng).copied().unwrap_or(b"\xff");
    b.splice(at..at, bad.iter().copied());
    b
}

fn restore_id(v: &mut Value, id: Option<Value>) {
    if let (Value::Object(map), Some(id)) = (v, id) {
        map.insert("id".into(), id);
    }
}

/// The progress token a request carries.
fn progress_token(v: &Value) -> Option<Value> {
    v.pointer("/params/_meta/progressToken").cloned()
}

/// Puts back a progress token a mutation turned into another string or number: that one
/// could repeat a token already sent, and tokens MUST be unique across active requests
/// (basic/utilities/progress). A token of a type no token has stays, as the damage it is.
fn restore_token(v: &mut Value, token: Option<Value>) {
    if let (Some(old), Some(now)) = (token, v.pointer_mut("/params/_meta/progressToken"))
        && (now.is_string() || now.is_number())
        && *now != old
    {
        *now = old;
    }
}

fn drop_random_member(v: &mut Value, rng: &mut Rng) {
    let mut objects = Vec::new();
    collect_objects(v, "", &mut objects);
    let Some(path) = objects.choose(rng).cloned() else {
        return;
    };
    if let Some(Value::Object(map)) = v.pointer_mut(&path) {
        let keys: Vec<String> = map.keys().filter(|k| *k != "id").cloned().collect();
        if let Some(k) = keys.choose(rng) {
            map.remove(k);
        }
    }
}

fn collect_objects(v: &Value, path: &str, out: &mut Vec<String>) {
    match v {
        Value::Object(map) => {
            if !map.is_empty() {
                out.push(path.to_owned());
            }
            for (k, x) in map {
                let k = crate::protocol::pointer_token(k);
                collect_objects(x, &format!("{path}/{k}"), out);
            }
        }
        Value::Array(a) => {
            for (i, x) in a.iter().enumerate() {
                collect_objects(x, &format!("{path}/{i}"), out);
            }
        }
        _ => {}
    }
}

/// Writes one member of the top-level object twice (same key, same value): a duplicate
/// key whose meaning does not depend on which copy the server keeps.
fn duplicate_member(text: &[u8], rng: &mut Rng) -> Vec<u8> {
    let Ok(Value::Object(map)) = serde_json::from_slice::<Value>(text) else {
        return text.to_vec();
    };
    let Some((k, v)) = map.iter().nth(rng.random_range(0..map.len().max(1))) else {
        return text.to_vec();
    };
    let member = format!("{}:{},", json!(k), v);
    let mut out = b"{".to_vec();
    out.extend_from_slice(member.as_bytes());
    out.extend_from_slice(&text[1..]);
    out
}

fn syntax_damage(text: &[u8], rng: &mut Rng) -> Vec<u8> {
    let mut b = text.to_vec();
    if b.is_empty() {
        return b"{".to_vec();
    }
    let at = rng.random_range(0..b.len());
    match rng.random_range(0..8) {
        0 => {
            b.remove(at);
        }
        1 => b.insert(at, *b"{}[]:,\"".choose(rng).unwrap_or(&b',')),
        2 => {
            let end = b.len() - 1;
            b.insert(end, b',');
        }
        3 => b
            .splice(0..0, b"// comment\n".iter().copied())
            .for_each(drop),
        4 => {
            let s = String::from_utf8_lossy(&b).replace('"', "'");
            b = s.into_bytes();
        }
        5 => b = b"NaN".to_vec(),
        6 => b = b"[]".to_vec(),
        _ => b.extend_from_slice(b"}}}"),
    }
    b
}

#[cfg(test)]
mod tests {
    use super::*;
    use rand::SeedableRng;

    fn msg() -> Value {
        json!({"jsonrpc": "2.0", "id": 1042, "method": "tools/call", "params": {"name": "echo", "arguments": {"message": "hi"}}})
    }

    #[test]
    fn every_mutation_produces_bytes_and_keeps_ids_unchanged_or_unreadable() {
        let mut rng = Rng::seed_from_u64(1);
        for name in MUTATIONS {
            for _ in 0..20 {
                let wires = apply(name, &msg(), &mut rng);
                assert!(!wires.is_empty(), "{name}");
                let all: Vec<u8> = wires.iter().flat_map(|w| w.bytes.clone()).collect();
                assert!(all.ends_with(b"\n"), "{name}: the last write ends the line");
                // A mutation never invents a new id that could collide with one in use.
                for line in all.split(|&b| b == b'\n') {
                    for e in super::super::wire::requests_in(line) {
                        assert_eq!(e.id, crate::protocol::RequestId::int(1042), "{name}");
                    }
                }
            }
        }
    }

    #[test]
    fn duplicate_member_repeats_a_member_verbatim() {
        let mut rng = Rng::seed_from_u64(3);
        let out = duplicate_member(br#"{"a":1,"b":"x"}"#, &mut rng);
        let s = String::from_utf8(out).unwrap();
        assert!(
            s == r#"{"a":1,"a":1,"b":"x"}"# || s == r#"{"b":"x","a":1,"b":"x"}"#,
            "{s}"
        );
    }
}

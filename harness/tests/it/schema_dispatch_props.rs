//! Property tests for schema dispatch: the stable twin of the cargo-fuzz target
//! `fuzz/fuzz_targets/schema_dispatch.rs`. Both check the same invariants, from one file
//! (`fuzz/src/schema_dispatch.rs`, included below): a stream of server messages, for a
//! revision and an awaited method, goes through the real session without panic or hang,
//! and every finding is well-formed and deterministic.
//!
//! The fuzzer explores raw bytes; these strategies build what servers send: responses to
//! the awaited ids (results of any shape, errors), notifications and requests with the
//! revision's method names, batches, and lines that are not JSON.

#[path = "../../../fuzz/src/schema_dispatch.rs"]
mod invariants;

use invariants::{check, split_input};
use proptest::prelude::*;
use serde_json::{Value, json};

const METHODS: &[&str] = &[
    "notifications/message",
    "notifications/progress",
    "notifications/tools/list_changed",
    "notifications/resources/updated",
    "notifications/cancelled",
    "roots/list",
    "sampling/createMessage",
    "elicitation/create",
    "ping",
    "tools/list",
    "no/such/method",
];

fn json_value() -> impl Strategy<Value = Value> {
    let leaf = prop_oneof![
        Just(Value::Null),
        any::<bool>().prop_map(Value::Bool),
        any::<i64>().prop_map(|n| json!(n)),
        "[a-z]{0,6}".prop_map(Value::String),
        prop_oneof![Just("text"), Just("image"), Just("info"), Just("2.0")].prop_map(|s| json!(s)),
    ];
    leaf.prop_recursive(4, 24, 4, |inner| {
        prop_oneof![
            proptest::collection::vec(inner.clone(), 0..4).prop_map(Value::Array),
            proptest::collection::btree_map(
                prop_oneof![
                    Just("tools".to_owned()),
                    Just("content".to_owned()),
                    Just("type".to_owned()),
                    Just("name".to_owned()),
                    Just("nextCursor".to_owned()),
                    "[a-z]{1,5}"
                ],
                inner,
                0..4
            )
            .prop_map(|m| Value::Object(m.into_iter().collect())),
        ]
    })
}

fn id() -> impl Strategy<Value = Value> {
    prop_oneof![
        Just(json!(1)),
        Just(json!("a")),
        Just(json!("1")),
        Just(Value::Null),
        any::<i64>().prop_map(|n| json!(n))
    ]
}

fn message() -> impl Strategy<Value = String> {
    prop_oneof![
        (id(), json_value())
            .prop_map(|(id, r)| json!({"jsonrpc": "2.0", "id": id, "result": r}).to_string()),
        (id(), any::<i32>(), json_value()).prop_map(|(id, c, d)| {
            json!({"jsonrpc": "2.0", "id": id, "error": {"code": c, "message": "m", "data": d}})
                .to_string()
        }),
        (0..METHODS.len(), json_value()).prop_map(|(m, p)| {
            json!({"jsonrpc": "2.0", "method": METHODS[m], "params": p}).to_string()
        }),
        (id(), 0..METHODS.len(), json_value()).prop_map(|(id, m, p)| {
            json!({"jsonrpc": "2.0", "id": id, "method": METHODS[m], "params": p}).to_string()
        }),
        json_value().prop_map(|v| v.to_string()),
        "[ -~]{0,40}",
    ]
}

proptest! {
    #![proptest_config(crate::support::props::config(256))]

    #[test]
    fn server_messages_keep_dispatch_promises(
        rev in any::<u8>(),
        method in any::<u8>(),
        lines in proptest::collection::vec(message(), 0..6),
        batch in any::<bool>(),
    ) {
        let mut stream = vec![rev, method];
        if batch && lines.len() > 1 {
            stream.extend(format!("[{}]\n", lines.join(",")).into_bytes());
        } else {
            for l in &lines {
                stream.extend(l.as_bytes());
                stream.push(b'\n');
            }
        }
        let (revision, method, rest) = split_input(&stream);
        check(revision, &method, rest);
    }

    #[test]
    fn raw_bytes_keep_dispatch_promises(data in proptest::collection::vec(any::<u8>(), 0..300)) {
        let (revision, method, rest) = split_input(&data);
        check(revision, &method, rest);
    }
}

#[test]
fn the_committed_seeds_keep_dispatch_promises() {
    let dir =
        std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../fuzz/seeds/schema_dispatch");
    let mut n = 0;
    for entry in std::fs::read_dir(dir).expect("seed directory") {
        let data = std::fs::read(entry.unwrap().path()).unwrap();
        let (revision, method, rest) = split_input(&data);
        check(revision, &method, rest);
        n += 1;
    }
    assert!(n >= 5);
}

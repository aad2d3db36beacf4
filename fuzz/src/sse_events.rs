//! The SSE reading invariants, checked by the libFuzzer target
//! (`fuzz/fuzz_targets/sse_events.rs`) and by its proptest twin on stable
//! (`harness/tests/it/sse_events_props.rs`, which includes this file with `#[path]`).
//!
//! What is checked is mcpcheck's Streamable HTTP SSE reader
//! (`mcpcheck::transport::http::read_sse_chunks`, the code every SSE response and the GET
//! stream go through): eventsource-stream's parsing of the body's chunks into events, then
//! our turning of events into transcript records, frames and problems.
//!
//! This file must only use `std`, `mcpcheck`, `serde_json` and `tokio`, so that it compiles
//! in both crates. Every check panics with a message that names the broken invariant.

use mcpcheck::transport::Inbound;
use mcpcheck::transport::http::{HttpRecord, read_sse_chunks};
use serde_json::Value;

/// Reads a body that arrived in `chunks`; returns what the session would receive.
pub fn read(max_frame: usize, chunks: Vec<Vec<u8>>) -> Vec<Inbound> {
    let runtime = tokio::runtime::Builder::new_current_thread()
        .build()
        .expect("a current-thread runtime");
    runtime.block_on(read_sse_chunks(chunks, max_frame))
}

/// Checks every invariant for a body fed as `chunks`; returns the reader's output.
pub fn check(max_frame: usize, chunks: &[Vec<u8>]) -> Vec<Inbound> {
    let body = chunks.concat();
    let whole = read(max_frame, vec![body.clone()]);
    let chunked = read(max_frame, chunks.to_vec());
    assert_same(&whole, &chunked, "the given chunks");
    // Byte by byte is quadratic in eventsource-stream (it reparses its buffer per chunk):
    // only for inputs of fuzzer size.
    if body.len() <= 8 * 1024 {
        let bytewise = read(max_frame, body.chunks(1).map(<[u8]>::to_vec).collect());
        assert_same(&whole, &bytewise, "one byte at a time");
    }
    check_output(max_frame, &whole);
    whole
}

fn assert_same(whole: &[Inbound], other: &[Inbound], how: &str) {
    assert_eq!(
        whole.len(),
        other.len(),
        "the output depends on the chunking ({how}): {} items whole, {} chunked\nwhole: {whole:#?}\nchunked: {other:#?}",
        whole.len(),
        other.len()
    );
    for (i, (a, b)) in whole.iter().zip(other).enumerate() {
        assert_eq!(
            a, b,
            "the output depends on the chunking ({how}) at item {i}"
        );
    }
}

/// Invariants of one output, whatever the chunking.
pub fn check_output(max_frame: usize, out: &[Inbound]) {
    // The stream's end is recorded exactly once, last.
    let ends = out
        .iter()
        .filter(|i| matches!(i, Inbound::Http(HttpRecord::StreamEnd { .. })))
        .count();
    assert_eq!(ends, 1, "one StreamEnd record: {out:#?}");
    assert!(
        matches!(
            out.last(),
            Some(Inbound::Http(HttpRecord::StreamEnd { .. }))
        ),
        "StreamEnd is last: {out:#?}"
    );
    // Frames and problems come only from `message` events, at most one each.
    let messages = out
        .iter()
        .filter(|i| matches!(i, Inbound::Http(HttpRecord::SseEvent { event, .. }) if event == "message"))
        .count();
    let delivered = out
        .iter()
        .filter(|i| {
            matches!(
                i,
                Inbound::Frame(_) | Inbound::Http(HttpRecord::Invalid { .. })
            )
        })
        .count();
    assert!(
        delivered <= messages,
        "{delivered} frames and problems from {messages} message events: {out:#?}"
    );
    for (i, item) in out.iter().enumerate() {
        match item {
            Inbound::Frame(frame) => {
                // A frame is the data of the `message` event recorded just before it.
                let Some(Inbound::Http(HttpRecord::SseEvent {
                    event, data_bytes, ..
                })) = i.checked_sub(1).and_then(|p| out.get(p))
                else {
                    panic!("frame {i} does not follow its event record: {out:#?}");
                };
                assert_eq!(event, "message", "frame {i} from a non-message event");
                assert_eq!(
                    *data_bytes,
                    frame.bytes.len(),
                    "frame {i} is not its event's data"
                );
                assert!(
                    frame.bytes.len() <= max_frame,
                    "frame {i} exceeds max_frame"
                );
                let parsed: Value = serde_json::from_slice(&frame.bytes)
                    .unwrap_or_else(|e| panic!("frame {i} bytes are not JSON: {e}"));
                assert_eq!(parsed, frame.value, "frame {i} value is not its bytes");
            }
            Inbound::Http(HttpRecord::SseEvent { .. }) => {}
            Inbound::Http(HttpRecord::Invalid { context, problem }) => {
                assert!(
                    !context.is_empty() && !problem.is_empty(),
                    "an empty problem"
                );
            }
            Inbound::Http(HttpRecord::StreamEnd { reason, .. }) => {
                assert!(!reason.is_empty(), "a StreamEnd without a reason");
            }
            other => panic!("item {i}: an SSE body cannot produce {other:?}"),
        }
    }
}

//! Fuzzes the Streamable HTTP SSE reader: an SSE response body split into the reads that
//! delivered it, through eventsource-stream and mcpcheck's event handling
//! (`mcpcheck::transport::http::read_sse_chunks`).
//!
//! Checked (see `src/sse_events.rs`): no panic, no hang; the output does not depend on the
//! chunking (given chunks, whole, byte by byte); the stream's end is recorded once, last;
//! every frame is the data of the `message` event recorded just before it, within the
//! frame limit, and its bytes parse to its value; no more frames and problems than
//! `message` events.
//!
//! A crash prints the input's `Debug`, a ready-made regression test (see README.md).

#![no_main]

use libfuzzer_sys::fuzz_target;
use mcpcheck_fuzz::SseInput;
use mcpcheck_fuzz::sse_events::check;

fuzz_target!(|input: SseInput| {
    check(input.0.max_frame, &input.0.chunks);
});

//! Fuzzes the stdio NDJSON decoder and JSON-RPC classification.
//!
//! The input is a stream split into the reads that delivered it, plus the decoder's line
//! limit. Checked (see `src/invariants.rs`): no panic; the output does not depend on the
//! chunking (given chunks, whole, byte by byte); every frame is one line of at most
//! `max_frame` bytes, exactly as on the wire, whose bytes parse to its value; every line
//! of the input is accounted for once; `classify` is total on every frame, including
//! recovered multi-line ones.
//!
//! A crash prints the input's `Debug`, a ready-made regression test (see README.md).

#![no_main]

use libfuzzer_sys::fuzz_target;
use mcpcheck_fuzz::FramingInput;
use mcpcheck_fuzz::invariants::check;

fuzz_target!(|input: FramingInput| {
    check(input.max_frame, &input.chunks);
});

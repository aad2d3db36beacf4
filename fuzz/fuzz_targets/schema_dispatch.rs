//! Fuzzes schema dispatch: a revision, a method awaited, and a server's stdout stream go
//! through the session (decode, classify, correlate, choose the definition, validate).
//!
//! Input: byte 0 picks the revision, byte 1 the method of the pending requests (ids 1 and
//! "a"), the rest is the stream. Needs the official schemas (`$MCPCHECK_SCHEMA_DIR`, else
//! `../shared/mcp-schema`). Checked (see `src/schema_dispatch.rs`): no panic, no hang,
//! findings well-formed and deterministic.

#![no_main]

use libfuzzer_sys::fuzz_target;
use mcpcheck_fuzz::schema_dispatch::{check, split_input};

fuzz_target!(|data: &[u8]| {
    let (revision, method, stream) = split_input(data);
    check(revision, &method, stream);
});

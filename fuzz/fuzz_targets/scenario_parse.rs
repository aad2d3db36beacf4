//! Fuzzes the scenario-file parser (YAML layer, step and matcher parsing, templates).
//!
//! The input is the file's text (non-UTF-8 inputs are skipped: scenario files are read as
//! UTF-8 before parsing). Checked (see `src/scenario_parse.rs`): no panic, deterministic,
//! errors point into the text and render, parsed scenarios keep their promises.

#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    if let Ok(text) = std::str::from_utf8(data) {
        mcpcheck_fuzz::scenario_parse::check(text);
    }
});

//! Invariants of the scenario-file parser, checked by the libFuzzer target
//! (`fuzz/fuzz_targets/scenario_parse.rs`) and by its proptest twin on stable
//! (`harness/tests/it/scenario_parse_props.rs`, which includes this file with `#[path]`).
//!
//! This file must only use `std` and `mcpcheck`, so that it compiles in both crates.

use mcpcheck::scenario::StepKind;
use mcpcheck::scenario::parse::{parse_scenario, to_json_document};

/// Parses `text` and checks what the parser promises about its result:
///
/// - it never panics, and parsing is deterministic;
/// - an error points into the text: its line exists (1-based, counted the way YAML counts
///   lines; an error at the end of input may point just past the last line), the caret is
///   at least one character wide, it has a message, and it renders;
/// - a parsed scenario has an id, starts with an `initialize` step (the parser inserts
///   the default handshake), and its steps' lines exist in the text;
/// - whatever the YAML layer accepts for the scenario, `to_json_document` accepts too.
pub fn check(text: &str) {
    let first = parse_scenario("fuzz.yaml", text);
    let again = parse_scenario("fuzz.yaml", text);
    assert_eq!(first, again, "parsing the same text twice differed");
    let lines = yaml_lines(text);
    match first {
        Err(e) => {
            assert!(!e.message.is_empty(), "an error without a message: {e:?}");
            assert!(
                (1..=lines + 1).contains(&e.line),
                "error line {} outside the text's {lines} lines: {e:?}",
                e.line
            );
            assert!(e.column >= 1 && e.width >= 1, "no caret: {e:?}");
            let rendered = e.to_string();
            assert!(
                rendered.contains(&e.message),
                "rendering lost the message: {rendered}"
            );
            assert!(
                rendered.contains("fuzz.yaml:"),
                "rendering lost the location: {rendered}"
            );
        }
        Ok(s) => {
            assert!(!s.id.is_empty(), "a scenario without an id");
            // A `negotiate` step opens its own sessions: it is then the only step.
            assert!(
                matches!(
                    s.steps.first().map(|st| &st.kind),
                    Some(StepKind::Initialize(_))
                ) || s.negotiation().is_some(),
                "the first step is not initialize, nor a lone negotiate: {:?}",
                s.steps.first()
            );
            assert!(
                !s.steps
                    .iter()
                    .any(|st| matches!(st.kind, StepKind::Negotiate(_)))
                    || s.steps.len() == 1,
                "a negotiate step beside others: {:?}",
                s.steps
            );
            for step in &s.steps {
                assert!(
                    (1..=lines).contains(&step.line),
                    "step line {} outside the text's {lines} lines",
                    step.line
                );
            }
            assert!(
                to_json_document("fuzz.yaml", text).is_ok(),
                "a scenario the parser accepts is not a JSON document"
            );
        }
    }
}

/// Lines as YAML 1.2 counts them (section 5.4): a line break is LF, CR, or CR LF. A lone
/// CR starts a new line for the parser, though most editors show none.
pub fn yaml_lines(text: &str) -> usize {
    1 + text
        .replace("\r\n", "\n")
        .chars()
        .filter(|c| *c == '\n' || *c == '\r')
        .count()
}

//! The tool-call gate end to end: the misbehaving fixture's tripwire
//! (`MCP_MISBEHAVING_TRIPWIRE`) lists tools without `readOnlyHint` (one plain, three with
//! the official conformance fixture's names; before 2025-03-26 every tool is unannotated)
//! and records each call of one. The whole suite at every revision, over stdio and
//! Streamable HTTP, under `readonly` and under `none`, must record none; under `all` it
//! records calls, so the tripwire itself works.

use std::path::Path;

use serde_json::Value;

use crate::support::*;

/// What the run recorded in the tripwire file: one `REVISION TOOL` line per call.
fn trips(file: &Path) -> Vec<String> {
    std::fs::read_to_string(file)
        .unwrap_or_default()
        .lines()
        .map(str::to_owned)
        .collect()
}

/// The whole suite against the tripwire fixture over `transport`, with `extra` flags.
fn tripwire_run(transport: &str, extra: &[&str]) -> (Vec<String>, Value, String) {
    let file = tempfile_path("tripwire.txt");
    let env = format!("MCP_MISBEHAVING_TRIPWIRE={}", file.display());
    let server = misbehaving();
    let serve = format!("{server} --transport http --bind 127.0.0.1:{{port}}");
    let mut args = [&whole_suite_args("4")[..], &["--env", &env], extra].concat();
    // Runs side by side: a port of its own (see `unshared_port`).
    let url = format!("http://127.0.0.1:{}/mcp", crate::support::unshared_port());
    match transport {
        "stdio" => args.extend(["--", server.as_str()]),
        _ => args.extend(["--url", url.as_str(), "--serve", serve.as_str()]),
    }
    let (code, report, text) = json_report("run", &args, &[]);
    assert!(code == 0 || code == 1, "exit {code}\n{text}");
    let calls = trips(&file);
    let _ = std::fs::remove_file(&file);
    (calls, report, text)
}

/// Each scenario's `field` (an array) in a (matrix) report, flattened.
fn scenario_items(report: &Value, field: &str) -> Vec<Value> {
    let legs = match report["legs"].as_array() {
        Some(legs) => legs.clone(),
        None => vec![report.clone()],
    };
    legs.iter()
        .flat_map(|leg| leg["scenarios"].as_array().cloned().unwrap_or_default())
        .flat_map(|s| s[field].as_array().cloned().unwrap_or_default())
        .collect()
}

/// Every `policy_skips` reason in a (matrix) report.
fn skip_reasons(report: &Value) -> Vec<String> {
    scenario_items(report, "policy_skips")
        .iter()
        .filter_map(|r| r.as_str().map(str::to_owned))
        .collect()
}

/// Every finding message of every scenario in a (matrix) report.
fn finding_messages(report: &Value) -> Vec<String> {
    scenario_items(report, "findings")
        .iter()
        .filter_map(|f| f["message"].as_str().map(str::to_owned))
        .collect()
}

/// The policy keeps calls back, and a call kept back is a skip: never a finding against
/// the server (a raw `http` step's `tools/call` once failed as "got no HTTP response").
#[test]
fn readonly_and_none_call_no_unannotated_tool_at_any_revision_on_either_transport() {
    for transport in ["stdio", "http"] {
        for policy in ["readonly", "none"] {
            let flags = ["--protocol-version", "all", "--call-tools", policy];
            let (calls, report, text) = tripwire_run(transport, &flags);
            assert!(
                calls.is_empty(),
                "{transport}, --call-tools {policy}: unannotated tools were called: {calls:?}\n{text}"
            );
            let reasons = skip_reasons(&report);
            let expected = match policy {
                "none" => "no_calls",
                _ => "fixture_not_asked",
            };
            assert!(
                reasons.iter().any(|r| r == expected),
                "{transport}, --call-tools {policy}: no call was skipped as {expected}: {reasons:?}"
            );
            let blamed: Vec<String> = finding_messages(&report)
                .into_iter()
                .filter(|m| m.contains("not sent: --call-tools"))
                .collect();
            assert!(
                blamed.is_empty(),
                "{transport}, --call-tools {policy}: calls the gate kept back were judged as the server's failures: {blamed:#?}"
            );
        }
    }
}

#[test]
fn all_calls_the_unannotated_tools_so_the_tripwire_works() {
    let flags = [
        "--protocol-version",
        "2025-11-25",
        "--call-tools",
        "all",
        "--include",
        "tools/*",
    ];
    let (calls, _, text) = tripwire_run("stdio", &flags);
    assert!(
        calls.iter().any(|c| c.ends_with(" tripwire")),
        "--call-tools all called no tripwire tool: {calls:?}\n{text}"
    );
}

#[test]
fn the_official_fixture_profile_calls_fixture_names_under_readonly_and_counts_them() {
    let flags = [
        "--protocol-version",
        "2025-11-25",
        "--profile",
        "official-fixture",
    ];
    let (calls, report, text) = tripwire_run("stdio", &flags);
    assert!(
        calls.iter().all(|c| c.contains(" test_")),
        "only fixture names may be called: {calls:?}\n{text}"
    );
    assert!(
        calls.iter().any(|c| c.ends_with(" test_simple_text")),
        "the profile did not call test_simple_text: {calls:?}\n{text}"
    );
    let counted: u64 = report["scenarios"]
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(|s| s["fixture_calls"].as_u64())
        .sum();
    assert_eq!(counted as usize, calls.len(), "{text}");
    assert!(
        text.contains("to official fixture tools not annotated readOnlyHint"),
        "the summary does not count the fixture calls\n{text}"
    );
}

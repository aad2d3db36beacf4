//! `--expected-failures`: listed failures pass, unlisted ones fail, listed ones that no longer
//! fail are stale and fail the run; `--update-baseline` rewrites the file.

use std::path::Path;

use crate::support::*;

/// The sweep plus the one scenario the garbage-stdout defect breaks: its failures are the
/// scenario `stdio/stdout-only-messages` and the sweep's rule `stdio.stdout-only-messages`.
fn args() -> Vec<&'static str> {
    [&["--include", "stdio/stdout-only-messages"][..], &FAST].concat()
}

fn run(baseline: &Path, extra: &[&str], server: &[&str]) -> (i32, serde_json::Value, String) {
    let mut args = args();
    let b = baseline.display().to_string();
    args.extend(["--expected-failures", &b]);
    args.extend(extra);
    run_json(&args, server)
}

fn write(path: &Path, text: &str) {
    std::fs::write(path, text).unwrap();
}

fn ids(v: &serde_json::Value) -> Vec<String> {
    let mut ids: Vec<String> = v
        .as_array()
        .unwrap()
        .iter()
        .map(|e| e["id"].as_str().unwrap().to_owned())
        .collect();
    ids.sort();
    ids
}

const BOTH: &str = "expected-failures:
  - id: stdio/stdout-only-messages
    reason: the server logs a banner to stdout; fix tracked upstream
  - id: stdio.stdout-only-messages
    reason: same banner, seen by the protocol sweep
";

#[test]
fn listed_failures_do_not_fail_the_run() {
    let file = tempfile_path("baseline.yaml");
    write(&file, BOTH);
    let (code, report, text) = run(&file, &[], &[&misbehaving(), "--defect", "garbage-stdout"]);
    let _ = std::fs::remove_file(&file);
    assert_eq!(code, 0, "{text}");
    assert_eq!(report["verdict"], "fail", "the raw verdict stays honest");
    assert_eq!(
        ids(&report["baseline"]["expected"]),
        ["stdio.stdout-only-messages", "stdio/stdout-only-messages"]
    );
    assert!(
        report["baseline"]["unexpected"]
            .as_array()
            .unwrap()
            .is_empty()
    );
    assert!(
        text.contains("baseline: 2 expected, 0 unexpected, 0 stale"),
        "{text}"
    );
}

#[test]
fn an_unlisted_failure_fails_the_run() {
    let file = tempfile_path("baseline.yaml");
    write(
        &file,
        "expected-failures:\n  - id: stdio/stdout-only-messages\n    reason: known\n",
    );
    let (code, report, text) = run(&file, &[], &[&misbehaving(), "--defect", "garbage-stdout"]);
    let _ = std::fs::remove_file(&file);
    assert_eq!(code, 1, "{text}");
    assert_eq!(
        ids(&report["baseline"]["unexpected"]),
        ["stdio.stdout-only-messages"]
    );
    assert!(
        text.contains("unexpected failure stdio.stdout-only-messages"),
        "{text}"
    );
}

#[test]
fn a_listed_failure_that_now_passes_is_stale_and_fails_the_run() {
    let file = tempfile_path("baseline.yaml");
    write(&file, BOTH);
    let (code, report, text) = run(&file, &[], &[&misbehaving()]);
    let _ = std::fs::remove_file(&file);
    assert_eq!(code, 1, "{text}");
    assert_eq!(report["verdict"], "pass");
    assert_eq!(
        ids(&report["baseline"]["stale"]),
        ["stdio.stdout-only-messages", "stdio/stdout-only-messages"]
    );
    assert!(
        text.contains("stale entry stdio/stdout-only-messages"),
        "{text}"
    );
}

#[test]
fn a_listed_scenario_that_did_not_run_is_unverified_not_stale() {
    let file = tempfile_path("baseline.yaml");
    write(
        &file,
        "expected-failures:\n  - id: tools/list-result\n    reason: not selected in this run\n",
    );
    let (code, report, text) = run(&file, &[], &[&misbehaving()]);
    let _ = std::fs::remove_file(&file);
    assert_eq!(code, 0, "{text}");
    assert_eq!(
        ids(&report["baseline"]["unverified"]),
        ["tools/list-result"]
    );
}

#[test]
fn update_baseline_writes_the_failures_and_keeps_known_reasons() {
    let file = tempfile_path("baseline.yaml");
    write(
        &file,
        "expected-failures:\n  - id: stdio/stdout-only-messages\n    reason: kept reason\n  - id: jsonrpc.version\n    reason: fixed since\n",
    );
    let server = [misbehaving(), "--defect".into(), "garbage-stdout".into()];
    let server: Vec<&str> = server.iter().map(String::as_str).collect();
    let (code, _, text) = run(&file, &["--update-baseline"], &server);
    assert_eq!(code, 0, "{text}");
    let written = std::fs::read_to_string(&file).unwrap();
    assert!(
        written.contains("\"stdio/stdout-only-messages\"\n    reason: \"kept reason\""),
        "{written}"
    );
    assert!(
        written.contains("\"stdio.stdout-only-messages\"\n    reason: \"TODO"),
        "{written}"
    );
    assert!(
        !written.contains("jsonrpc.version"),
        "a fixed failure stays listed: {written}"
    );
    // The rewritten file is accepted as is.
    let (code, _, text) = run(&file, &[], &server);
    let _ = std::fs::remove_file(&file);
    assert_eq!(code, 0, "{text}");
}

#[test]
fn a_malformed_baseline_is_a_usage_error() {
    let file = tempfile_path("baseline.yaml");
    write(&file, "expected-failures:\n  - id: x\n");
    let (code, _, text) = run(&file, &[], &[&misbehaving()]);
    let _ = std::fs::remove_file(&file);
    assert_eq!(code, 2, "{text}");
    assert!(text.contains("`reason` is missing"), "{text}");
}

/// The official suite's expected-failures file (`server: [ids]`) is read as is: an id
/// accepts the failures of the scenarios naming it (`official:`); one whose scenarios pass
/// is stale.
#[test]
fn the_official_suite_s_file_is_read_by_official_ids() {
    let file = tempfile_path("conformance-baseline.yml");
    let server = [
        misbehaving(),
        "--defect".into(),
        "input-schema-not-object".into(),
    ];
    let server: Vec<&str> = server.iter().map(String::as_str).collect();
    let args = [
        "--include",
        "tools/list-result",
        "--include",
        "lifecycle/ping-result",
    ];
    // The official format alone, plus mcpcheck's list for the sweep's schema finding (the
    // official suite has no sweep).
    write(
        &file,
        "server:\n  - tools-list\nclient:\n  - sse-retry\nexpected-failures:\n  - id: schema.valid\n    reason: add's inputSchema is an array; the sweep sees it too\n",
    );
    let (code, report, text) = run(&file, &args, &server);
    assert_eq!(code, 0, "{text}");
    assert_eq!(
        ids(&report["baseline"]["expected"]),
        ["schema.valid", "tools-list"]
    );
    let listed = report["scenarios"]
        .as_array()
        .unwrap()
        .iter()
        .find(|s| s["id"] == "tools/list-result")
        .unwrap();
    assert_eq!(listed["official"], serde_json::json!(["tools-list"]));
    // A listed official id whose scenario passes is stale and fails the run.
    write(
        &file,
        "server: [tools-list, ping]\nexpected-failures: [{id: schema.valid, reason: r}]\n",
    );
    let (code, report, text) = run(&file, &args, &server);
    assert_eq!(code, 1, "{text}");
    assert_eq!(ids(&report["baseline"]["stale"]), ["ping"]);
    // Without the entry the failure is unexpected.
    write(&file, "server: [ping]\n");
    let (code, report, text) = run(&file, &args, &server);
    let _ = std::fs::remove_file(&file);
    assert_eq!(code, 1, "{text}");
    let unexpected: Vec<&str> = report["baseline"]["unexpected"]
        .as_array()
        .unwrap()
        .iter()
        .map(|f| f["id"].as_str().unwrap())
        .collect();
    assert!(unexpected.contains(&"tools/list-result"), "{unexpected:?}");
}

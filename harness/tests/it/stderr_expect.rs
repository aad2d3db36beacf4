//! `expect: stderr` against real processes: a panic the server survives fails
//! `not_matches` and satisfies `matches`; a clean server passes `not_matches`; over HTTP,
//! where there is no stderr to read, the scenario is skipped with that reason, never passed.

use crate::support::*;
use serde_json::Value;

/// A scenario that sends a request with a 5000-byte string, then checks stderr.
fn scenario(check: &str, transports: &str) -> std::path::PathBuf {
    let path = tempfile_path("stderr-scenario.yaml");
    let request = serde_json::json!({"jsonrpc": "2.0", "id": 70, "method": "tools/list",
                                     "params": {"cursor": "A".repeat(5000)}});
    // A JSON string is a YAML double-quoted scalar.
    let raw = serde_json::to_string(&format!("{request}\n")).unwrap();
    let text = format!(
        "id: test/stderr\ntitle: stderr check\nspec: basic/lifecycle\ntransports: [{transports}]\nsteps:\n  - initialize:\n  - send_raw: {raw}\n  - expect: {{ response: {{ id: 70, within: 2s, any: {{}} }} }}\n  - expect: {{ stderr: {{ {check}, within: 1s }} }}\n"
    );
    std::fs::write(&path, text).unwrap();
    path
}

fn verdict(report: &Value) -> Value {
    report["scenarios"]
        .as_array()
        .and_then(|s| s.iter().find(|s| s["id"] == "test/stderr"))
        .cloned()
        .unwrap_or(Value::Null)
}

#[test]
fn a_survived_panic_fails_not_matches_and_satisfies_matches() {
    let not = scenario("not_matches: 'panicked at'", "stdio");
    let (code, report, text) = run_json(
        &[not.to_str().unwrap()],
        &[&misbehaving(), "--defect", "stderr-panic"],
    );
    let s = verdict(&report);
    assert_eq!(code, 1, "{text}");
    assert_eq!(s["verdict"], "fail", "{s:#}");
    let f = &s["findings"][0];
    assert!(
        f["message"]
            .as_str()
            .unwrap()
            .contains("the server's stderr matches /panicked at/"),
        "{f:#}"
    );
    assert!(
        f["evidence"].as_str().unwrap().contains("stderr-panic"),
        "{f:#}"
    );

    // The same check on a server that does not panic passes.
    let (code, report, text) = run_json(&[not.to_str().unwrap()], &[&misbehaving()]);
    assert_eq!(verdict(&report)["verdict"], "pass", "{text}");
    assert_eq!(code, 0, "{text}");

    let is = scenario("matches: 'overflows the \\d+-byte field buffer'", "stdio");
    let (_, report, text) = run_json(
        &[is.to_str().unwrap()],
        &[&misbehaving(), "--defect", "stderr-panic"],
    );
    assert_eq!(verdict(&report)["verdict"], "pass", "{text}");
    let (_, report, text) = run_json(&[is.to_str().unwrap()], &[&misbehaving()]);
    let s = verdict(&report);
    assert_eq!(s["verdict"], "fail", "{text}");
    assert!(
        s["findings"][0]["message"]
            .as_str()
            .unwrap()
            .contains("no line of the server's stderr matched"),
        "{s:#}"
    );
    for p in [not, is] {
        let _ = std::fs::remove_file(p);
    }
}

#[test]
fn over_http_stderr_is_a_skip_not_a_pass() {
    let server = misbehaving_http(&["--defect", "stderr-panic"]);
    let path = scenario("not_matches: 'panicked at'", "stdio, http");
    let (_, report, text) = run_url_json(&server.url, &[path.to_str().unwrap()]);
    let s = verdict(&report);
    assert_eq!(s["verdict"], "skip", "{s:#}\n{text}");
    assert!(
        s["reason"]
            .as_str()
            .unwrap_or_default()
            .contains("not available over HTTP"),
        "{s:#}"
    );
    let _ = std::fs::remove_file(path);
}

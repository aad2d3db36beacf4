//! `mcpcheck client` against real clients: the fixture client passes every client scenario
//! at every revision, each of its defects is caught by exactly the check written for it,
//! and the Python SDK's client passes too.

use serde_json::Value;

use crate::support::{fixture, mcpcheck, require, workspace};

/// Runs `mcpcheck client` on `command` at `revisions` (all when empty): exit code, report.
fn client(command: &str, revisions: &[&str]) -> (i32, Value) {
    let mut cmd = mcpcheck();
    cmd.args([
        "client",
        "--command",
        command,
        "--timeout",
        "10s",
        "--format",
        "json",
    ]);
    for r in revisions {
        cmd.args(["--protocol-version", r]);
    }
    let out = cmd.output().unwrap();
    let report = serde_json::from_slice(&out.stdout).unwrap_or_else(|e| {
        panic!(
            "no JSON report ({e}): {}",
            String::from_utf8_lossy(&out.stderr)
        )
    });
    (out.status.code().unwrap_or(-1), report)
}

/// `(scenario id, verdict, rules of its own and protocol findings)` of every scenario leg.
fn verdicts(report: &Value) -> Vec<(String, String, Vec<String>)> {
    let mut out = Vec::new();
    for leg in report["legs"].as_array().unwrap() {
        for s in leg["scenarios"].as_array().unwrap() {
            let mut rules: Vec<String> = ["findings", "protocol"]
                .iter()
                .flat_map(|k| s[k].as_array().unwrap().clone())
                .map(|f| f["rule"].as_str().unwrap().to_owned())
                .collect();
            rules.sort();
            rules.dedup();
            let verdict = s["verdict"].as_str().unwrap().to_owned();
            out.push((s["id"].as_str().unwrap().to_owned(), verdict, rules));
        }
    }
    out
}

fn fixture_client() -> String {
    fixture("mcp-fixture-client").display().to_string()
}

#[test]
fn the_correct_fixture_client_passes_every_scenario_at_every_revision() {
    let (code, report) = client(&fixture_client(), &[]);
    let all = verdicts(&report);
    assert_eq!(
        report["legs"].as_array().unwrap().len(),
        4,
        "every handshake revision"
    );
    for (id, verdict, rules) in &all {
        assert!(
            (verdict == "pass" || verdict == "skip") && rules.is_empty(),
            "{id}: {verdict} {rules:?}"
        );
    }
    assert!(
        all.iter().filter(|v| v.1 == "pass").count() >= 13,
        "{all:?}"
    );
    assert_eq!(code, 0);
}

#[test]
fn each_defect_is_caught_by_its_check_and_no_other() {
    // (defect, the rule or scenario that must catch it).
    const CAUGHT: &[(&str, &str)] = &[
        ("no-initialized", "client.initialized-sent"),
        ("list-before-init", "client.initialize-first"),
        ("accept-json-only", "client.http-accept"),
        ("no-session-id", "client.http-session-id"),
        ("no-version-header", "client.http-protocol-version"),
        ("reused-id", "client.request-id-unique"),
        ("undeclared-prompts", "client.server-capability-respected"),
        ("string-arguments", "client/tools-call"),
        ("no-defaults", "client/elicitation-defaults"),
        ("ping-unanswered", "client/ping-answered"),
    ];
    let listed = std::process::Command::new(fixture_client())
        .arg("--list-defects")
        .output()
        .unwrap();
    let listed = String::from_utf8(listed.stdout).unwrap();
    assert_eq!(
        listed.lines().count(),
        CAUGHT.len(),
        "every defect is proved: {listed}"
    );
    // What a defect may bring along: not sending `initialized` also means requests before it.
    const ALONG: &[&str] = &["client.initialized-before-operation", "client/initialize"];
    for (defect, catcher) in CAUGHT {
        let command = format!("{} --defect {defect}", fixture_client());
        let (code, report) = client(&command, &["2025-11-25"]);
        let all = verdicts(&report);
        let caught = all.iter().any(|(id, verdict, rules)| {
            rules.iter().any(|r| r == catcher) || (id == catcher && verdict == "fail")
        });
        assert!(caught, "{defect}: not caught by {catcher}: {all:?}");
        for (id, verdict, rules) in &all {
            let others: Vec<&String> = rules
                .iter()
                .filter(|r| *r != catcher && !ALONG.contains(&r.as_str()))
                .collect();
            assert!(others.is_empty(), "{defect}: {id} also broke {others:?}");
            let owns = id == catcher || ALONG.contains(&id.as_str());
            assert!(verdict != "fail" || owns, "{defect}: {id} failed too");
        }
        assert_eq!(code, 1, "{defect}: a caught defect fails the run");
    }
}

#[test]
fn the_python_sdk_client_passes_every_scenario() {
    let Some(python) = require::python_venv() else {
        return;
    };
    let script = workspace().join("thirdparty/clients/python_client.py");
    let command = format!("{} {}", python.display(), script.display());
    let (code, report) = client(&command, &["2025-06-18", "2025-11-25"]);
    for (id, verdict, rules) in verdicts(&report) {
        assert!(
            (verdict == "pass" || verdict == "skip") && rules.is_empty(),
            "{id}: {verdict} {rules:?}"
        );
    }
    assert_eq!(code, 0);
}

#[test]
fn a_broken_client_scenario_file_is_a_usage_error_with_its_line() {
    let dir = crate::support::tempfile_path("client-scenarios");
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::write(
        dir.join("bad.yaml"),
        "role: client\nid: client/bad\ntitle: t\nspec: server/tools\nsteps:\n  - send: ping\n",
    )
    .unwrap();
    let out = mcpcheck()
        .args(["client", "--command", "true", "--scenario-dir"])
        .arg(&dir)
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{stderr}");
    assert!(stderr.contains("bad.yaml:6"), "{stderr}");
    assert!(stderr.contains("held request"), "{stderr}");
}

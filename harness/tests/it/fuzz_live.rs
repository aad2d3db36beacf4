//! `mcpcheck fuzz` against live servers: each crash, hang, huge-input and stderr-panic
//! defect of the misbehaving fixture is found with a fixed seed and a short budget, its
//! reproducer is minimized and `mcpcheck run` on it fails the same way; the reference
//! fixture yields nothing; a seed replays the same inputs; tools are called by policy.

use std::path::PathBuf;

use crate::support::*;
use serde_json::Value;

const SEED: &str = "7";

/// Runs `mcpcheck fuzz` with a JSON report; returns (exit code, report, output, out dir).
fn fuzz(extra: &[&str], server: &[&str]) -> (i32, Value, String, PathBuf) {
    let out_dir = tempfile_path("repros");
    let fixed = ["--seed", SEED, "--timeout", "1s", "--out"];
    let args = [
        &fixed[..],
        &[out_dir.to_str().unwrap()],
        extra,
        &["--"],
        server,
    ]
    .concat();
    let (code, report, text) = json_report("fuzz", &args, &[]);
    (code, report, text, out_dir)
}

/// Fuzzes the misbehaving fixture with one defect and checks the finding end to end:
/// found, reproducer minimized to at most `max_writes` writes, replay fails the same way.
fn finds(defect: &str, oracle: &str, evidence: &str, replay_says: &str, max_writes: u64) {
    let server = [misbehaving(), "--defect".into(), defect.into()];
    let server: Vec<&str> = server.iter().map(String::as_str).collect();
    let (code, report, text, out_dir) = fuzz(&["--duration", "20s"], &server);
    assert_eq!(code, 1, "findings mean exit 1\n{text}");
    let findings = report["findings"].as_array().cloned().unwrap_or_default();
    let f = findings
        .iter()
        .find(|f| f["signature"]["oracle"] == oracle)
        .unwrap_or_else(|| panic!("no {oracle} finding\n{text}"));
    let ev = f["finding"]["evidence"]
        .as_str()
        .unwrap_or_default()
        .to_owned()
        + f["finding"]["message"].as_str().unwrap_or_default();
    assert!(ev.contains(evidence), "evidence lacks {evidence:?}: {f:#}");
    assert_eq!(f["reproduced"], true, "{f:#}\n{text}");
    let after = f["writes_after"].as_u64().unwrap();
    assert!(
        after <= max_writes && after <= f["writes_before"].as_u64().unwrap(),
        "not minimized: {f:#}"
    );
    let repro = PathBuf::from(f["reproducer"].as_str().expect("a reproducer path"));
    assert!(repro.starts_with(&out_dir) && repro.is_file(), "{repro:?}");

    // The reproducer replays through `mcpcheck run` and fails the same way.
    let (code, run, text) = run_json(&[repro.to_str().unwrap()], &server);
    assert_eq!(code, 1, "{text}");
    let scenario = scenario_starting(&run, "fuzz/")
        .unwrap_or_else(|| panic!("the reproducer did not run\n{text}"))
        .clone();
    assert_eq!(scenario["verdict"], "fail", "{scenario:#}");
    let messages: Vec<&str> = scenario["findings"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|f| f["message"].as_str())
        .collect();
    assert!(
        messages.iter().any(|m| m.contains(replay_says)),
        "replay findings {messages:?} lack {replay_says:?}"
    );
    let _ = std::fs::remove_dir_all(&out_dir);
}

#[test]
fn finds_the_crash() {
    finds(
        "crash-mid-session",
        "crash",
        "fatal: boom",
        "the server ended (exit code 3)",
        1,
    );
}

#[test]
fn finds_the_panic_on_stderr() {
    finds(
        "panic-on-tools-list",
        "crash",
        "panicked at",
        "the server ended (killed by SIGABRT)",
        1,
    );
}

/// A panic the server survives: only its stderr shows it. The reproducer checks stderr
/// with `expect: stderr`, so `mcpcheck run` on it fails too.
#[test]
fn finds_the_panic_the_server_survives() {
    finds(
        "stderr-panic",
        "stderr-crash-text",
        "panicked at",
        "the server's stderr matches",
        1,
    );
}

#[test]
fn finds_the_hang() {
    finds(
        "hang",
        "no-response",
        "tools/list",
        "no response with id",
        1,
    );
}

#[test]
fn finds_the_huge_input_crash() {
    finds(
        "huge-input",
        "crash",
        "input buffer overflow",
        "the server ended (exit code 70)",
        1,
    );
}

#[test]
fn the_reference_server_yields_no_findings() {
    // A fixed number of cases, so coverage does not depend on the machine's speed.
    let (code, report, text, out_dir) = fuzz(&["--iterations", "240"], &[&reference()]);
    assert_eq!(code, 0, "{text}");
    assert_eq!(report["findings"], serde_json::json!([]), "{text}");
    assert!(report["messages"].as_u64().unwrap() > 100, "{text}");
    let methods = report["methods"].as_object().unwrap();
    assert!(methods.len() >= 10, "{methods:?}");
    assert!(
        methods.values().all(|n| n.as_u64() > Some(0)),
        "coverage {methods:?}"
    );
    // The destructive tool is never offered, let alone called.
    assert!(report["tools"].get("write_note").is_none(), "{text}");
    let calls: u64 = report["tools"]
        .as_object()
        .unwrap()
        .values()
        .filter_map(Value::as_u64)
        .sum();
    assert!(calls > 0, "no tool was called: {text}");
    assert!(!out_dir.exists(), "no reproducers without findings");
}

/// The cases a dry run prints (stderr lines starting with `case`).
fn dry_run(extra: &[&str]) -> Vec<String> {
    let output = mcpcheck()
        .args(["fuzz", "--dry-run", "--seed", SEED])
        .args(extra)
        .arg("--")
        .arg(reference())
        .output()
        .unwrap();
    assert_eq!(output.status.code(), Some(0), "{}", describe(&output));
    String::from_utf8_lossy(&output.stderr)
        .lines()
        .filter(|l| l.starts_with("case "))
        .map(str::to_owned)
        .collect()
}

#[test]
fn a_seed_replays_the_same_inputs_and_tools_follow_the_policy() {
    let a = dry_run(&["--iterations", "400"]);
    assert!(a.len() >= 400, "{}", a.len());
    assert_eq!(
        a,
        dry_run(&["--iterations", "400"]),
        "same seed, same cases"
    );
    let other = mcpcheck()
        .args([
            "fuzz",
            "--dry-run",
            "--iterations",
            "400",
            "--seed",
            "8",
            "--",
        ])
        .arg(reference())
        .output()
        .unwrap();
    let other: Vec<String> = String::from_utf8_lossy(&other.stderr)
        .lines()
        .filter(|l| l.starts_with("case "))
        .map(str::to_owned)
        .collect();
    assert_ne!(a, other, "another seed, other cases");

    let calls = |cases: &[String]| -> Vec<String> {
        cases
            .iter()
            .filter(|c| c.contains("\"tools/call\""))
            .cloned()
            .collect()
    };
    assert!(!calls(&a).is_empty());
    assert!(
        calls(&a).iter().all(|c| !c.contains("write_note")),
        "destructive tool called"
    );
    let none = dry_run(&["--iterations", "400", "--call-tools", "none"]);
    for c in calls(&none) {
        assert!(
            [
                "echo",
                "add",
                "fail",
                "slow",
                "log",
                "touch_resource",
                "write_note"
            ]
            .iter()
            .all(|t| !c.contains(&format!("\"name\":\"{t}\""))),
            "--call-tools none called a tool: {c}"
        );
    }
    let destructive = dry_run(&[
        "--iterations",
        "400",
        "--call-tools",
        "all",
        "--allow-destructive",
    ]);
    assert!(
        calls(&destructive).iter().any(|c| c.contains("write_note")),
        "--allow-destructive offers the destructive tool too"
    );
}

//! The command line's contract: exit codes, clear errors for bad input, schema resolution
//! and `schemas fetch` against a loopback server.

use crate::support::*;

fn run(args: &[&str]) -> (i32, String) {
    let out = mcpcheck().args(args).output().unwrap();
    (out.status.code().unwrap_or(-1), describe(&out))
}

#[test]
fn usage_errors_exit_2_with_a_clear_message() {
    let cases: &[(&[&str], &str)] = &[
        (&["run"], "no server to check"),
        (
            &["run", "--timeout", "soon", "--", "true"],
            "invalid value 'soon' for '--timeout",
        ),
        (
            &["run", "--protocol-version", "2025-01-01", "--", "true"],
            "unknown protocol revision `2025-01-01`",
        ),
        (
            &["run", "--env", "NOEQUALS", "--", "true"],
            "expected KEY=VALUE",
        ),
        (
            &["run", "--cwd", "/definitely/not/here", "--", "true"],
            "not a directory",
        ),
        (&["run", "--server", "a", "--", "b"], "cannot be used with"),
        (&["run", "--bogus-flag"], "unexpected argument"),
    ];
    for (args, needle) in cases {
        let (code, text) = run(args);
        assert_eq!(code, 2, "{args:?}: {text}");
        assert!(
            text.contains(needle),
            "{args:?}: expected {needle:?} in\n{text}"
        );
    }
}

#[test]
fn a_command_that_cannot_start_is_a_harness_error() {
    let (code, text) = run(&["run", "--", "/no/such/server-binary", "--flag"]);
    assert_eq!(code, 2, "{text}");
    assert!(
        text.contains("could not start `/no/such/server-binary --flag`"),
        "{text}"
    );
}

#[test]
fn schemas_fetch_verifies_the_pins() {
    let dest = tempfile_path("schemas");
    let (base, server) = serve_schemas(5, Serving::default());
    let (code, text) = run(&[
        "schemas",
        "fetch",
        "--base-url",
        &base,
        "--dest",
        dest.to_str().unwrap(),
    ]);
    server.join().unwrap();
    assert_eq!(code, 0, "{text}");
    for rev in [
        "2024-11-05",
        "2025-03-26",
        "2025-06-18",
        "2025-11-25",
        "2026-07-28",
    ] {
        assert!(
            dest.join(rev).join("schema.json").is_file(),
            "{rev} missing: {text}"
        );
    }

    let dest = tempfile_path("schemas-tampered");
    let (base, server) = serve_schemas(
        5,
        Serving {
            tamper: Some("2025-06-18"),
            ..Serving::default()
        },
    );
    let (code, text) = run(&[
        "schemas",
        "fetch",
        "--base-url",
        &base,
        "--dest",
        dest.to_str().unwrap(),
    ]);
    server.join().unwrap();
    assert_eq!(code, 2, "{text}");
    assert!(
        text.contains("2025-06-18/schema.json: checksum mismatch"),
        "{text}"
    );
    assert!(
        !dest.join("2025-06-18/schema.json").exists(),
        "a tampered schema must not be saved"
    );
    assert!(dest.join("2025-11-25/schema.json").exists());
}

#[test]
fn schemas_list_reports_origin_and_pin() {
    let (code, text) = run(&["schemas", "list"]);
    assert_eq!(code, 0, "{text}");
    assert!(
        text.contains("2025-11-25") && text.contains("matches pin"),
        "{text}"
    );
}

/// `mcpcheck list --format json`: the suite as data, every scenario once with its fields.
#[test]
fn list_as_json_gives_each_scenario_with_its_fields() {
    let out = mcpcheck()
        .args(["list", "--format", "json"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(0), "{}", describe(&out));
    let list: Vec<serde_json::Value> = serde_json::from_slice(&out.stdout).unwrap();
    assert!(list.len() > 50, "{} scenarios", list.len());
    let ids: std::collections::BTreeSet<&str> =
        list.iter().filter_map(|s| s["id"].as_str()).collect();
    assert_eq!(ids.len(), list.len(), "ids are unique");
    let s = list
        .iter()
        .find(|s| s["id"] == "tools/list-result")
        .expect("tools/list-result is listed");
    assert_eq!(s["area"], "tools");
    assert_eq!(s["severity"], "must");
    assert!(s["title"].as_str().is_some_and(|t| !t.is_empty()), "{s:#}");
    assert!(s["spec"].as_str().is_some_and(|t| t.contains('#')), "{s:#}");
    assert!(
        s["revisions"]
            .as_array()
            .unwrap()
            .contains(&"2025-11-25".into()),
        "{s:#}"
    );
    assert_eq!(
        s["transports"],
        serde_json::json!(["stdio", "http"]),
        "{s:#}"
    );
    assert_eq!(s["requires"], serde_json::json!(["tools"]), "{s:#}");
}

/// A reader that stops reading (`mcpcheck list | head`) ends the output, not the program:
/// no panic on the closed pipe, exit 0.
/// `mcpcheck list --rules`: every rule a finding can carry, once, with its severity and the
/// spec section behind it per revision; the table ends with the count.
#[test]
fn list_rules_gives_every_rule_with_its_severity_and_sections() {
    let out = mcpcheck()
        .args(["list", "--rules", "--format", "json"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(0), "{}", describe(&out));
    let rules: Vec<serde_json::Value> = serde_json::from_slice(&out.stdout).unwrap();
    let ids: std::collections::BTreeSet<&str> =
        rules.iter().filter_map(|r| r["id"].as_str()).collect();
    assert_eq!(ids.len(), rules.len(), "ids are unique");
    assert!(
        rules
            .iter()
            .filter(|r| r["id"].as_str().unwrap().starts_with("client."))
            .count()
            >= 29
    );
    let meta = rules
        .iter()
        .find(|r| r["id"] == "client.request-meta")
        .expect("client.request-meta is listed");
    assert_eq!(meta["severity"], "must");
    assert_eq!(meta["sections"]["2026-07-28"], "basic#meta");
    let info = rules
        .iter()
        .find(|r| r["id"] == "client.request-meta-client-info")
        .unwrap();
    assert_eq!(info["severity"], "should");
    let (code, table) = run(&["list", "--rules"]);
    assert_eq!(code, 0, "{table}");
    assert!(table.contains(&format!("{} rules", rules.len())), "{table}");
    // With a scenario list it is a usage error: rules are not scenarios.
    let (code, text) = run(&["list", "--rules", "--client"]);
    assert_eq!(code, 2, "{text}");
}

#[test]
fn a_closed_stdout_is_not_a_panic() {
    for args in [
        &["list"][..],
        &["list", "--format", "json"],
        &["schemas", "list"],
    ] {
        let mut child = mcpcheck()
            .args(args)
            .stdout(std::process::Stdio::piped())
            .stderr(std::process::Stdio::piped())
            .spawn()
            .unwrap();
        // The read end closes before mcpcheck writes: its write meets a closed pipe.
        drop(child.stdout.take());
        let out = child.wait_with_output().unwrap();
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(0), "{args:?}: {stderr}");
        assert!(!stderr.contains("panicked"), "{args:?}: {stderr}");
    }
}

#[test]
fn explain_tells_a_rule_and_a_scenario_and_suggests_for_a_typo() {
    let (code, text) = run(&["explain", "stdio.stdout-only-messages"]);
    assert_eq!(code, 0, "{text}");
    for needed in [
        "MUST (a failure)",
        "basic/transports",
        "Usual causes, and the fix:",
    ] {
        assert!(text.contains(needed), "{needed:?} missing: {text}");
    }
    let out = mcpcheck()
        .args(["explain", "lifecycle/initialize-result", "--format", "json"])
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", describe(&out));
    let e: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(e["kind"], "scenario");
    assert_eq!(e["source"], "scenarios/lifecycle/initialize-result.yaml");
    assert!(!e["causes"].as_array().unwrap().is_empty(), "{e}");
    let (code, text) = run(&["explain", "tools/list-reslt"]);
    assert_eq!(code, 2, "{text}");
    assert!(text.contains("did you mean `tools/list-result`?"), "{text}");
}

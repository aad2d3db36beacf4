//! `mcpcheck run` against real server processes over stdio: the rmcp reference fixture
//! must pass at every handshake revision, and every misbehaving-fixture defect must be
//! caught with exactly the rules it breaks.

use std::collections::BTreeSet;

use crate::support::*;

/// These tests are about the protocol sweep; the scenario suite has its own
/// (suite_mutation.rs), so it is excluded here to keep the runs short.
fn sweep_only() -> Vec<&'static str> {
    [&["--exclude", "*"][..], &FAST].concat()
}

#[test]
fn reference_passes_at_every_handshake_revision_with_schema_checks_run() {
    for rev in ["2024-11-05", "2025-03-26", "2025-06-18", "2025-11-25"] {
        let (code, report, text) = run_json(
            &["--exclude", "*", "--protocol-version", rev],
            &[&reference()],
        );
        assert_eq!(code, 0, "{rev}: {text}\n{report:#}");
        assert_eq!(report["verdict"], "pass", "{rev}");
        assert_eq!(
            report["revision"], rev,
            "{rev}: negotiated a different revision"
        );
        assert_eq!(
            report["schema"]["status"], "checked",
            "{rev}: {:#}",
            report["schema"]
        );
        assert_eq!(report["schema"]["revision"], rev);
        assert!(
            report["schema"]["messages"].as_u64().unwrap() >= 7,
            "{rev}: {:#}",
            report["schema"]
        );
        assert!(
            report["findings"].as_array().unwrap().is_empty(),
            "{rev}: {:#}",
            report["findings"]
        );
        let steps: Vec<_> = report["steps"]
            .as_array()
            .unwrap()
            .iter()
            .map(|s| (s["name"].as_str().unwrap(), s["status"].as_str().unwrap()))
            .collect();
        assert!(
            steps.iter().all(|(_, s)| *s == "passed"),
            "{rev}: {steps:?}"
        );
        assert_eq!(report["shutdown"]["stage"], "stdin_closed");
    }
}

/// Each defect, and the exact set of failure-level rules mcpcheck must report for it.
const DEFECTS: &[(&str, &[&str])] = &[
    ("garbage-stdout", &["stdio.stdout-only-messages"]),
    ("pretty-print", &["stdio.newline-delimited"]),
    ("wrong-jsonrpc", &["jsonrpc.version"]),
    ("id-type-changed", &["jsonrpc.id-echoed"]),
    (
        "id-mismatch",
        &[
            "jsonrpc.response-matches-request",
            "session.response-unusable",
        ],
    ),
    ("crash-mid-session", &["session.server-exited"]),
    ("panic-on-tools-list", &["session.server-exited"]),
    ("hang", &["session.request-timeout"]),
    ("exit-on-initialized", &["session.server-exited"]),
    ("invalid-initialize-result", &["schema.valid"]),
    ("invalid-tool-schema", &["schema.valid"]),
    ("result-and-error", &["jsonrpc.result-xor-error"]),
    ("error-without-code", &["jsonrpc.error-object"]),
    ("respond-to-notification", &["jsonrpc.id-type"]),
    ("version-empty", &["lifecycle.version-negotiation"]),
    ("no-trailing-newline", &["session.request-timeout"]),
    // Answers held until stdin closes are named for what they are.
    (
        "unflushed-stdout",
        &["session.request-timeout", "stdio.stdout-flushed"],
    ),
];

#[test]
fn every_defect_is_caught_by_exactly_its_rules() {
    let server = misbehaving();
    let mut problems = Vec::new();
    for (defect, expected) in DEFECTS {
        let (code, report, text) = run_json(&sweep_only(), &[&server, "--defect", defect]);
        let got: BTreeSet<String> = failures(&report).into_iter().collect();
        let want: BTreeSet<String> = expected.iter().map(|s| s.to_string()).collect();
        if code != 1 || got != want {
            problems.push(format!(
                "{defect}: exit {code}, failures {got:?}, expected {want:?}\n{text}"
            ));
        }
    }
    assert!(problems.is_empty(), "{}", problems.join("\n\n"));
}

#[test]
fn the_correct_misbehaving_server_and_crlf_pass() {
    for args in [vec![], vec!["--defect", "crlf"]] {
        let mut cmd = vec![misbehaving()];
        cmd.extend(args.iter().map(|s| s.to_string()));
        let cmd: Vec<&str> = cmd.iter().map(String::as_str).collect();
        let (code, report, text) = run_json(&sweep_only(), &cmd);
        assert_eq!(code, 0, "{args:?}: {text}\n{:#}", report["findings"]);
    }
}

#[test]
fn findings_point_at_the_frame_and_quote_the_evidence() {
    let (_, report, _) = run_json(
        &sweep_only(),
        &[&misbehaving(), "--defect", "garbage-stdout"],
    );
    let f = &report["findings"][0];
    assert_eq!(f["rule"], "stdio.stdout-only-messages");
    assert!(
        f["spec"]
            .as_str()
            .unwrap()
            .ends_with("/2025-11-25/basic/transports#stdio"),
        "{f:#}"
    );
    let frame = f["frame"].as_u64().unwrap() as usize;
    let line = report["transcript"][frame]["text"].as_str().unwrap();
    assert!(
        !line.starts_with('{'),
        "the frame is the noise line: {line}"
    );
    assert!(f["evidence"].as_str().unwrap().contains(line), "{f:#}");

    let (_, report, _) = run_json(
        &sweep_only(),
        &[&misbehaving(), "--defect", "id-type-changed"],
    );
    let f = report["findings"]
        .as_array()
        .unwrap()
        .iter()
        .find(|f| f["rule"] == "jsonrpc.id-echoed")
        .unwrap();
    assert_eq!(f["pointer"], "/id");
    assert!(
        f["message"]
            .as_str()
            .unwrap()
            .contains("different JSON type"),
        "{f:#}"
    );

    let (_, report, _) = run_json(
        &sweep_only(),
        &[&misbehaving(), "--defect", "invalid-tool-schema"],
    );
    let f = report["findings"]
        .as_array()
        .unwrap()
        .iter()
        .find(|f| f["rule"] == "schema.valid")
        .unwrap();
    assert!(
        f["expected"]
            .as_str()
            .unwrap()
            .starts_with("ListToolsResult"),
        "{f:#}"
    );
    assert!(
        f["pointer"].as_str().unwrap().starts_with("/result/tools/"),
        "{f:#}"
    );
    assert!(
        f["message"].as_str().unwrap().contains("inputSchema"),
        "{f:#}"
    );
}

#[test]
fn a_crash_names_the_exit_and_quotes_stderr() {
    let (_, report, _) = run_json(
        &sweep_only(),
        &[&misbehaving(), "--defect", "crash-mid-session"],
    );
    let f = &report["findings"][0];
    assert!(
        f["message"].as_str().unwrap().contains("exit code 3"),
        "{f:#}"
    );
    assert!(
        f["evidence"].as_str().unwrap().contains("fatal: boom"),
        "{f:#}"
    );
    let skipped: Vec<_> = report["steps"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|s| s["status"] == "skipped")
        .collect();
    assert_eq!(
        skipped.len(),
        3,
        "steps after the crash are skipped, not failed again: {:#}",
        report["steps"]
    );

    let (_, report, _) = run_json(
        &sweep_only(),
        &[&misbehaving(), "--defect", "panic-on-tools-list"],
    );
    let f = &report["findings"][0];
    assert!(f["message"].as_str().unwrap().contains("SIGABRT"), "{f:#}");
    assert!(
        f["evidence"].as_str().unwrap().contains("panicked"),
        "{f:#}"
    );
}

#[test]
fn a_server_that_ignores_stdin_close_and_sigterm_is_killed_and_reported() {
    let marker = marker("ignore-stdin-close");
    let (code, report, text) = run_json(
        &[&sweep_only()[..], &["--env", &marker]].concat(),
        &[&misbehaving(), "--defect", "ignore-stdin-close"],
    );
    assert_eq!(
        code, 0,
        "a SHOULD-level warning does not fail the run: {text}"
    );
    assert_eq!(
        report["shutdown"]["stage"], "killed",
        "{:#}",
        report["shutdown"]
    );
    assert_eq!(
        findings_at(&report, "warning"),
        vec!["stdio.exit-on-stdin-close"]
    );
    assert!(
        eventually(5, || processes_with_env(&marker).is_empty()),
        "server survived: {:?}",
        processes_with_env(&marker)
    );
}

#[test]
fn a_hanging_server_is_timed_out_and_leaves_no_process() {
    let marker = marker("hang");
    let (code, report, _) = run_json(
        &[&sweep_only()[..], &["--env", &marker]].concat(),
        &[&misbehaving(), "--defect", "hang"],
    );
    assert_eq!(code, 1);
    assert_eq!(failures(&report), vec!["session.request-timeout"]);
    assert!(eventually(5, || processes_with_env(&marker).is_empty()));
}

#[test]
fn a_stderr_flood_is_drained_without_deadlock() {
    let (code, report, text) =
        run_json(&sweep_only(), &[&misbehaving(), "--defect", "stderr-flood"]);
    assert_eq!(code, 0, "{text}");
    assert!(
        report["stderr"]["bytes"].as_u64().unwrap() >= 100_000_000,
        "{:#}",
        report["stderr"]
    );
    assert_eq!(report["verdict"], "pass");
}

#[test]
fn sigterm_to_mcpcheck_kills_the_server_group() {
    let marker = marker("sigterm");
    let mut child = spawn_on_hanging_server(&marker);
    // Let the session reach the hanging request.
    std::thread::sleep(std::time::Duration::from_millis(300));
    nix::sys::signal::kill(
        nix::unistd::Pid::from_raw(child.id() as i32),
        nix::sys::signal::Signal::SIGTERM,
    )
    .unwrap();
    let status = child.wait().unwrap();
    assert_eq!(status.code(), Some(143));
    assert!(
        eventually(5, || processes_with_env(&marker).is_empty()),
        "server survived SIGTERM to mcpcheck: {:?}",
        processes_with_env(&marker)
    );
}

#[test]
fn sigkill_to_mcpcheck_still_takes_the_server_down() {
    let marker = marker("sigkill");
    let mut child = spawn_on_hanging_server(&marker);
    child.kill().unwrap();
    child.wait().unwrap();
    assert!(
        eventually(5, || processes_with_env(&marker).is_empty()),
        "server survived SIGKILL of mcpcheck"
    );
}

/// Starts mcpcheck against a server that never answers `tools/list`, and waits until
/// the server (found by its marker variable) is running.
fn spawn_on_hanging_server(marker: &str) -> std::process::Child {
    let child = mcpcheck()
        .args(["run", "--timeout", "60s", "--env", marker, "--"])
        .args([misbehaving().as_str(), "--defect", "hang"])
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .spawn()
        .unwrap();
    assert!(
        eventually(10, || !processes_with_env(marker).is_empty()),
        "the server never started"
    );
    child
}

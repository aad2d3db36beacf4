//! A server that loses answers: the first loss costs a whole `--timeout` to prove, later
//! ones end at what the server's answer times allow (`session::pace`), and the session that
//! lost one goes on serving the next scenario instead of costing a new server.

use serde_json::Value;

use crate::support::*;

/// Every finding message of the report's scenarios.
fn messages(report: &Value) -> Vec<String> {
    report["scenarios"]
        .as_array()
        .into_iter()
        .flatten()
        .flat_map(|s| s["findings"].as_array().into_iter().flatten())
        .filter_map(|f| f["message"].as_str().map(str::to_owned))
        .collect()
}

#[test]
fn a_server_proven_to_lose_answers_costs_one_timeout_not_one_per_loss() {
    let args = [
        "--protocol-version",
        "2025-11-25",
        "--timeout",
        "8s",
        "--jobs",
        "2",
        "--include",
        "jsonrpc/*",
    ];
    // Each start of the server leaves a line in `starts`.
    let starts = tempfile_path("lossy-starts");
    let log = format!("echo started >> '{}'; exec \"$0\" \"$@\"", starts.display());
    let lossy = [
        "sh",
        "-c",
        &log,
        &misbehaving(),
        "--defect",
        "lossy-every-fifth",
    ];
    let (code, report, out) = run_json(&args, &lossy);
    assert_eq!(code, 1, "{out}");
    let found = messages(&report);
    let whole = found
        .iter()
        .filter(|m| m.contains("got no response within 8s"))
        .count();
    let bounded: Vec<_> = found
        .iter()
        .filter(|m| m.contains("the server already lost the answer to"))
        .collect();
    eprintln!("whole timeouts {whole}, bounded waits {}", bounded.len());
    assert!(
        bounded.len() >= 3 && bounded.len() > whole,
        "after the first proven loss, waits must end sooner (whole {whole}, bounded {bounded:?}):\n{out}"
    );
    // Each bounded finding says which answer was lost and what the wait was based on.
    assert!(
        bounded.iter().all(|m| m.contains("typically within")),
        "{bounded:#?}"
    );
    // Sessions that lost an answer were handed on: fewer servers than losses.
    let losses = whole + bounded.len();
    let started = std::fs::read_to_string(&starts)
        .unwrap_or_default()
        .lines()
        .count();
    eprintln!("{started} servers started for {losses} lost answers");
    assert!(
        started < losses,
        "{started} servers started for {losses} lost answers: a session that lost one must serve on"
    );

    // The same scenarios against the fixture without the defect: no wait is bounded.
    let (code, clean, out) = run_json(&args, &[&misbehaving()]);
    assert_eq!(code, 0, "{out}");
    assert!(
        !messages(&clean).iter().any(|m| m.contains("already lost")),
        "{out}"
    );
}

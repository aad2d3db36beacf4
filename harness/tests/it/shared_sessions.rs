//! Shared sessions (issue 18): scenarios that only read run on a server kept per worker,
//! and nothing a report says about verdicts may depend on it. The whole suite runs with
//! and without `--isolate` against the reference fixture and the defect-free misbehaving
//! fixture, and the shared scenarios against every defect that one of them must catch;
//! the verdict maps (and exit codes) must be identical. (A scenario that does not share
//! runs on the same fresh-server path in both modes, and suite_mutation.rs runs the whole
//! suite against every defect in the default, shared mode.) A shared scenario's window holds only its own
//! exchange: the handshake is in the transcript of the scenario that opened the session.

use std::collections::BTreeSet;

use mcpcheck::outcome::ToolPolicy;
use mcpcheck::protocol::Revision;
use mcpcheck::scenario::{builtin, share};

use crate::support::suite::defect_table;
use crate::support::*;

/// Short hangs; the servers mostly wait, so more jobs than cores.
const FAST: [&str; 12] = [
    "--timeout",
    "3s",
    "--startup-timeout",
    "5s",
    "--shutdown-wait",
    "500ms",
    "--kill-wait",
    "300ms",
    "--jobs",
    "4",
    "--protocol-version",
    "2025-11-25",
];

/// The built-in scenarios that share a session at 2025-11-25 under the default policy.
fn shared_scenarios() -> BTreeSet<String> {
    builtin::scenarios()
        .expect("the built-in suite parses")
        .into_iter()
        .filter(|s| s.revisions.contains(&Revision::V2025_11_25))
        .filter(|s| {
            share::needs_fresh(s, Revision::V2025_11_25, ToolPolicy::Readonly, false).is_none()
        })
        .map(|s| s.id)
        .collect()
}

fn both_modes(server: &[&str], only: &[&str], what: &str) -> Option<String> {
    let args = [&FAST[..], only].concat();
    let (shared_code, shared, shared_text) = run_json(&args, server);
    let isolated_args = [&args[..], &["--isolate"]].concat();
    let (isolated_code, isolated, isolated_text) = run_json(&isolated_args, server);
    let (a, b) = (verdicts(&shared), verdicts(&isolated));
    assert!(!a.is_empty(), "{what}: no scenario ran\n{shared_text}");
    if a == b && shared_code == isolated_code {
        return None;
    }
    let differ: Vec<_> = a
        .iter()
        .filter(|(id, v)| b.get(*id) != Some(*v))
        .map(|(id, v)| format!("{id}: shared {v}, isolated {:?}", b.get(id)))
        .collect();
    Some(format!(
        "{what}: exit {shared_code} shared, {isolated_code} isolated; {differ:?}\n--- shared\n{}\n--- isolated\n{}",
        tail(&shared_text),
        tail(&isolated_text)
    ))
}

fn tail(text: &str) -> String {
    let lines: Vec<&str> = text.lines().collect();
    lines[lines.len().saturating_sub(15)..].join("\n")
}

#[test]
fn verdicts_are_the_same_with_and_without_isolate() {
    let shared = shared_scenarios();
    assert!(
        shared.len() >= 40,
        "only {} scenarios share a session: {shared:?}",
        shared.len()
    );
    let mut problems = Vec::new();
    problems.extend(both_modes(&[&reference()], &[], "the reference"));
    problems.extend(both_modes(
        &[&misbehaving()],
        &[],
        "the defect-free fixture",
    ));
    let only: Vec<&str> = shared
        .iter()
        .flat_map(|id| ["--include", id.as_str()])
        .collect();
    let defects: Vec<String> = defect_table(|d| !d.starts_with("http-") && !d.starts_with("auth-"))
        .into_iter()
        .filter(|(_, fails)| !fails.is_disjoint(&shared))
        .map(|(d, _)| d)
        .collect();
    assert!(defects.len() >= 20, "few defects to compare: {defects:?}");
    let started = std::time::Instant::now();
    let fixture = misbehaving();
    for defect in &defects {
        let server = [fixture.as_str(), "--defect", defect];
        problems.extend(both_modes(&server, &only, &format!("--defect {defect}")));
    }
    eprintln!(
        "{} defects compared in both modes in {:?}",
        defects.len(),
        started.elapsed()
    );
    assert!(problems.is_empty(), "{}", problems.join("\n\n"));
}

/// A shared scenario's transcript starts where it starts: with `--jobs 1` the scenario that
/// opened the session has the handshake, the others none, yet each has its requests.
#[test]
fn a_shared_scenarios_transcript_is_its_own_window() {
    let include = [
        "--jobs",
        "1",
        "--include",
        "prompts/list-result",
        "--include",
        "resources/list-result",
        "--include",
        "tools/list-result",
    ];
    let (code, report, text) = run_json(&include, &[&reference()]);
    assert_eq!(code, 0, "{text}");
    let sent = |s: &serde_json::Value, method: &str| {
        s["transcript"]
            .as_array()
            .into_iter()
            .flatten()
            .filter(|e| e["direction"] == "sent")
            .filter(|e| {
                e["text"]
                    .as_str()
                    .unwrap_or("")
                    .contains(&format!("\"{method}\""))
            })
            .count()
    };
    let scenarios = report["scenarios"].as_array().expect("scenarios");
    assert_eq!(scenarios.len(), 3, "{text}");
    // Which of the three runs first (and so opens the session) is up to the scheduler; the
    // report lists them in suite order. One handshake in all, in one window.
    let mut handshakes: Vec<usize> = scenarios.iter().map(|s| sent(s, "initialize")).collect();
    handshakes.sort_unstable();
    assert_eq!(handshakes, [0, 0, 1], "{report:#}");
    for (s, method) in scenarios
        .iter()
        .zip(["prompts/list", "resources/list", "tools/list"])
    {
        assert_eq!(s["verdict"], "pass", "{s:#}");
        assert!(sent(s, method) >= 1, "{method} not in its window: {s:#}");
    }
    // With --isolate every scenario has its own handshake.
    let isolated = [&include[..], &["--isolate"]].concat();
    let (_, report, text) = run_json(&isolated, &[&reference()]);
    let handshakes: Vec<usize> = report["scenarios"]
        .as_array()
        .expect("scenarios")
        .iter()
        .map(|s| sent(s, "initialize"))
        .collect();
    assert_eq!(handshakes, [1, 1, 1], "{text}");
}

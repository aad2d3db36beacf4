//! The transport scenarios tested like code: for every `http-*` defect in
//! `fixtures/misbehaving/defects.toml`, the misbehaving fixture in Streamable HTTP mode with that defect
//! must fail exactly the `http/*` scenarios mapped to it, and without defects it must fail
//! no scenario of the whole suite over HTTP.

use std::collections::{BTreeMap, BTreeSet};

use crate::support::suite::{self, defect_table};
use crate::support::*;

/// Short waits, six jobs.
fn fast() -> Vec<&'static str> {
    [&FAST_MANY_JOBS[..], &["--jobs", "6"]].concat()
}

/// `http-*` defect -> the scenarios it must fail.
fn http_defects() -> BTreeMap<String, BTreeSet<String>> {
    defect_table(|d| d.starts_with("http-"))
}

/// (scenario id, verdict) of a run against `url`.
fn run(url: &str, rev: &str, only_http: bool) -> (BTreeMap<String, String>, String) {
    let mut args = [&fast()[..], &["--protocol-version", rev]].concat();
    if only_http {
        args.extend(["--include", "http/*", "--include", "stateless/http-*"]);
    }
    let (_, report, text) = run_url_json(url, &args);
    (verdicts(&report), text)
}

fn with(v: &BTreeMap<String, String>, verdicts: &[&str]) -> BTreeSet<String> {
    v.iter()
        .filter(|(_, x)| verdicts.contains(&x.as_str()))
        .map(|(id, _)| id.clone())
        .collect()
}

#[test]
fn every_http_scenario_has_a_defect() {
    let mapped: BTreeSet<String> = http_defects().into_values().flatten().collect();
    let http: BTreeSet<String> = suite::revisions()
        .into_keys()
        .filter(|id| id.starts_with("http/") || id.starts_with("stateless/http-"))
        .collect();
    assert!(!http.is_empty());
    let missing: Vec<_> = http.difference(&mapped).collect();
    assert!(
        missing.is_empty(),
        "http scenarios without a defect: {missing:?}"
    );
}

#[test]
fn the_defect_free_fixture_fails_no_scenario_over_http() {
    let server = misbehaving_http(&[]);
    for rev in [
        "2024-11-05",
        "2025-03-26",
        "2025-06-18",
        "2025-11-25",
        "2026-07-28",
    ] {
        let (v, text) = run(&server.url, rev, false);
        assert!(v.len() > 30, "{rev}: too few scenarios ran\n{text}");
        let bad = with(&v, &["fail", "warn", "error"]);
        assert!(bad.is_empty(), "{rev}: {bad:?}\n{text}");
        if rev != "2024-11-05" {
            assert!(
                with(&v, &["pass"])
                    .iter()
                    .any(|id| id.starts_with("http/") || id.starts_with("stateless/http-")),
                "{rev}: no http scenario passed\n{text}"
            );
        }
    }
}

#[test]
fn each_http_defect_fails_exactly_its_scenarios() {
    let revs = suite::revisions();
    let table = http_defects();
    assert!(table.len() >= 10, "too few http defects in defects.toml");
    let mut problems = Vec::new();
    for (defect, expected) in table {
        let server = misbehaving_http(&["--defect", &defect]);
        let runs = suite::revisions_to_run(&expected, &revs);
        let mut got = BTreeSet::new();
        let mut errors = BTreeSet::new();
        let mut texts = String::new();
        for rev in &runs {
            let (v, text) = run(&server.url, rev, true);
            got.extend(with(&v, &["fail", "warn"]));
            errors.extend(with(&v, &["error"]));
            texts.push_str(&text);
        }
        if got != expected || !errors.is_empty() {
            let detail: Vec<&str> = texts
                .lines()
                .filter(|l| l.trim_start().starts_with('['))
                .take(8)
                .collect();
            problems.push(format!(
                "--defect {defect} ({runs:?}): expected {expected:?}, failed {got:?}, errors {errors:?}\n{}",
                detail.join("\n")
            ));
        }
    }
    assert!(problems.is_empty(), "{}", problems.join("\n\n"));
}

/// The whole JSON report of a run against `url`.
fn report(url: &str, extra: &[&str]) -> (i32, serde_json::Value, String) {
    run_url_json(url, &[&fast()[..], extra].concat())
}

/// Every `http` record of a kind in the sweep's and the scenarios' transcripts.
fn http_records<'a>(report: &'a serde_json::Value, kind: &str) -> Vec<&'a serde_json::Value> {
    let sweep = report["transcript"].as_array().into_iter().flatten();
    let scenarios = report["scenarios"]
        .as_array()
        .into_iter()
        .flatten()
        .flat_map(|s| s["transcript"].as_array().into_iter().flatten());
    sweep
        .chain(scenarios)
        .filter_map(|e| e.get("http"))
        .filter(|h| h["kind"] == kind)
        .collect()
}

/// Resumable SSE done right (spec 2025-11-25 basic/transports#resumability-and-redelivery):
/// with every request answered on an SSE stream (`--sse stream`), and with every stream
/// closed after its priming event so that each response must be fetched with GET and
/// Last-Event-ID (`--sse poll`), the whole suite passes, and the two resumption scenarios
/// pass rather than skip.
#[test]
fn the_fixture_passes_the_suite_over_resumable_sse_streams() {
    for mode in ["stream", "poll"] {
        let server = misbehaving_http(&["--sse", mode]);
        let (code, report, text) = report(&server.url, &["--protocol-version", "2025-11-25"]);
        let verdicts = verdicts(&report);
        assert!(verdicts.len() > 30, "{mode}: too few scenarios\n{text}");
        let bad = with(&verdicts, &["fail", "warn", "error", "blocked"]);
        assert!(bad.is_empty(), "{mode}: {bad:?}\n{text}");
        assert_eq!(
            code, 0,
            "{mode}: exit code; run-level findings {}\ntally {}\n{text}",
            report["findings"], report["tally"]
        );
        for id in ["http/resume-after-disconnect", "http/sse-event-ids-unique"] {
            assert_eq!(verdicts[id], "pass", "{mode}: {id}\n{text}");
        }
        // 2025-11-25 allows closing the connection after an event id.
        assert!(
            !report["findings"]
                .to_string()
                .contains("http.sse-closed-before-response"),
            "{mode}: {text}"
        );
        let resumes = http_records(&report, "resume");
        if mode == "poll" {
            // Every request of the sweep was answered only after a reconnection.
            let sweep_resumes = report["transcript"]
                .as_array()
                .into_iter()
                .flatten()
                .filter(|e| e["http"]["kind"] == "resume")
                .count();
            assert!(
                sweep_resumes >= 3,
                "poll: {sweep_resumes} sweep reconnections\n{text}"
            );
            assert!(
                resumes.iter().all(|r| r["wait_ms"] == 100),
                "the server's retry of 100 ms is honoured: {resumes:?}"
            );
        } else {
            // Only the scenario that drops its connection on purpose reconnects.
            assert!(
                resumes
                    .iter()
                    .all(|r| r["stream"].as_str().unwrap_or("").starts_with("raw ")),
                "stream: {resumes:?}"
            );
        }
    }
}

/// The transport's own checks: a server that closes its streams after the priming event
/// and then replays from the start delivers an event twice (http.sse-event-id-unique); one
/// that replays another stream sends a response that stream never carried
/// (http.sse-replay-same-stream). Both are findings of the sweep (exit 1), with the
/// reconnection in the transcript and the section of the negotiated revision.
#[test]
fn bad_replays_after_polling_are_findings() {
    for (defect, rule, says) in [
        (
            "http-replay-from-start",
            "http.sse-event-id-unique",
            "replayed event",
        ),
        (
            "http-replay-other-stream",
            "http.sse-replay-same-stream",
            "not sent on that stream",
        ),
    ] {
        let server = misbehaving_http(&["--sse", "poll", "--defect", defect]);
        let (code, report, text) = report(
            &server.url,
            &[
                "--protocol-version",
                "2025-11-25",
                "--include",
                "http/notification-202",
            ],
        );
        assert_eq!(code, 1, "{defect}: {text}");
        let findings: Vec<&serde_json::Value> = report["findings"]
            .as_array()
            .into_iter()
            .flatten()
            .filter(|f| f["rule"] == rule)
            .collect();
        assert!(!findings.is_empty(), "{defect}: {text}");
        assert!(
            findings[0]["spec"]
                .as_str()
                .unwrap_or("")
                .ends_with("2025-11-25/basic/transports#resumability-and-redelivery"),
            "{findings:?}"
        );
        assert!(
            findings[0]["message"].as_str().unwrap_or("").contains(says),
            "{findings:?}"
        );
        assert!(!http_records(&report, "resume").is_empty(), "{text}");
    }
}

/// Before 2025-11-25 the server "SHOULD NOT close the SSE stream before sending a JSON-RPC
/// response": the poll-mode fixture is then warned about (exit 0, a warning), and its
/// responses still arrive through resumption, so nothing else fails.
#[test]
fn a_stream_closed_before_its_response_is_a_warning_before_2025_11_25() {
    let server = misbehaving_http(&["--sse", "poll"]);
    let (code, report, text) = report(
        &server.url,
        &[
            "--protocol-version",
            "2025-06-18",
            "--include",
            "http/notification-202",
        ],
    );
    assert_eq!(code, 0, "{text}");
    let findings: Vec<&serde_json::Value> = report["findings"]
        .as_array()
        .into_iter()
        .flatten()
        .collect();
    assert!(!findings.is_empty(), "{text}");
    for f in &findings {
        assert_eq!(f["rule"], "http.sse-closed-before-response", "{findings:?}");
        assert_eq!(f["severity"], "warning", "{findings:?}");
        assert!(
            f["spec"]
                .as_str()
                .unwrap_or("")
                .ends_with("2025-06-18/basic/transports#sending-messages-to-the-server"),
            "{f}"
        );
    }
    assert_eq!(report["revision"], "2025-06-18", "{text}");
}

/// `subscriptions/listen` over Streamable HTTP (2026-07-28 basic/patterns/subscriptions):
/// the listen POST is answered with an SSE stream that carries the acknowledgment and no
/// response. The defect-free fixture passes the listen scenarios (it then closes the
/// stream, which mcpcheck neither resumes nor reports as a missing response), and each
/// listen defect of defects.toml fails exactly its scenarios over HTTP as over stdio.
#[test]
fn listen_scenarios_run_over_http_and_catch_the_listen_defects() {
    let table: BTreeMap<String, BTreeSet<String>> = defect_table(|_| true)
        .into_iter()
        .map(|(defect, fails)| {
            let listen = fails
                .into_iter()
                .filter(|id| id.starts_with("stateless/listen-"))
                .collect::<BTreeSet<_>>();
            (defect, listen)
        })
        // The listen defects; others fail listen-ack-first only as a side effect over stdio
        // (a resource list that loops, a server that exits on notifications/cancelled).
        .filter(|(defect, listen)| defect.starts_with("listen-") && !listen.is_empty())
        .collect();
    assert_eq!(table.len(), 4, "{table:?}");
    let include = [
        "--protocol-version",
        "2026-07-28",
        "--include",
        "stateless/listen-*",
    ];

    let server = misbehaving_http(&[]);
    let (code, clean, text) = report(&server.url, &include);
    assert_eq!(code, 0, "{text}");
    let clean_verdicts: BTreeSet<(String, String)> = verdicts(&clean).into_iter().collect();
    let expected: BTreeSet<(String, String)> = [
        ("stateless/listen-ack-first".to_owned(), "pass".to_owned()),
        (
            "stateless/listen-acknowledged".to_owned(),
            "pass".to_owned(),
        ),
        (
            "stateless/listen-only-requested".to_owned(),
            "pass".to_owned(),
        ),
        (
            "stateless/listen-subscription-id".to_owned(),
            "pass".to_owned(),
        ),
    ]
    .into();
    assert_eq!(clean_verdicts, expected, "{text}");
    assert!(http_records(&clean, "resume").is_empty(), "{text}");
    let ends = http_records(&clean, "stream_end");
    assert!(
        ends.iter()
            .any(|e| e["reason"].as_str().unwrap_or("").contains("listen stream")),
        "{ends:?}"
    );

    let mut problems = Vec::new();
    for (defect, expected) in table {
        let server = misbehaving_http(&["--defect", &defect]);
        let (_, report, text) = report(&server.url, &include);
        let verdicts = verdicts(&report);
        let got = with(&verdicts, &["fail", "warn"]);
        let errors = with(&verdicts, &["error"]);
        if got != expected || !errors.is_empty() {
            problems.push(format!(
                "--defect {defect}: expected {expected:?}, failed {got:?}, errors {errors:?}\n{text}"
            ));
        }
    }
    assert!(problems.is_empty(), "{}", problems.join("\n\n"));
}

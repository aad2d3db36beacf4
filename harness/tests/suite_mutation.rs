//! The suite is tested like code (a mutation test): for every row of
//! `scenarios/DEFECTS.md`, the misbehaving fixture started with that defect must fail
//! exactly the scenarios mapped to it, while the rmcp reference fixture and the
//! misbehaving fixture without defects fail none.

mod common;

use std::collections::{BTreeMap, BTreeSet};

use common::*;

/// Arguments that keep hangs short; scenario expectations carry their own windows.
/// Servers mostly wait in these runs, so more jobs than cores is faster.
const FAST: [&str; 10] = [
    "--timeout",
    "3s",
    "--startup-timeout",
    "5s",
    "--shutdown-wait",
    "500ms",
    "--kill-wait",
    "300ms",
    "--jobs",
    "6",
];

/// Each scenario's revisions, from `mcpcheck list`.
fn revisions() -> BTreeMap<String, Vec<String>> {
    let out = mcpcheck().arg("list").output().unwrap();
    String::from_utf8_lossy(&out.stdout)
        .lines()
        .filter_map(|l| {
            let cols: Vec<&str> = l.split_whitespace().collect();
            (cols.len() > 3 && cols[0].contains('/')).then(|| {
                (
                    cols[0].to_owned(),
                    cols[2].split(',').map(str::to_owned).collect(),
                )
            })
        })
        .collect()
}

/// defect -> scenarios that must fail against it.
fn table() -> BTreeMap<String, BTreeSet<String>> {
    let text = std::fs::read_to_string(workspace().join("scenarios/DEFECTS.md"))
        .expect("scenarios/DEFECTS.md");
    let mut map: BTreeMap<String, BTreeSet<String>> = BTreeMap::new();
    for line in text.lines() {
        let cells: Vec<&str> = line.split('|').map(str::trim).collect();
        // | scenario | `defect` | description |
        if cells.len() < 4 || !cells[1].contains('/') {
            continue;
        }
        let defect = cells[2].trim_matches('`').to_owned();
        map.entry(defect).or_default().insert(cells[1].to_owned());
    }
    map
}

/// Scenario ids by verdict, from a JSON report.
fn verdicts(report: &serde_json::Value) -> BTreeMap<String, String> {
    report["scenarios"]
        .as_array()
        .map(|a| {
            a.iter()
                .map(|s| {
                    (
                        s["id"].as_str().unwrap_or("").to_owned(),
                        s["verdict"].as_str().unwrap_or("").to_owned(),
                    )
                })
                .collect()
        })
        .unwrap_or_default()
}

fn failing(v: &BTreeMap<String, String>) -> BTreeSet<String> {
    v.iter()
        .filter(|(_, verdict)| *verdict == "fail" || *verdict == "warn")
        .map(|(id, _)| id.clone())
        .collect()
}

fn errors(v: &BTreeMap<String, String>) -> Vec<String> {
    v.iter()
        .filter(|(_, verdict)| *verdict == "error")
        .map(|(id, _)| id.clone())
        .collect()
}

#[test]
fn every_scenario_in_the_suite_has_a_defect() {
    let mapped: BTreeSet<String> = table().into_values().flatten().collect();
    let out = mcpcheck().arg("list").output().unwrap();
    let listed: BTreeSet<String> = String::from_utf8_lossy(&out.stdout)
        .lines()
        .filter_map(|l| l.split_whitespace().next())
        .filter(|id| id.contains('/'))
        .map(str::to_owned)
        .collect();
    let missing: Vec<_> = listed.difference(&mapped).collect();
    assert!(
        missing.is_empty(),
        "scenarios without a defect in scenarios/DEFECTS.md: {missing:?}"
    );
    let unknown: Vec<_> = mapped.difference(&listed).collect();
    assert!(
        unknown.is_empty(),
        "DEFECTS.md names scenarios that do not exist: {unknown:?}"
    );
}

#[test]
fn the_reference_and_the_defect_free_fixture_fail_no_scenario() {
    let handshake = ["2024-11-05", "2025-03-26", "2025-06-18", "2025-11-25"];
    // The rmcp reference speaks no stateless revision; the misbehaving fixture does.
    let every = [&handshake[..], &["2026-07-28"]].concat();
    for (server, revs) in [
        (vec![reference()], &handshake[..]),
        (vec![misbehaving()], &every[..]),
    ] {
        for &rev in revs {
            let args = [&FAST[..], &["--protocol-version", rev]].concat();
            let server: Vec<&str> = server.iter().map(String::as_str).collect();
            let (_, report, text) = run_json(&args, &server);
            let v = verdicts(&report);
            assert!(!v.is_empty(), "no scenarios ran: {text}");
            assert!(
                failing(&v).is_empty() && errors(&v).is_empty(),
                "{server:?} at {rev}: {:?} {:?}\n{text}",
                failing(&v),
                errors(&v)
            );
            if rev == "2026-07-28" {
                let passed = v
                    .iter()
                    .filter(|(id, x)| id.starts_with("stateless/") && *x == "pass");
                assert_eq!(
                    passed.count(),
                    7,
                    "the stdio stateless scenarios must run and pass: {text}"
                );
            }
        }
    }
}

#[test]
fn each_defect_fails_exactly_its_scenarios() {
    let revs = revisions();
    let mut problems = Vec::new();
    for (defect, expected) in table() {
        if defect.starts_with("http-") {
            continue; // transport defects: tests/http_mutation.rs runs them over HTTP
        }
        // The default revision, plus one for each expected scenario that does not cover it.
        let mut runs = BTreeSet::from(["2025-11-25".to_owned()]);
        for id in &expected {
            if let Some(r) = revs
                .get(id)
                .filter(|r| !r.iter().any(|x| x == "2025-11-25"))
            {
                runs.insert(r[0].clone());
            }
        }
        let mut got = BTreeSet::new();
        let mut errs = Vec::new();
        let mut text = String::new();
        for rev in &runs {
            let args = [&FAST[..], &["--protocol-version", rev]].concat();
            let (_, report, out) = run_json(&args, &[&misbehaving(), "--defect", &defect]);
            let v = verdicts(&report);
            got.extend(failing(&v));
            errs.extend(errors(&v));
            text.push_str(&out);
        }
        if got != expected || !errs.is_empty() {
            let missed: Vec<_> = expected.difference(&got).collect();
            let extra: Vec<_> = got.difference(&expected).collect();
            let detail: Vec<&str> = text
                .lines()
                .filter(|l| l.trim_start().starts_with('['))
                .take(12)
                .collect();
            problems.push(format!("--defect {defect} ({runs:?}): not caught by {missed:?}; also failed {extra:?}; errors {errs:?}\n{}", detail.join("\n")));
        }
    }
    assert!(problems.is_empty(), "{}", problems.join("\n\n"));
}

#[test]
fn a_scenario_whose_tool_calls_were_all_forbidden_is_skipped_not_passed() {
    let args = [
        &FAST[..],
        &[
            "--call-tools",
            "none",
            "--include",
            "tools/invalid-arguments-tool-error",
        ],
    ]
    .concat();
    let (_, report, text) = run_json(&args, &[&reference()]);
    let s = &report["scenarios"][0];
    assert_eq!(s["id"], "tools/invalid-arguments-tool-error", "{text}");
    assert_eq!(s["verdict"], "skip", "{s:#}");
    assert!(
        s["reason"].as_str().unwrap().contains("--call-tools"),
        "{s:#}"
    );
}

/// `--tool-args` opts a tool in under `--call-tools readonly` and supplies its arguments
/// (`${tool|sample_arguments}` gives them); without it the non-read-only tool is skipped.
#[test]
fn tool_args_opt_a_tool_in_and_supply_its_arguments() {
    let file = tempfile_path("tool-args.yaml");
    std::fs::write(&file, "write_note: { name: from-tool-args, text: hello }\n").unwrap();
    let calls_to_write_note = |report: &serde_json::Value| -> Vec<serde_json::Value> {
        report["scenarios"][0]["transcript"]
            .as_array()
            .into_iter()
            .flatten()
            .filter(|e| e["direction"] == "sent")
            .filter_map(|e| serde_json::from_str::<serde_json::Value>(e["text"].as_str()?).ok())
            .filter(|m| m["method"] == "tools/call" && m["params"]["name"] == "write_note")
            .collect()
    };
    let include = ["--include", "notifications/progress-increasing"];
    let with = [
        &FAST[..],
        &include,
        &["--tool-args", file.to_str().unwrap()],
    ]
    .concat();
    let (_, report, text) = run_json(&with, &[&reference()]);
    let calls = calls_to_write_note(&report);
    assert_eq!(calls.len(), 1, "{text}");
    assert_eq!(
        calls[0]["params"]["arguments"],
        serde_json::json!({"name": "from-tool-args", "text": "hello"})
    );

    let (_, report, text) = run_json(&[&FAST[..], &include].concat(), &[&reference()]);
    assert!(calls_to_write_note(&report).is_empty(), "{text}");
    let skipped = report["scenarios"][0]["skipped_steps"].to_string();
    assert!(skipped.contains("write_note"), "{skipped}");
    let _ = std::fs::remove_file(&file);

    let bad = tempfile_path("bad-tool-args.yaml");
    std::fs::write(&bad, "write_note: [1, 2]\n").unwrap();
    let out = mcpcheck()
        .args([
            "run",
            "--tool-args",
            bad.to_str().unwrap(),
            "--",
            &reference(),
        ])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2), "{}", describe(&out));
    assert!(
        String::from_utf8_lossy(&out.stderr)
            .contains("the arguments of `write_note` must be a mapping"),
        "{}",
        describe(&out)
    );
    let _ = std::fs::remove_file(&bad);
}

//! The suite is tested like code (a mutation test): for every defect in
//! `fixtures/misbehaving/defects.toml`, the misbehaving fixture started with it must fail
//! exactly the scenarios mapped to it, while the rmcp reference fixture and the
//! misbehaving fixture without defects fail none.

use std::collections::{BTreeMap, BTreeSet};

use crate::support::suite::{self, defect_table};
use crate::support::*;

/// Arguments that keep hangs short (see [`whole_suite_args`]).
fn fast() -> Vec<&'static str> {
    whole_suite_args("6")
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
    // The official-fixture scenarios run only on servers with the official fixture's names:
    // the broken variants of thirdparty/official_fixture.py are their defects.
    let official = suite::official_fixture_defects().into_values();
    let mapped: BTreeSet<String> = defect_table(|_| true)
        .into_values()
        .chain(official.map(|d| d.fails))
        .flatten()
        .collect();
    let listed: BTreeSet<String> = suite::listed().into_iter().map(|s| s.id).collect();
    assert!(
        !listed.is_empty(),
        "mcpcheck list --format json lists no scenario"
    );
    let missing: Vec<_> = listed.difference(&mapped).collect();
    assert!(
        missing.is_empty(),
        "scenarios without a defect in fixtures/misbehaving/defects.toml: {missing:?}"
    );
    let unknown: Vec<_> = mapped.difference(&listed).collect();
    assert!(
        unknown.is_empty(),
        "defects.toml names scenarios that do not exist: {unknown:?}"
    );
}

/// Every defect says what it does, in one line, and fails at least one scenario.
#[test]
fn every_defect_says_what_it_does_and_fails_a_scenario() {
    let defects = suite::defects();
    assert!(!defects.is_empty());
    for (name, d) in defects {
        assert!(
            !d.does.trim().is_empty() && !d.does.contains('\n'),
            "{name}: `does` must be one line"
        );
        assert!(!d.fails.is_empty(), "{name}: fails no scenario");
    }
}

#[test]
fn the_reference_and_the_defect_free_fixture_fail_no_scenario() {
    let handshake = ["2024-11-05", "2025-03-26", "2025-06-18", "2025-11-25"];
    // The rmcp reference speaks no stateless revision; the misbehaving fixture does.
    let every = [&handshake[..], &["2026-07-28"]].concat();
    // Scenarios executed (not skipped) by the dual-era fixture, per revision.
    let mut executed = BTreeMap::new();
    for (server, revs) in [
        (vec![reference()], &handshake[..]),
        (vec![misbehaving()], &every[..]),
    ] {
        for &rev in revs {
            let args = [&fast()[..], &["--protocol-version", rev]].concat();
            let server: Vec<&str> = server.iter().map(String::as_str).collect();
            let (_, report, text) = run_json(&args, &server);
            let v = verdicts(&report);
            if server[0] == misbehaving() {
                // Tasks are a 2025-11-25 feature here (an extension at 2026-07-28, not
                // checked yet): they are left out of the parity count.
                let counted = v
                    .iter()
                    .filter(|(id, x)| *x != "skip" && !id.starts_with("tasks/"));
                executed.insert(rev, counted.count());
            }
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
                    29,
                    "the stdio stateless scenarios must run and pass: {text}"
                );
            }
        }
    }
    // 2026-07-28 coverage (issue 13): the stateless run of a dual-era server executed 7
    // scenarios before the scoping work, 67 after it, and now at least as many as the
    // newest handshake revision (77 each): revision-independent checks run at 2026-07-28 in
    // their stateless form (the probe is server/discover; log levels ride in `_meta`).
    // The 2025-11-25 tasks scenarios are not counted (above).
    eprintln!("scenarios executed per revision: {executed:?}");
    assert!(
        executed["2026-07-28"] >= executed["2025-11-25"] && executed["2026-07-28"] >= 77,
        "2026-07-28 must execute at least as many scenarios as 2025-11-25 (and no fewer than 77): {executed:?}"
    );
}

/// Defects checked at once. A run mostly waits (its longest scenarios are one-second
/// "nothing arrives" windows), so a few runs side by side use the cores a single run leaves
/// idle; the verdicts do not depend on it (each run has its own server processes).
const DEFECTS_AT_ONCE: usize = 3;

#[test]
fn each_defect_fails_exactly_its_scenarios() {
    // The `http-*` defects break transport rules: http_mutation.rs runs them over HTTP;
    // `lossy-*` ones fail whichever scenarios lose an answer: lossy.rs runs them.
    let table: Vec<_> = defect_table(|d| {
        !["http-", "auth-", "lossy-"]
            .iter()
            .any(|p| d.starts_with(p))
    })
    .into_iter()
    .collect();
    let revs = suite::revisions();
    let defects = suite::defects();
    let problems = suite::check_at_once(&table, DEFECTS_AT_ONCE, |(defect, expected)| {
        let stateless = defects[defect.as_str()].stateless;
        check_defect(defect, expected, &revs, stateless)
    });
    assert!(problems.is_empty(), "{}", problems.join("\n\n"));
}

/// Runs the fixture with `defect` (`stateless`: it also breaks 2026-07-28) at every revision
/// its scenarios apply to; says what went wrong when the failing scenarios are not exactly `expected`.
fn check_defect(
    defect: &str,
    expected: &BTreeSet<String>,
    revs: &BTreeMap<String, Vec<String>>,
    stateless: bool,
) -> Option<String> {
    let mut runs = suite::revisions_to_run(expected, revs);
    // Scenarios that also apply at 2026-07-28 must fail there too, in the stateless
    // form of the session, not only at the handshake revision (unless the defect
    // breaks something 2026-07-28 does not have).
    let stateless_rows = if stateless {
        suite::applying_at(expected, revs, suite::STATELESS)
    } else {
        BTreeSet::new()
    };
    if !stateless_rows.is_empty() {
        runs.insert(suite::STATELESS.to_owned());
    }
    let mut got = BTreeSet::new();
    let mut missed_stateless = BTreeSet::new();
    let mut errs = Vec::new();
    let mut text = String::new();
    for rev in &runs {
        let args = [&fast()[..], &["--protocol-version", rev]].concat();
        let (_, report, out) = run_json(&args, &[&misbehaving(), "--defect", defect]);
        let v = verdicts(&report);
        let failed = failing(&v);
        if rev == suite::STATELESS {
            missed_stateless.extend(stateless_rows.difference(&failed).cloned());
        }
        got.extend(failed);
        errs.extend(errors(&v));
        text.push_str(&out);
    }
    if &got == expected && errs.is_empty() && missed_stateless.is_empty() {
        return None;
    }
    let missed: Vec<_> = expected.difference(&got).collect();
    let extra: Vec<_> = got.difference(expected).collect();
    let detail: Vec<&str> = text
        .lines()
        .filter(|l| l.trim_start().starts_with('['))
        .take(12)
        .collect();
    Some(format!(
        "--defect {defect} ({runs:?}): not caught by {missed:?}; not caught at {} by {missed_stateless:?}; also failed {extra:?}; errors {errs:?}\n{}",
        suite::STATELESS,
        detail.join("\n")
    ))
}

#[test]
fn a_scenario_whose_tool_calls_were_all_forbidden_is_skipped_not_passed() {
    let args = [
        &fast()[..],
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
        &fast()[..],
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

    let (_, report, text) = run_json(&[&fast()[..], &include].concat(), &[&reference()]);
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

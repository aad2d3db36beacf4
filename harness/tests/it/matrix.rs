//! The revision matrix: a leg per revision in one run, in every report, with one exit code.
//!
//! One default run against a dual-era server (the misbehaving fixture without a defect
//! speaks 2025-11-25 and 2026-07-28, and its discovery lists the three older revisions,
//! each a differential leg) is checked in every report format; a defect of one era fails
//! only its leg, one of an older claimed revision its differential leg; the baseline
//! names legs; `all` plans the five revisions.

use serde_json::Value;

use crate::support::{self, misbehaving, tempfile_path};

/// Runs `mcpcheck run ARGS -- SERVER` writing every report kind to a fresh directory;
/// returns (exit code, stdout+stderr, directory).
fn run_all_reports(args: &[&str], server: &[&str]) -> (i32, String, std::path::PathBuf) {
    let dir = tempfile_path("matrix");
    std::fs::create_dir_all(&dir).unwrap();
    let report = |kind: &str, file: &str| format!("{kind}={}", dir.join(file).display());
    let output = support::mcpcheck()
        .arg("run")
        .args(["--deterministic", "--jobs", "2"])
        .args(["--report", &report("json", "results.json")])
        .args(["--report", &report("junit", "junit.xml")])
        .args(["--report", &report("html", "report.html")])
        .args(["--report", &report("markdown", "summary.md")])
        .args(["--report", &report("sarif", "results.sarif")])
        .args(args)
        .arg("--")
        .args(server)
        .output()
        .expect("running mcpcheck");
    (
        output.status.code().unwrap_or(-1),
        support::describe(&output),
        dir,
    )
}

fn read(dir: &std::path::Path, file: &str) -> String {
    std::fs::read_to_string(dir.join(file)).unwrap_or_else(|e| panic!("{file}: {e}"))
}

fn json(dir: &std::path::Path) -> Value {
    serde_json::from_str(&read(dir, "results.json")).expect("the JSON report parses")
}

fn revisions(report: &Value) -> Vec<String> {
    report["legs"]
        .as_array()
        .expect("a matrix report lists legs")
        .iter()
        .map(|l| l["requested_revision"].as_str().unwrap_or("").to_owned())
        .collect()
}

#[test]
fn the_default_run_checks_each_era_in_every_report() {
    let server = misbehaving();
    let (code, out, dir) = run_all_reports(&[], &[&server]);
    assert_eq!(code, 0, "{out}");
    assert!(
        out.contains("checking each era the server speaks: 2025-11-25, 2026-07-28"),
        "{out}"
    );
    // Terminal: a header per leg, a line per leg, the overall verdict.
    for line in [
        "== 2025-11-25 ==",
        "== 2026-07-28 ==",
        "== 2025-03-26 (differential: what is judged differently than at 2025-11-25) ==",
        "2025-03-26 (differential from 2025-11-25)  PASS",
        "overall: PASS over 5 legs",
    ] {
        assert!(out.contains(line), "missing {line:?} in\n{out}");
    }

    let report = json(&dir);
    assert_eq!(report["format_version"], 2);
    assert_eq!(
        (report["verdict"].as_str(), report["exit_code"].as_u64()),
        (Some("pass"), Some(0))
    );
    assert_eq!(revisions(&report), ALL_LEGS);
    differential_legs_are_short(&report);
    let executed = |n: usize| report["revisions"][n]["executed"].as_u64().unwrap();
    // The tasks scenarios the handshake leg ran: a 2025-11-25 feature here (at 2026-07-28
    // an extension, not checked yet), so outside the parity count.
    let tasks = report["legs"][0]["scenarios"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|s| s["id"].as_str().unwrap().starts_with("tasks/") && s["verdict"] != "skip")
        .count() as u64;
    // The parity goal: the 2026-07-28 leg executes at least as many scenarios as
    // the handshake leg (issue 13, item 1).
    assert!(
        executed(0) > tasks && executed(1) >= executed(0) - tasks,
        "{} ({tasks} tasks scenarios)",
        report["revisions"]
    );
    for (n, leg) in report["legs"].as_array().unwrap().iter().enumerate() {
        assert_eq!(leg["verdict"], "pass", "leg {n}");
        assert_eq!(leg["revision"], leg["requested_revision"]);
        let tally = &leg["tally"];
        assert_eq!(
            tally["pass"].as_u64().unwrap() + tally["warn"].as_u64().unwrap(),
            executed(n)
        );
    }

    let junit = read(&dir, "junit.xml");
    for rev in ["2025-11-25", "2026-07-28"] {
        assert!(
            junit.contains(&format!("<testsuite name=\"mcpcheck {rev}\"")),
            "{junit}"
        );
        assert!(junit.contains(&format!("classname=\"{rev}.tools\"")));
    }
    assert_eq!(junit.matches("<testsuite ").count(), 5);

    let html = read(&dir, "report.html");
    assert!(html.contains("<h2>Revision matrix</h2>"));
    for rev in ["2025-11-25", "2026-07-28"] {
        assert!(html.contains(&format!("<section class=\"leg\" id=\"leg-{rev}\">")));
        assert!(
            html.contains(&format!("id=\"r{rev}-s0\"")),
            "anchors are per leg"
        );
    }

    let md = read(&dir, "summary.md");
    assert!(
        md.starts_with("# mcpcheck revision matrix: ✅ PASS"),
        "{md}"
    );
    assert!(
        md.contains(&format!("| 2026-07-28 | pass | {} |", executed(1))),
        "{md}"
    );
    assert!(md.contains("## 2025-11-25: ✅ PASS") && md.contains("## 2026-07-28: ✅ PASS"));
    assert!(
        md.contains("| 2024-11-05 (differential from 2025-11-25) | pass |"),
        "{md}"
    );
    assert!(html.contains("A differential leg: the server claims 2025-06-18"));

    let sarif: Value = serde_json::from_str(&read(&dir, "results.sarif")).unwrap();
    let ids: Vec<&str> = sarif["runs"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r["automationDetails"]["id"].as_str().unwrap())
        .collect();
    assert_eq!(ids.len(), 5);
    assert!(
        ids[0].ends_with("/2025-11-25/") && ids[1].ends_with("/2026-07-28/"),
        "{ids:?}"
    );
    let _ = std::fs::remove_dir_all(&dir);
}

/// The differential legs: the sweep, and only what is judged differently there (a
/// 2025-03-26 batch, the version echo), not the suite again.
fn differential_legs_are_short(report: &Value) {
    for leg in &report["legs"].as_array().unwrap()[2..] {
        assert_eq!(
            leg["differential_from"], "2025-11-25",
            "{}",
            leg["revision"]
        );
        let ids: Vec<&str> = leg["scenarios"]
            .as_array()
            .unwrap()
            .iter()
            .map(|s| s["id"].as_str().unwrap())
            .collect();
        assert!(!ids.is_empty() && ids.len() < 6, "{ids:?}");
        assert!(!ids.contains(&"tools/list-result"), "{ids:?}");
    }
    assert!(report["legs"][0].get("differential_from").is_none());
    let batch = &report["legs"][3]["scenarios"];
    assert!(
        batch
            .as_array()
            .unwrap()
            .iter()
            .any(|s| s["id"] == "jsonrpc/batch-2025-03-26"),
        "{batch}"
    );
}

#[test]
fn a_defect_of_one_era_fails_that_leg_only_and_the_baseline_names_it() {
    let server = misbehaving();
    let defect = ["--defect", "stateless-resource-not-found-32002"];
    let scope = [
        "--include",
        "stateless/resource-not-found-invalid-params",
        "--include",
        "tools/list-result",
    ];
    let cmd: Vec<&str> = [&[server.as_str()][..], &defect].concat();
    let (code, out, dir) = run_all_reports(&scope, &cmd);
    assert_eq!(code, 1, "{out}");
    let report = json(&dir);
    assert_eq!(revisions(&report), ALL_LEGS);
    let legs = report["legs"].as_array().unwrap();
    assert_eq!(
        legs[0]["verdict"], "pass",
        "the handshake leg has no such rule"
    );
    assert_eq!(legs[1]["verdict"], "fail");
    assert_eq!(
        support::report::scenarios_with(&legs[1], "fail"),
        ["stateless/resource-not-found-invalid-params"]
    );
    assert!(out.contains("2026-07-28  FAIL"), "{out}");

    // --update-baseline names the leg; with it the run passes, and the leg's entry does
    // not apply to the other leg.
    let baseline = dir.join("expected.yaml");
    let with_baseline = |update: bool| {
        let mut args: Vec<&str> = scope.to_vec();
        let path = baseline.to_str().unwrap();
        args.extend(["--expected-failures", path]);
        if update {
            args.push("--update-baseline");
        }
        run_all_reports(&args, &cmd)
    };
    let (_, out, _) = with_baseline(true);
    let text = std::fs::read_to_string(&baseline).unwrap_or_else(|e| panic!("{e}: {out}"));
    assert!(
        text.contains(
            "- id: \"stateless/resource-not-found-invalid-params\"\n    revision: \"2026-07-28\"\n"
        ),
        "{text}"
    );
    let (code, out, _) = with_baseline(false);
    assert_eq!(code, 0, "{out}");
    assert!(
        // The scenario, and the retired -32002 under rule jsonrpc.reserved-error-code.
        out.contains("baseline (2026-07-28): 2 expected, 0 unexpected"),
        "{out}"
    );
    // An old single-revision baseline (no `revision:`) applies to each leg: the entry is
    // confirmed by the leg that fails it, not made stale by the leg that passes.
    std::fs::write(
        &baseline,
        "expected-failures:\n  - id: stateless/resource-not-found-invalid-params\n    reason: known\n  - id: jsonrpc.reserved-error-code\n    reason: known\n",
    )
    .unwrap();
    let (code, out, _) = with_baseline(false);
    assert_eq!(code, 0, "{out}");
    let _ = std::fs::remove_dir_all(&dir);
}

/// The default legs against the fixture: the two eras, then the older revisions its
/// discovery lists.
const ALL_LEGS: [&str; 5] = [
    "2025-11-25",
    "2026-07-28",
    "2024-11-05",
    "2025-03-26",
    "2025-06-18",
];

#[test]
fn a_defect_only_at_an_older_claimed_revision_fails_its_differential_leg() {
    // Batches are a MUST only at 2025-03-26: the default run finds it without being told
    // the revision, because discovery lists it.
    let server = misbehaving();
    let (code, report, out) = support::run_json(
        &["--protocol-version", "eras", "--jobs", "2"],
        &[&server, "--defect", "no-batches"],
    );
    assert_eq!(code, 1, "{out}");
    assert_eq!(revisions(&report), ALL_LEGS);
    let legs = report["legs"].as_array().unwrap();
    let failed: Vec<(&str, Vec<String>)> = legs
        .iter()
        .filter(|l| l["verdict"] == "fail")
        .map(|l| {
            (
                l["revision"].as_str().unwrap(),
                support::report::scenarios_with(l, "fail"),
            )
        })
        .collect();
    assert_eq!(
        failed,
        [("2025-03-26", vec!["jsonrpc/batch-2025-03-26".to_owned()])],
        "{out}"
    );
    // Narrowed by --protocol-version, the run has no differential leg.
    let (code, report, out) = support::run_json(
        &["--protocol-version", "2025-11-25,2026-07-28"],
        &[&server, "--defect", "no-batches"],
    );
    assert_eq!(code, 0, "{out}");
    assert_eq!(revisions(&report), ["2025-11-25", "2026-07-28"]);
}

#[test]
fn all_runs_five_legs_and_says_which_revision_the_server_does_not_speak() {
    // The reference fixture speaks the four handshake revisions over stdio, not 2026-07-28.
    let (code, report, out) = support::run_json(
        &[
            "--protocol-version",
            "all",
            "--include",
            "lifecycle/ping-result",
        ],
        &[&support::reference()],
    );
    assert_eq!(
        code, 0,
        "a revision not spoken fails nothing by itself: {out}"
    );
    assert_eq!(
        revisions(&report),
        [
            "2024-11-05",
            "2025-03-26",
            "2025-06-18",
            "2025-11-25",
            "2026-07-28"
        ],
        "{out}"
    );
    let legs = report["legs"].as_array().unwrap();
    for leg in &legs[..4] {
        assert_eq!(leg["revision"], leg["requested_revision"], "{leg}");
        assert_eq!(leg["tally"]["pass"], 1, "{leg}");
    }
    let why = legs[4]["not_spoken"]
        .as_str()
        .expect("the stateless leg says why");
    assert!(why.contains("server/discover"), "{why}");
    assert_eq!(report["revisions"][4]["status"], "not_spoken");
    assert!(
        out.contains("2026-07-28  not spoken: server/discover"),
        "{out}"
    );
}

//! The event stream (`--report events=PATH`, and the live terminal): complete and in order
//! per scenario under `--jobs 2`, findings with their rule and spec section, every line
//! valid against `reports/events.schema.json`, and `--verbose` printing frames as they
//! happen, before the scenario's verdict line. Real fixture processes throughout.

use std::collections::BTreeMap;

use crate::support::*;
use serde_json::Value;

/// Runs `mcpcheck run --jobs 2 --report events=...` and returns (exit code, events, output).
fn run_events(extra: &[&str], server: &[&str]) -> (i32, Vec<Value>, String) {
    let path = tempfile_path("events.jsonl");
    let out = mcpcheck()
        .args(["run", "--jobs", "2", "--timeout", "3s"])
        .arg(format!("--report=events={}", path.display()))
        .args(extra)
        .arg("--")
        .args(server)
        .output()
        .expect("running mcpcheck");
    let text = describe(&out);
    let file = std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{e}\n{text}"));
    let _ = std::fs::remove_file(&path);
    let events = file
        .lines()
        .map(|l| serde_json::from_str(l).unwrap_or_else(|e| panic!("{e}: {l}")))
        .collect();
    (out.status.code().unwrap_or(-1), events, text)
}

fn validator() -> jsonschema::Validator {
    let read = |name: &str| -> Value {
        let path = workspace().join("reports").join(name);
        serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap()
    };
    let results = read("results.schema.json");
    let registry = jsonschema::Registry::new()
        .add(results["$id"].as_str().unwrap(), results.clone())
        .expect("the results schema's $id is a URI")
        .prepare()
        .expect("the registry prepares");
    jsonschema::options()
        .with_registry(&registry)
        .build(&read("events.schema.json"))
        .expect("the events schema compiles")
}

fn kinds(events: &[&Value]) -> Vec<String> {
    events
        .iter()
        .map(|e| e["event"].as_str().unwrap().to_owned())
        .collect()
}

/// Checks one scenario's events: started first, finished last, each step started before
/// it finishes, nothing of a step outside it, and the verdict events consistent.
fn check_scenario_order(id: &str, events: &[&Value]) {
    let k = kinds(events);
    assert_eq!(
        k.first().map(String::as_str),
        Some("scenario_started"),
        "{id}: {k:?}"
    );
    assert_eq!(
        k.last().map(String::as_str),
        Some("scenario_finished"),
        "{id}: {k:?}"
    );
    assert_eq!(
        k.iter().filter(|k| *k == "scenario_started").count(),
        1,
        "{id}"
    );
    assert_eq!(
        k.iter().filter(|k| *k == "scenario_finished").count(),
        1,
        "{id}"
    );
    let mut open: Vec<u64> = Vec::new();
    let mut started = std::collections::BTreeSet::new();
    for e in events {
        match e["event"].as_str().unwrap() {
            "step_started" => {
                let n = e["step"].as_u64().unwrap();
                assert!(started.insert(n), "{id}: step {n} started twice");
                open.push(n);
            }
            "step_finished" => {
                let n = e["step"].as_u64().unwrap();
                assert_eq!(open.pop(), Some(n), "{id}: step {n} finished out of order");
            }
            _ => {}
        }
    }
    assert!(open.is_empty(), "{id}: steps never finished: {open:?}");
    let finished = events.last().unwrap();
    match finished["verdict"].as_str().unwrap() {
        "skip" => assert!(k.contains(&"scenario_skipped".to_owned()), "{id}: {k:?}"),
        "error" => assert!(k.contains(&"harness_error".to_owned()), "{id}: {k:?}"),
        "pass" | "warn" | "fail" => {
            assert!(started.contains(&0), "{id}: ran without a step: {k:?}");
            // A scenario that only checks the default handshake sends nothing on a shared
            // session: the answer the session kept is quoted in its transcript instead.
            let handshake_only = started.len() == 1;
            let quoted = handshake_only && k.contains(&"connection".to_owned());
            assert!(
                quoted || k.contains(&"frame_sent".to_owned()),
                "{id}: no frame: {k:?}"
            );
        }
        other => panic!("{id}: verdict {other}"),
    }
}

#[test]
fn with_two_jobs_every_scenario_has_complete_ordered_events_that_validate() {
    let (code, events, text) = run_events(
        &[
            "--include",
            "tools/*",
            "--include",
            "lifecycle/*",
            "--include",
            "resources/*",
        ],
        &[&reference()],
    );
    assert_eq!(code, 0, "{text}");
    let validator = validator();
    for e in &events {
        let errors: Vec<String> = validator.iter_errors(e).map(|x| x.to_string()).collect();
        assert!(errors.is_empty(), "{e}: {errors:?}");
    }
    // The schema is not vacuous: a finding must be a full finding of results.schema.json.
    let bad = serde_json::json!({"event": "finding", "scenario": "a/b", "scope": "scenario", "finding": {"rule": "x"}});
    assert!(!validator.is_valid(&bad));
    let bad = serde_json::json!({"event": "step_finished", "scenario": "a/b", "step": 0, "line": 3, "status": "skipped"});
    assert!(!validator.is_valid(&bad), "a skipped step needs its reason");
    assert_eq!(events.first().unwrap()["event"], "run_started");
    assert_eq!(events.last().unwrap()["event"], "run_finished");
    let sweep = events
        .iter()
        .position(|e| e["event"] == "sweep_finished")
        .unwrap();
    let first_scenario = events
        .iter()
        .position(|e| e["event"] == "scenario_started")
        .unwrap();
    assert!(
        sweep < first_scenario,
        "the sweep ends before any scenario starts"
    );

    let planned = events[0]["planned"].as_u64().unwrap() as usize;
    let mut per: BTreeMap<&str, Vec<&Value>> = BTreeMap::new();
    for e in &events {
        if let Some(id) = e["scenario"].as_str() {
            per.entry(id).or_default().push(e);
        }
    }
    assert!(planned > 10, "{planned}");
    assert_eq!(per.len(), planned, "every planned scenario has events");
    for (id, evs) in &per {
        check_scenario_order(id, evs);
    }
    // Two at a time: some scenario starts before the previous one finished.
    let mut running = 0usize;
    let mut overlapped = false;
    for e in &events {
        match e["event"].as_str().unwrap() {
            "scenario_started" => {
                running += 1;
                overlapped |= running > 1;
            }
            "scenario_finished" => running -= 1,
            _ => {}
        }
    }
    assert!(overlapped, "--jobs 2 ran scenarios concurrently");
    // The tally agrees with the scenario verdicts.
    let tally = &events.last().unwrap()["tally"];
    let passes = events
        .iter()
        .filter(|e| e["event"] == "scenario_finished" && e["verdict"] == "pass")
        .count();
    assert_eq!(tally["pass"].as_u64().unwrap() as usize, passes);
}

#[test]
fn a_failing_scenario_emits_its_finding_with_rule_and_spec_section() {
    // The server dies on tools/list: the scenario listing tools fails, with its finding.
    let (code, events, text) = run_events(
        &["--include", "tools/list-result"],
        &[&misbehaving(), "--defect", "crash-mid-session"],
    );
    assert_eq!(code, 1, "{text}");
    let finding = events
        .iter()
        .find(|e| {
            e["event"] == "finding"
                && e["scenario"] == "tools/list-result"
                && e["scope"] == "scenario"
        })
        .unwrap_or_else(|| panic!("no scenario finding in {events:#?}"));
    assert_eq!(finding["finding"]["rule"], "tools/list-result");
    assert_eq!(finding["finding"]["severity"], "failure");
    let spec = finding["finding"]["spec"].as_str().unwrap();
    // A server that dies fails the request that killed it: the spec section is the one
    // on answering requests.
    assert!(
        spec.starts_with("https://modelcontextprotocol.io/specification/2025-11-25/")
            && spec.contains('#'),
        "{spec}"
    );
    // The finding comes inside its step, before the scenario finishes as failed.
    let at = |pred: &dyn Fn(&Value) -> bool| events.iter().position(pred).unwrap();
    let f = at(&|e| e == finding);
    let done = at(&|e| e["event"] == "scenario_finished");
    assert!(f < done);
    assert_eq!(events[done]["verdict"], "fail");
    assert!(events[..f].iter().any(|e| e["event"] == "step_started"));
}

#[test]
fn verbose_prints_each_frame_before_the_scenario_verdict_line() {
    let out = mcpcheck()
        .args(["run", "--verbose", "--include", "tools/list-result", "--"])
        .arg(reference())
        .output()
        .unwrap();
    let stdout = String::from_utf8(out.stdout.clone()).unwrap();
    assert!(out.status.success(), "{}", describe(&out));
    let lines: Vec<&str> = stdout.lines().collect();
    let find = |p: &dyn Fn(&str) -> bool| {
        lines
            .iter()
            .position(|l| p(l))
            .unwrap_or_else(|| panic!("{stdout}"))
    };
    let step = find(&|l| l.contains("[tools/list-result] ▸ request tools/list"));
    // Frames are quoted: `"method":"tools/list"` prints as `\"method\":\"tools/list\"`.
    let sent = find(&|l| {
        l.contains("[tools/list-result]")
            && l.contains("→")
            && l.contains(r#"method\":\"tools/list"#)
    });
    let received = find(&|l| {
        l.contains("[tools/list-result]") && l.contains("←") && l.contains("inputSchema")
    });
    let verdict = find(&|l| l.trim_start().starts_with("pass") && l.ends_with("tools/list-result"));
    assert!(
        step < sent && sent < received && received < verdict,
        "{stdout}"
    );
    let summary = find(&|l| l.starts_with("PASS:"));
    assert!(verdict < summary, "{stdout}");
    assert!(!stdout.contains('\x1b'), "NO_COLOR: no escape codes");
}

#[test]
fn quiet_prints_failing_scenarios_and_the_summary_only() {
    let out = mcpcheck()
        .args([
            "run",
            "--protocol-version",
            "2025-11-25",
            "--quiet",
            "--timeout",
            "3s",
            "--include",
            "tools/list-result",
            "--include",
            "lifecycle/version-echo-2025-11-25",
            "--",
        ])
        .args([misbehaving().as_str(), "--defect", "crash-mid-session"])
        .output()
        .unwrap();
    let stdout = String::from_utf8(out.stdout.clone()).unwrap();
    assert_eq!(out.status.code(), Some(1), "{}", describe(&out));
    assert!(stdout.contains("FAIL  tools/list-result"), "{stdout}");
    assert!(stdout.contains("spec: https://"), "{stdout}");
    assert!(
        !stdout.contains("pass "),
        "no passing scenario lines: {stdout}"
    );
    assert!(!stdout.contains("mcpcheck 0."), "no header: {stdout}");
    assert!(
        stdout.lines().last().unwrap().starts_with("FAIL:"),
        "{stdout}"
    );
}

#[test]
fn an_unstartable_server_writes_a_run_level_harness_error_event() {
    let (code, events, text) = run_events(&[], &["/nonexistent/mcp-server"]);
    assert_eq!(code, 2, "{text}");
    let k: Vec<&str> = events
        .iter()
        .map(|e| e["event"].as_str().unwrap())
        .collect();
    assert_eq!(k, ["run_started", "harness_error"], "{text}");
    assert!(events[1]["scenario"].is_null());
    assert!(
        events[1]["reason"]
            .as_str()
            .unwrap()
            .contains("/nonexistent/mcp-server"),
        "{}",
        events[1]
    );
}

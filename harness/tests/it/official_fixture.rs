//! The official-fixture profile (scenarios/official/) against thirdparty/official_fixture.py,
//! a server on the Python SDK with the official suite's fixture names, started by mcpcheck
//! itself over Streamable HTTP (`--serve`): the fixture passes every official scenario, and
//! each broken variant (`--broken NAME`, thirdparty/official-fixture-defects.toml) fails
//! exactly its scenarios. The default tool policy (readonly) still calls the fixture tools.

use std::collections::{BTreeMap, BTreeSet};

use crate::support::report::verdicts;
use crate::support::{json_report, python_venv, suite, workspace};

fn serve(broken: Option<&str>) -> Option<String> {
    let python = python_venv()?;
    let script = workspace().join("thirdparty/official_fixture.py");
    let mut line = format!("{} {} --port {{port}}", python.display(), script.display());
    if let Some(b) = broken {
        line.push_str(&format!(" --broken {b}"));
    }
    Some(line)
}

/// The official scenarios' verdicts against the fixture (or a broken variant).
fn official_verdicts(broken: Option<&str>) -> Option<(i32, BTreeMap<String, String>, String)> {
    let line = serve(broken)?;
    let (code, report, out) = json_report(
        "run",
        &["--serve", &line, "--include", "official/*", "--jobs", "4"],
        &[],
    );
    Some((code, verdicts(&report), out))
}

#[test]
fn the_fixture_passes_every_official_scenario_under_the_default_tool_policy() {
    let Some((code, verdicts, out)) = official_verdicts(None) else {
        return;
    };
    assert_eq!(code, 0, "{out}");
    let listed: BTreeSet<String> = suite::listed()
        .into_iter()
        .map(|s| s.id)
        .filter(|id| id.starts_with("official/"))
        .collect();
    assert!(!listed.is_empty());
    let passed: BTreeSet<String> = verdicts
        .iter()
        .filter(|(_, v)| *v == "pass")
        .map(|(id, _)| id.clone())
        .collect();
    assert_eq!(
        passed, listed,
        "every official scenario runs and passes: {out}"
    );
}

#[test]
fn each_broken_variant_fails_exactly_its_scenarios() {
    if python_venv().is_none() {
        return;
    }
    let mut wrong = Vec::new();
    for (name, defect) in suite::official_fixture_defects() {
        let (_, verdicts, out) = official_verdicts(Some(&name)).expect("checked above");
        let failed: BTreeSet<String> = verdicts
            .iter()
            .filter(|(_, v)| *v != "pass")
            .map(|(id, _)| id.clone())
            .collect();
        if failed != defect.fails {
            wrong.push(format!(
                "--broken {name}: expected {:?} to fail, got {failed:?}\n{out}",
                defect.fails
            ));
        }
    }
    assert!(wrong.is_empty(), "{}", wrong.join("\n"));
}

#[test]
fn the_official_scenarios_skip_on_a_server_without_the_fixture_names() {
    let reference = crate::support::reference();
    let (code, report, out) = crate::support::run_json(&["--include", "official/*"], &[&reference]);
    assert_eq!(code, 0, "{out}");
    let v = verdicts(&report);
    assert!(!v.is_empty());
    assert!(v.values().all(|v| v == "skip"), "{v:?}");
}

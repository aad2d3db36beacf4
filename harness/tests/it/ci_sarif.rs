//! `--report sarif=PATH`: a SARIF 2.1.0 log that Microsoft's SARIF validator accepts
//! (with the GitHub ingestion rules), one result per finding, rule metadata with spec
//! links, locations in scenario files (with lines), and fingerprints that are the same
//! across two runs.

use std::collections::{BTreeMap, BTreeSet};
use std::path::PathBuf;

use crate::support::*;
use serde_json::Value;

const DEFECTS: &[&str] = &[
    "--defect",
    "garbage-stdout",
    "--defect",
    "invalid-tool-schema",
    "--defect",
    "set-level-non-empty",
];

/// A user scenario that fails on every server: its finding must point at line 9 (the
/// expectation).
const OWN_SCENARIO: &str = "id: mine/tool-named-nope
title: the first tool is named nope
spec: server/tools#listing-tools
requires: [tools]
steps:
  - request: tools/list
    expect:
      result:
        /tools/0/name: { one_of: [nope] }
";

/// Runs the misbehaving server with the built-in suite and `mine/` (in a temp working
/// directory), returning (SARIF, JSON report).
fn run_once(dir: &std::path::Path) -> (Value, Value) {
    std::fs::create_dir_all(dir.join("mine")).unwrap();
    std::fs::write(dir.join("mine/nope.yaml"), OWN_SCENARIO).unwrap();
    let out = mcpcheck()
        .current_dir(dir)
        .args(["run", "--protocol-version", "2025-11-25"])
        .args(["--builtin", "mine", "--report", "sarif=out/r.sarif"])
        .args(["--report", "json=out/r.json", "--"])
        .arg(misbehaving())
        .args(DEFECTS)
        .output()
        .unwrap();
    let text = describe(&out);
    assert_eq!(out.status.code(), Some(1), "findings: exit 1: {text}");
    let read = |p: &str| -> Value {
        serde_json::from_str(&std::fs::read_to_string(dir.join(p)).unwrap()).unwrap()
    };
    (read("out/r.sarif"), single_leg(read("out/r.json")))
}

/// (rule, fingerprint, uri, line) of every result.
fn identities(sarif: &Value) -> BTreeSet<(String, String, String, i64)> {
    sarif["runs"][0]["results"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| {
            let loc = &r["locations"][0]["physicalLocation"];
            (
                r["ruleId"].as_str().unwrap().to_owned(),
                r["partialFingerprints"]["mcpcheckFinding/v1"]
                    .as_str()
                    .unwrap()
                    .to_owned(),
                loc["artifactLocation"]["uri"].as_str().unwrap().to_owned(),
                loc["region"]["startLine"].as_i64().unwrap(),
            )
        })
        .collect()
}

#[test]
fn sarif_has_one_result_per_finding_and_stable_fingerprints() {
    let dir = tempfile_path("sarif");
    let (sarif, report) = run_once(&dir);
    let run = &sarif["runs"][0];
    assert_eq!(sarif["version"], "2.1.0");
    assert_eq!(
        run["automationDetails"]["id"],
        "mcpcheck/mcp-misbehaving-server/2025-11-25/"
    );

    // One result per finding: the sweep's, each scenario's own, and each distinct
    // protocol finding of the scenario sessions once.
    let results = run["results"].as_array().unwrap();
    let own: usize = report["scenarios"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| s["findings"].as_array().unwrap().len())
        .sum();
    let sweep = report["findings"].as_array().unwrap().len();
    let protocol_rules: BTreeSet<&str> = report["scenarios"]
        .as_array()
        .unwrap()
        .iter()
        .flat_map(|s| s["protocol"].as_array().unwrap())
        .map(|f| f["rule"].as_str().unwrap())
        .collect();
    assert!(sweep >= 2 && own >= 4, "sweep {sweep}, scenarios {own}");
    let scenario_results = results
        .iter()
        .filter(|r| r["properties"]["scenario"].is_string())
        .count();
    assert_eq!(scenario_results, own);
    assert!(
        results.len() > sweep + own,
        "a deduplicated protocol finding"
    );
    for rule in protocol_rules {
        assert!(
            results.iter().any(|r| r["ruleId"] == rule),
            "{rule} reported"
        );
    }

    // Rule metadata: every result's rule is described, with a spec link and a level.
    let rules = run["tool"]["driver"]["rules"].as_array().unwrap();
    for r in results {
        let index = r["ruleIndex"].as_u64().unwrap() as usize;
        let rule = &rules[index];
        assert_eq!(rule["id"], r["ruleId"]);
        assert!(
            rule["helpUri"]
                .as_str()
                .unwrap()
                .starts_with("https://modelcontextprotocol.io/specification/2025-11-25/"),
            "{rule}"
        );
        assert!(rule["shortDescription"]["text"].as_str().unwrap().len() > 5);
        assert!(rule["fullDescription"]["text"].is_string());
        assert_eq!(rule["defaultConfiguration"]["level"], "error");
        assert_eq!(r["level"], "error");
    }

    // Locations: built-in scenarios at scenarios/<area>/<file>.yaml with the step's line;
    // the user's own file at its line.
    let ids = identities(&sarif);
    assert!(
        ids.iter()
            .any(|(rule, _, uri, line)| rule == "tools/list-result"
                && uri == "scenarios/tools/list-result.yaml"
                && *line > 1),
        "{ids:#?}"
    );
    assert!(
        ids.iter()
            .any(|(rule, _, uri, line)| rule == "mine/tool-named-nope"
                && uri == "mine/nope.yaml"
                && *line == 9),
        "{ids:#?}"
    );

    // A second run: the same results, the same fingerprints.
    let (again, _) = run_once(&tempfile_path("sarif-again"));
    assert_eq!(ids, identities(&again));
    let fingerprints: BTreeMap<_, _> = ids.iter().map(|(r, f, _, _)| (f, r)).collect();
    assert_eq!(fingerprints.len(), ids.len(), "fingerprints are distinct");

    let Some(complaints) = multitool_complaints(&dir.join("out/r.sarif")) else {
        return;
    };
    assert!(complaints.is_empty(), "{complaints:#?}");
    // The validator does catch a broken log (so the check above can fail): a result
    // without locations breaks GitHub's ingestion rules.
    let mut broken = sarif.clone();
    broken["runs"][0]["results"][0]
        .as_object_mut()
        .unwrap()
        .remove("locations");
    let path = dir.join("out/broken.sarif");
    std::fs::write(&path, broken.to_string()).unwrap();
    let complaints = multitool_complaints(&path).unwrap();
    assert!(
        complaints
            .iter()
            .any(|c| c.contains("MissingLocationsArray")),
        "{complaints:#?}"
    );
}

/// What Microsoft's SARIF validator (npm `@microsoft/sarif-multitool`, installed by
/// `.ci/run` with `npm ci --prefix .ci/tools`) says of a log, with the SARIF and the GitHub
/// ingestion rules: every error and warning. `None` when it is not installed (a failure
/// when `CI` is set). The tool exits 0 whatever it finds, so its output log is read.
fn multitool_complaints(sarif: &std::path::Path) -> Option<Vec<String>> {
    let tools = workspace().join(".ci/tools/node_modules/@microsoft");
    let binary: PathBuf = crate::support::require(&crate::support::SARIF_VALIDATOR, || {
        ["sarif-multitool-linux", "sarif-multitool-darwin"]
            .iter()
            .map(|p| tools.join(p).join("Sarif.Multitool"))
            .find(|p| p.is_file())
    })?;
    let out_file = tempfile_path("validation.sarif");
    let out = std::process::Command::new(&binary)
        .args([
            "validate",
            "--rule-kind",
            "Sarif;Gh",
            "--log",
            "ForceOverwrite",
        ])
        .arg("--output")
        .arg(&out_file)
        .arg(sarif)
        .output()
        .unwrap();
    let text = describe(&out);
    assert_eq!(out.status.code(), Some(0), "{text}");
    assert!(text.contains("Analysis completed successfully"), "{text}");
    let log: Value = serde_json::from_str(&std::fs::read_to_string(&out_file).unwrap()).unwrap();
    Some(
        log["runs"][0]["results"]
            .as_array()
            .into_iter()
            .flatten()
            .filter(|r| r["level"] != "note" && r["level"] != "none")
            .map(|r| format!("{}: {}", r["ruleId"], r["message"]))
            .collect(),
    )
}

/// A `--partition` share names itself: `partition` in the JSON report, and a SARIF
/// category of its own, so the legs of a split CI matrix can each upload to code scanning
/// without replacing each other's alerts.
#[test]
fn a_partition_has_its_own_sarif_category() {
    let dir = tempfile_path("sarif-partition");
    std::fs::create_dir_all(&dir).unwrap();
    let out = mcpcheck()
        .current_dir(&dir)
        .args([
            "run",
            "--protocol-version",
            "2025-11-25",
            "--partition",
            "2/3",
        ])
        .args(["--report", "sarif=r.sarif", "--report", "json=r.json", "--"])
        .arg(reference())
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(0), "{}", describe(&out));
    let read = |p: &str| -> Value {
        serde_json::from_str(&std::fs::read_to_string(dir.join(p)).unwrap()).unwrap()
    };
    let id = read("r.sarif")["runs"][0]["automationDetails"]["id"]
        .as_str()
        .unwrap()
        .to_owned();
    assert!(
        id.starts_with("mcpcheck/") && id.ends_with("/2025-11-25/part-2-of-3/"),
        "{id}"
    );
    assert_eq!(single_leg(read("r.json"))["partition"], "2/3");
}

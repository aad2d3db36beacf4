//! A correct server passes: every revision it speaks, over stdio and Streamable HTTP, with
//! every tool called (`--call-tools all`) and warnings failing the run (`--fail-on
//! warning`). This is the strictest run a user can ask for, so a false positive anywhere in
//! the suite (a scenario, a session rule, the sweep) shows here as exit 1.

use serde_json::Value;

use crate::support::{
    json_report, misbehaving, misbehaving_http, python_venv, reference, run_json, run_url_json,
    verdicts, workspace,
};

const STRICT: &[&str] = &[
    "--protocol-version",
    "all",
    "--call-tools",
    "all",
    "--fail-on",
    "warning",
];

/// The revisions whose legs ran, and the legs that did not pass (with their tallies).
fn legs(report: &Value) -> (Vec<String>, Vec<String>) {
    let rows = report["revisions"].as_array().cloned().unwrap_or_default();
    let ran = rows
        .iter()
        .filter(|r| r["status"] != "not_spoken")
        .map(|r| r["revision"].as_str().unwrap_or("?").to_owned())
        .collect();
    let bad = rows
        .iter()
        .filter(|r| r["status"] != "not_spoken" && r["status"] != "pass")
        .map(|r| r.to_string())
        .collect();
    (ran, bad)
}

#[test]
fn the_rmcp_reference_passes_every_revision_strictly_over_stdio() {
    let (code, report, text) = run_json(STRICT, &[&reference()]);
    let (ran, bad) = legs(&report);
    assert!(bad.is_empty(), "{bad:?}\n{text}");
    assert_eq!(code, 0, "{text}");
    // rmcp speaks the handshake era; 2026-07-28 is reported as not spoken, not passed.
    assert_eq!(
        ran,
        ["2024-11-05", "2025-03-26", "2025-06-18", "2025-11-25"],
        "{text}"
    );
}

#[test]
fn the_defect_free_fixture_passes_every_revision_strictly_over_http() {
    let server = misbehaving_http(&[]);
    let (code, report, text) = run_url_json(&server.url, STRICT);
    let (ran, bad) = legs(&report);
    assert!(bad.is_empty(), "{bad:?}\n{text}");
    assert_eq!(code, 0, "{text}");
    assert_eq!(ran.len(), 5, "both eras, every revision: {ran:?}\n{text}");
}

#[test]
fn the_defect_free_fixture_passes_every_revision_strictly_over_stdio() {
    let (code, report, text) = run_json(STRICT, &[&misbehaving()]);
    let (ran, bad) = legs(&report);
    assert!(bad.is_empty(), "{bad:?}\n{text}");
    assert_eq!(code, 0, "{text}");
    assert_eq!(ran.len(), 5, "both eras, every revision: {ran:?}\n{text}");
}

/// A correct but unusual behaviour of the misbehaving fixture (`--variant`), the scenarios it
/// concerns, and the verdict each must get: pass, or skip where the behaviour leaves the
/// scenario nothing to judge. Each row failed or warned before the suite was read against
/// its spec sentence (scenarios/README.md, judgement calls).
struct Variant {
    name: &'static str,
    http: bool,
    revision: &'static str,
    verdicts: &'static [(&'static str, &'static str)],
}

const VARIANTS: &[Variant] = &[
    // A refused subscribe leaves nothing to unsubscribe from.
    Variant {
        name: "refuse-subscribe",
        http: false,
        revision: "2025-11-25",
        verdicts: &[
            ("resources/subscribe", "pass"),
            ("resources/unsubscribe", "skip"),
        ],
    },
    // A read and a template list that fail, and an input_required read without caching
    // hints.
    Variant {
        name: "read-variety",
        http: false,
        revision: "2026-07-28",
        verdicts: &[
            ("stateless/cacheable-results", "pass"),
            ("stateless/cacheable-list-results", "pass"),
        ],
    },
    // An acknowledgment that spells out `false` and `[]` instead of leaving them out.
    Variant {
        name: "ack-false-flags",
        http: false,
        revision: "2026-07-28",
        verdicts: &[("stateless/listen-only-requested", "pass")],
    },
    // -32020 under 400 for a body whose version the header cannot match.
    Variant {
        name: "version-header-mismatch",
        http: true,
        revision: "2026-07-28",
        verdicts: &[("stateless/http-missing-meta-400", "pass")],
    },
    // A JSON-RPC error (-32602, under 400) for made-up arguments whose header matched.
    Variant {
        name: "refuse-param-arguments",
        http: true,
        revision: "2026-07-28",
        verdicts: &[("stateless/http-param-header-match-accepted", "pass")],
    },
    // A 5xx is an HTTP error status as much as a 4xx.
    Variant {
        name: "invalid-body-500",
        http: true,
        revision: "2025-11-25",
        verdicts: &[("http/invalid-body-rejected", "pass")],
    },
    // Another version the server supports, one mcpcheck does not know.
    Variant {
        name: "legacy-version",
        http: false,
        revision: "2025-11-25",
        verdicts: &[("lifecycle/version-is-handshake-revision", "pass")],
    },
];

#[test]
fn correct_but_unusual_behaviours_pass_strictly() {
    let mut problems = Vec::new();
    for v in VARIANTS {
        let mut args = vec!["--protocol-version", v.revision, "--fail-on", "warning"];
        for (id, _) in v.verdicts {
            args.extend(["--include", id]);
        }
        let (code, report, text) = if v.http {
            let server = misbehaving_http(&["--variant", v.name]);
            run_url_json(&server.url, &args)
        } else {
            run_json(&args, &[&misbehaving(), "--variant", v.name])
        };
        let got = verdicts(&report);
        for (id, want) in v.verdicts {
            if got.get(*id).map(String::as_str) != Some(*want) {
                problems.push(format!(
                    "--variant {}: {id} is {:?}, not {want}",
                    v.name,
                    got.get(*id)
                ));
            }
        }
        if code != 0 {
            problems.push(format!("--variant {}: exit {code}\n{text}", v.name));
        }
    }
    assert!(problems.is_empty(), "{}", problems.join("\n"));
}

/// 2026-07-28 basic#meta: "If processing a request requires a capability the client did not
/// include in io.modelcontextprotocol/clientCapabilities, the server MUST return a
/// MissingRequiredClientCapabilityError (-32021)". The official fixture's
/// `test_missing_capability` does exactly that when called without `sampling`, which is no
/// refused argument: tools/invalid-arguments-tool-error passes it, even with warnings
/// failing the run; a -32021 without `data.requiredCapabilities` still warns.
#[test]
fn a_missing_capability_error_is_no_invalid_arguments_warning() {
    let Some(python) = python_venv() else {
        return; // `require` already failed the test under CI.
    };
    let script = workspace().join("thirdparty/official_fixture.py");
    let serve = |broken: &str| {
        format!(
            "{} {} --port {{port}}{broken}",
            python.display(),
            script.display()
        )
    };
    let id = "tools/invalid-arguments-tool-error";
    for (broken, code_want, verdict) in [
        ("", 0, "pass"),
        (" --broken missing-capability-no-data", 1, "warn"),
    ] {
        let line = serve(broken);
        let url = format!("http://127.0.0.1:{}/mcp", crate::support::unshared_port());
        let args = [
            "--url",
            &url,
            "--serve",
            &line,
            "--protocol-version",
            "2026-07-28",
            "--include",
            id,
            "--fail-on",
            "warning",
            // The fixture's tools carry no readOnlyHint: the scenario calls every tool.
            "--call-tools",
            "all",
        ];
        let (code, report, text) = json_report("run", &args, &[]);
        assert_eq!(verdicts(&report)[id], verdict, "{broken}: {text}");
        assert_eq!(code, code_want, "{broken}: {text}");
        // The fixture tool was called and answered -32021: the case is exercised.
        assert!(report.to_string().contains("-32021"), "{broken}: {text}");
    }
}

/// The third-party baselines of `thirdparty/strict.sh` (issue 27.7) excuse only documented
/// deviations: every entry's reason starts with the id of a row of thirdparty/FINDINGS.md
/// (`F4: ...`), and every baseline belongs to a run the script knows. A false positive of
/// mcpcheck cannot be waved through by a baseline without a finding written down for it.
#[test]
fn every_third_party_baseline_entry_is_a_documented_deviation() {
    let dir = workspace().join("thirdparty");
    let findings = std::fs::read_to_string(dir.join("FINDINGS.md")).expect("FINDINGS.md");
    let script = std::fs::read_to_string(dir.join("strict.sh")).expect("strict.sh");
    let mut seen = 0;
    let mut problems = Vec::new();
    // Server baselines, one per strict.sh run, and clients/ (one per client, used by
    // client_mutation).
    let baselines = std::fs::read_dir(dir.join("baselines")).expect("thirdparty/baselines");
    let clients =
        std::fs::read_dir(dir.join("baselines/clients")).expect("thirdparty/baselines/clients");
    for entry in baselines.chain(clients) {
        let path = entry.expect("a directory entry").path();
        if path.is_dir() {
            continue;
        }
        let name = path
            .file_stem()
            .and_then(|s| s.to_str())
            .unwrap_or_default();
        let server = path.parent().and_then(|p| p.file_name()) == Some("baselines".as_ref());
        if server && !script.contains(&format!("        {name}) ")) {
            problems.push(format!("{name}: no run of that name in strict.sh"));
        }
        let text = std::fs::read_to_string(&path).expect("a baseline");
        for reason in text
            .lines()
            .filter_map(|l| l.trim().strip_prefix("reason: "))
        {
            seen += 1;
            let reason = reason.trim_matches('"');
            let id = reason.split(':').next().unwrap_or_default();
            let documented = id.starts_with('F')
                && id.len() > 1
                && id[1..].chars().all(|c| c.is_ascii_digit())
                && findings.contains(&format!("| {id} |"));
            if !documented {
                problems.push(format!("{name}: {reason:?} names no FINDINGS.md row"));
            }
        }
    }
    assert!(seen >= 30, "only {seen} baseline entries");
    assert!(problems.is_empty(), "{problems:#?}");
}

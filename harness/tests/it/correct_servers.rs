//! A correct server passes: every revision it speaks, over stdio and Streamable HTTP, with
//! every tool called (`--call-tools all`) and warnings failing the run (`--fail-on
//! warning`). This is the strictest run a user can ask for, so a false positive anywhere in
//! the suite (a scenario, a session rule, the sweep) shows here as exit 1.

use serde_json::Value;

use crate::support::{misbehaving_http, reference, run_json, run_url_json};

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

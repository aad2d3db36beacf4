//! `--fail-on warning`: a SHOULD broken fails the run (exit 1) when asked, and only then;
//! the baseline accepts it like any failure.

use crate::support::{misbehaving, run_json, tempfile_path};

/// `errors/message-is-text` is a SHOULD: the fixture's empty error messages break only it.
const SERVER: &[&str] = &["--defect", "empty-error-message"];

fn args<'a>(extra: &[&'a str]) -> Vec<&'a str> {
    let mut a = vec!["--include", "errors/message-is-text"];
    a.extend_from_slice(extra);
    a
}

#[test]
fn a_should_broken_passes_by_default_and_fails_with_fail_on_warning() {
    let server = misbehaving();
    let mut cmd = vec![server.as_str()];
    cmd.extend_from_slice(SERVER);

    let (code, report, text) = run_json(&args(&[]), &cmd);
    assert_eq!(code, 0, "{text}");
    assert_eq!(report["tally"]["warn"], 1, "{report:#}");
    assert_eq!(report["fail_on"], "failure");
    assert_eq!(report["verdict"], "pass");

    let (code, report, text) = run_json(&args(&["--fail-on", "warning"]), &cmd);
    assert_eq!(code, 1, "{text}");
    assert_eq!(report["fail_on"], "warning");
    assert_eq!(report["verdict"], "fail");
}

#[test]
fn a_listed_warning_is_accepted_under_fail_on_warning() {
    let server = misbehaving();
    let mut cmd = vec![server.as_str()];
    cmd.extend_from_slice(SERVER);
    let baseline = tempfile_path("fail-on-baseline.yaml");
    std::fs::write(
        &baseline,
        "expected-failures:\n  - id: errors/message-is-text\n    reason: known empty messages\n",
    )
    .unwrap();
    let path = baseline.to_str().unwrap();
    let (code, report, text) = run_json(
        &args(&["--fail-on", "warning", "--expected-failures", path]),
        &cmd,
    );
    assert_eq!(code, 0, "{text}");
    assert_eq!(
        report["baseline"]["expected"][0]["id"],
        "errors/message-is-text"
    );
    // Without --fail-on warning the same entry names nothing that fails: stale.
    let (code, report, text) = run_json(&args(&["--expected-failures", path]), &cmd);
    assert_eq!(code, 1, "{text}");
    assert_eq!(
        report["baseline"]["stale"][0]["id"],
        "errors/message-is-text"
    );
}

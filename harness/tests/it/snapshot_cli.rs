//! `mcpcheck snapshot` against the reference fixture: unchanged servers give no diff, one
//! change in the fixture (`--variant`) gives exactly that diff and exit 1, and accepting
//! it makes the next run pass.

use std::path::{Path, PathBuf};
use std::process::Output;

use crate::support::{describe, mcpcheck, reference, reference_http, tempfile_path};

const AREAS: [&str; 4] = ["server", "tools", "resources", "prompts"];

fn snapshot(dir: &Path, extra: &[&str], server_args: &[&str]) -> Output {
    let mut cmd = mcpcheck();
    cmd.arg("snapshot")
        .arg("--dir")
        .arg(dir)
        .args(extra)
        .arg("--")
        .arg(reference())
        .args(server_args);
    cmd.output().expect("running mcpcheck snapshot")
}

fn fresh_dir(name: &str) -> PathBuf {
    let dir = tempfile_path(name);
    let _ = std::fs::remove_dir_all(&dir);
    dir
}

fn read(path: PathBuf) -> String {
    std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

fn pending(dir: &Path) -> Vec<String> {
    let mut names: Vec<String> = std::fs::read_dir(dir)
        .unwrap()
        .flatten()
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .filter(|n| n.ends_with(".snap.new"))
        .collect();
    names.sort();
    names
}

/// The changed lines of the unified diffs in `stdout`, without the file headers.
fn changed_lines(stdout: &str) -> Vec<String> {
    stdout
        .lines()
        .filter(|l| {
            (l.starts_with('-') || l.starts_with('+'))
                && !l.starts_with("--- ")
                && !l.starts_with("+++ ")
        })
        .map(str::to_owned)
        .collect()
}

fn code(out: &Output) -> i32 {
    out.status.code().unwrap_or(-1)
}

#[test]
fn first_run_writes_and_repeated_runs_against_an_unchanged_server_show_no_diff() {
    let dir = fresh_dir("snap-stable");
    let first = snapshot(&dir, &[], &[]);
    assert_eq!(code(&first), 0, "{}", describe(&first));
    let written: Vec<String> = AREAS
        .iter()
        .map(|a| read(dir.join(format!("{a}.snap"))))
        .collect();
    for (area, text) in AREAS.iter().zip(&written) {
        assert!(
            text.starts_with(&format!(
                "---\nsource: mcpcheck snapshot\nexpression: {area}\n---\n"
            )),
            "{area}: {text}"
        );
    }
    // What the snapshot holds: redacted version, the tool list, the policy's calls.
    assert!(
        written[0].contains("version: \"[version]\""),
        "{}",
        written[0]
    );
    assert!(
        written[1].contains("write_note:\n    skipped: not annotated readOnlyHint"),
        "{}",
        written[1]
    );
    assert!(
        written[1].contains("- text: <string>\n          type: text"),
        "{}",
        written[1]
    );
    for run in 0..3 {
        let again = snapshot(&dir, &[], &[]);
        assert_eq!(code(&again), 0, "run {run}: {}", describe(&again));
        let stdout = String::from_utf8_lossy(&again.stdout);
        assert!(changed_lines(&stdout).is_empty(), "run {run}: {stdout}");
        assert!(pending(&dir).is_empty());
        let now: Vec<String> = AREAS
            .iter()
            .map(|a| read(dir.join(format!("{a}.snap"))))
            .collect();
        assert_eq!(now, written, "run {run} rewrote a snapshot");
    }
    // Pagination is followed: pages of one item give the same snapshot.
    let paged = snapshot(&dir, &[], &["--page-size", "1"]);
    assert_eq!(code(&paged), 0, "{}", describe(&paged));
    let _ = std::fs::remove_dir_all(&dir);
}

/// Takes a snapshot of the plain fixture, then of `--variant variant`: returns the dir and
/// the output of the second run.
fn changed(variant: &str) -> (PathBuf, Output) {
    let dir = fresh_dir(&format!("snap-{variant}"));
    let first = snapshot(&dir, &[], &[]);
    assert_eq!(code(&first), 0, "{}", describe(&first));
    let second = snapshot(&dir, &[], &["--variant", variant]);
    assert_eq!(code(&second), 1, "{}", describe(&second));
    (dir, second)
}

/// The full cycle for one variant: exactly `want` changed lines in `area`, `.snap.new`
/// beside it only, `--accept`, then a clean run.
fn assert_exact_change(variant: &str, area: &str, want: &[&str]) {
    let (dir, out) = changed(variant);
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert_eq!(changed_lines(&stdout), want, "{stdout}");
    assert!(
        stdout.contains(&format!("--- {area}.snap\n+++ {area}.snap.new\n")),
        "{stdout}"
    );
    assert_eq!(pending(&dir), [format!("{area}.snap.new")]);
    let new = read(dir.join(format!("{area}.snap.new")));
    assert!(new.starts_with(&format!(
        "---\nsource: mcpcheck snapshot\nexpression: {area}\n---\n"
    )));
    let old = read(dir.join(format!("{area}.snap")));
    assert_ne!(old, new);

    let accept = snapshot(&dir, &["--accept"], &["--variant", variant]);
    assert_eq!(code(&accept), 0, "{}", describe(&accept));
    assert!(pending(&dir).is_empty());
    assert_eq!(read(dir.join(format!("{area}.snap"))), new);
    let after = snapshot(&dir, &[], &["--variant", variant]);
    assert_eq!(code(&after), 0, "{}", describe(&after));
    assert!(changed_lines(&String::from_utf8_lossy(&after.stdout)).is_empty());
    // And going back to the plain server is a change again.
    let back = snapshot(&dir, &[], &[]);
    assert_eq!(code(&back), 1, "{}", describe(&back));
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn a_changed_tool_schema_is_exactly_that_diff() {
    assert_exact_change(
        "tool-schema",
        "tools",
        &["+        repeat:", "+          type: integer"],
    );
}

#[test]
fn a_renamed_prompt_argument_is_exactly_that_diff() {
    assert_exact_change(
        "prompt-arg",
        "prompts",
        &["-        name: style", "+        name: tone"],
    );
}

#[test]
fn a_changed_content_type_is_exactly_that_diff() {
    assert_exact_change(
        "content-type",
        "tools",
        &[
            "-        - text: <string>",
            "-          type: text",
            "+        - data: <string>",
            "+          mimeType: image/png",
            "+          type: image",
        ],
    );
}

#[test]
fn review_accepts_on_yes_and_keeps_pending_on_no() {
    use std::io::Write;
    let (dir, _) = changed("prompt-arg");
    let review = |answer: &str| {
        let mut cmd = mcpcheck();
        cmd.arg("snapshot")
            .arg("--dir")
            .arg(&dir)
            .arg("--review")
            .args(["--", &reference(), "--variant", "prompt-arg"])
            .stdin(std::process::Stdio::piped())
            .stdout(std::process::Stdio::piped())
            .stderr(std::process::Stdio::piped());
        let mut child = cmd.spawn().expect("spawn mcpcheck");
        child
            .stdin
            .take()
            .unwrap()
            .write_all(answer.as_bytes())
            .unwrap();
        child.wait_with_output().unwrap()
    };
    let no = review("n\n");
    assert_eq!(code(&no), 1, "{}", describe(&no));
    assert_eq!(pending(&dir), ["prompts.snap.new"]);
    let yes = review("y\n");
    assert_eq!(code(&yes), 0, "{}", describe(&yes));
    assert!(pending(&dir).is_empty());
    let after = snapshot(&dir, &[], &["--variant", "prompt-arg"]);
    assert_eq!(code(&after), 0, "{}", describe(&after));
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn json_output_carries_a_snapshot_area() {
    let (dir, _) = changed("tool-schema");
    let out = snapshot(&dir, &["--format", "json"], &["--variant", "tool-schema"]);
    assert_eq!(code(&out), 1, "{}", describe(&out));
    let report: serde_json::Value = serde_json::from_slice(&out.stdout).expect("json");
    let areas = report["snapshot"]["areas"].as_array().expect("areas");
    let status: Vec<(&str, &str)> = areas
        .iter()
        .map(|a| (a["area"].as_str().unwrap(), a["status"].as_str().unwrap()))
        .collect();
    assert_eq!(
        status,
        [
            ("server", "unchanged"),
            ("tools", "changed"),
            ("resources", "unchanged"),
            ("prompts", "unchanged")
        ]
    );
    assert!(
        areas[1]["diff"]
            .as_str()
            .unwrap()
            .contains("+        repeat:")
    );
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn a_missing_area_file_is_a_change_and_bad_pointers_are_usage_errors() {
    let dir = fresh_dir("snap-missing");
    assert_eq!(code(&snapshot(&dir, &[], &[])), 0);
    std::fs::remove_file(dir.join("prompts.snap")).unwrap();
    let out = snapshot(&dir, &[], &[]);
    assert_eq!(code(&out), 1, "{}", describe(&out));
    assert_eq!(pending(&dir), ["prompts.snap.new"]);
    let bad = snapshot(&dir, &["--volatile", "tools"], &[]);
    assert_eq!(code(&bad), 2, "{}", describe(&bad));
    // A volatile pointer hides a value: descriptions become placeholders.
    let vol = fresh_dir("snap-volatile");
    assert_eq!(
        code(&snapshot(
            &vol,
            &["--volatile", "/tools/list/*/description"],
            &[]
        )),
        0
    );
    let tools = read(vol.join("tools.snap"));
    assert!(tools.contains("description: \"[volatile]\""), "{tools}");
    assert!(!tools.contains("Returns the given message"), "{tools}");
    let _ = std::fs::remove_dir_all(&dir);
    let _ = std::fs::remove_dir_all(&vol);
}

#[test]
fn run_with_a_snapshot_dir_reports_a_snapshot_area_and_fails_on_change() {
    let dir = fresh_dir("snap-run");
    let d = dir.display().to_string();
    let args = [
        "--include",
        "tools/list-result",
        "--snapshot-dir",
        d.as_str(),
    ];
    let server = reference();
    let (code1, report, text) = crate::support::run_json(&args, &[&server]);
    assert_eq!(code1, 0, "{text}");
    assert_eq!(
        report["snapshot"]["areas"][0]["status"], "written",
        "{report}"
    );
    let (code2, report, text) =
        crate::support::run_json(&args, &[&server, "--variant", "content-type"]);
    assert_eq!(code2, 1, "{text}");
    assert_eq!(report["verdict"], "fail");
    assert_eq!(report["snapshot"]["areas"][1]["area"], "tools");
    assert_eq!(report["snapshot"]["areas"][1]["status"], "changed");
    assert!(text.contains("+          mimeType: image/png"), "{text}");
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn a_named_call_overrides_the_policy_and_the_synthesized_arguments() {
    let dir = fresh_dir("snap-call");
    let out = snapshot(
        &dir,
        &[
            "--call",
            r#"write_note={"name":"note","text":"body"}"#,
            "--call",
            r#"echo={"message":"hi"}"#,
        ],
        &[],
    );
    assert_eq!(code(&out), 0, "{}", describe(&out));
    let tools = read(dir.join("tools.snap"));
    assert!(
        tools.contains(
            "  write_note:\n    arguments:\n      name: note\n      text: body\n    result:"
        ),
        "{tools}"
    );
    assert!(
        tools.contains("  echo:\n    arguments:\n      message: hi\n"),
        "{tools}"
    );
    let bad = snapshot(&dir, &["--call", "echo=[1]"], &[]);
    assert_eq!(code(&bad), 2, "{}", describe(&bad));
    let _ = std::fs::remove_dir_all(&dir);
}

/// `--url`: the reference fixture's surface over Streamable HTTP is the one it shows over
/// stdio, so a snapshot taken over stdio is unchanged over HTTP (and `run --url
/// --snapshot-dir` agrees).
#[test]
fn a_snapshot_over_http_matches_the_one_over_stdio() {
    let dir = fresh_dir("http");
    let out = snapshot(&dir, &[], &[]);
    assert_eq!(code(&out), 0, "{}", describe(&out));
    let server = reference_http();
    let out = mcpcheck()
        .args(["snapshot", "--dir"])
        .arg(&dir)
        .args(["--url", &server.url])
        .output()
        .unwrap();
    let text = describe(&out);
    assert_eq!(code(&out), 0, "{text}");
    assert_eq!(
        String::from_utf8_lossy(&out.stdout)
            .matches("unchanged")
            .count(),
        4,
        "{text}"
    );
    assert!(pending(&dir).is_empty(), "{text}");

    let out = mcpcheck()
        .args([
            "run",
            "--include",
            "lifecycle/ping-result",
            "--snapshot-dir",
        ])
        .arg(&dir)
        .args(["--url", &server.url])
        .output()
        .unwrap();
    assert_eq!(code(&out), 0, "{}", describe(&out));
    let _ = std::fs::remove_dir_all(&dir);
}

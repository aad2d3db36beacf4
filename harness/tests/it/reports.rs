//! `--report`: one run writes HTML, JUnit, JSON and Markdown; the JSON validates against
//! `reports/results.schema.json`, the JUnit parses as XML with the expected structure.

use std::path::PathBuf;

use crate::support::*;

struct Outputs {
    dir: PathBuf,
    code: i32,
    text: String,
}

impl Outputs {
    fn read(&self, name: &str) -> String {
        std::fs::read_to_string(self.dir.join(name))
            .unwrap_or_else(|e| panic!("{name}: {e}\n{}", self.text))
    }
}

impl Drop for Outputs {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.dir);
    }
}

/// Runs mcpcheck writing all four reports into a fresh directory (a nested one, to check
/// that parent directories are created).
fn run_with_reports(extra: &[&str], server: &[&str]) -> Outputs {
    let dir = tempfile_path("reports");
    let out = dir.join("nested");
    let arg = |kind: &str, file: &str| format!("{kind}={}", out.join(file).display());
    let output = mcpcheck()
        .arg("run")
        .args(FAST)
        // One leg: these tests are about each report's shape (matrix.rs has the legs).
        .args(
            if extra.iter().any(|a| a.starts_with("--protocol-version")) {
                &[][..]
            } else {
                &["--protocol-version", "2025-11-25"][..]
            },
        )
        .args(["--report", &arg("html", "report.html")])
        .args(["--report", &arg("junit", "junit.xml")])
        .args(["--report", &arg("json", "results.json")])
        .args(["--report", &arg("markdown", "summary.md")])
        .args(extra)
        .arg("--")
        .args(server)
        .output()
        .expect("running mcpcheck");
    Outputs {
        dir: out,
        code: output.status.code().unwrap_or(-1),
        text: describe(&output),
    }
}

fn schema() -> serde_json::Value {
    let path = workspace().join("reports/results.schema.json");
    serde_json::from_str(&std::fs::read_to_string(&path).expect("the report schema"))
        .expect("the report schema is JSON")
}

fn validate(report: &serde_json::Value) -> Vec<String> {
    let validator = jsonschema::validator_for(&schema()).expect("the report schema compiles");
    validator
        .iter_errors(report)
        .map(|e| format!("{} at {}", e, e.instance_path()))
        .collect()
}

fn junit(text: &str) -> roxmltree::Document<'_> {
    roxmltree::Document::parse(text).expect("the JUnit report is well-formed XML")
}

fn testcases<'a>(doc: &'a roxmltree::Document<'a>) -> Vec<roxmltree::Node<'a, 'a>> {
    doc.descendants()
        .filter(|n| n.has_tag_name("testcase"))
        .collect()
}

fn child_kinds<'a>(n: roxmltree::Node<'a, 'a>) -> Vec<&'a str> {
    n.children()
        .filter(|c| c.is_element())
        .map(|c| c.tag_name().name())
        .collect()
}

#[test]
fn one_failing_run_writes_all_four_reports_that_agree() {
    let o = run_with_reports(
        &["--include", "stdio/*", "--include", "tools/*"],
        &[&misbehaving(), "--defect", "garbage-stdout"],
    );
    assert_eq!(o.code, 1, "{}", o.text);

    let full: serde_json::Value = serde_json::from_str(&o.read("results.json")).unwrap();
    let json = single_leg(full.clone());
    let errors = validate(&full);
    assert!(errors.is_empty(), "schema errors: {errors:#?}");
    assert_eq!(json["verdict"], "fail");
    let failing: Vec<&str> = json["scenarios"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|s| s["verdict"] == "fail")
        .map(|s| s["id"].as_str().unwrap())
        .collect();
    assert_eq!(failing, ["stdio/stdout-only-messages"]);

    // JUnit: areas are suites, the failing scenario a <failure>, the sweep its own suite.
    let xml = o.read("junit.xml");
    let doc = junit(&xml);
    let suites: Vec<&str> = doc
        .descendants()
        .filter(|n| n.has_tag_name("testsuite"))
        .filter_map(|n| n.attribute("name"))
        .collect();
    assert_eq!(suites, ["protocol", "stdio", "tools"], "{xml}");
    let cases = testcases(&doc);
    let scenario_cases = cases
        .iter()
        .filter(|c| c.attribute("classname") != Some("protocol"))
        .count();
    assert_eq!(scenario_cases, json["scenarios"].as_array().unwrap().len());
    let case = |name: &str| {
        *cases
            .iter()
            .find(|c| c.attribute("name") == Some(name))
            .unwrap_or_else(|| panic!("no testcase {name}: {xml}"))
    };
    assert!(child_kinds(case("stdio/stdout-only-messages")).contains(&"failure"));
    let failure = case("stdio/stdout-only-messages")
        .children()
        .find(|c| c.has_tag_name("failure"))
        .unwrap();
    assert!(
        failure.text().unwrap_or("").contains("spec: https://"),
        "{xml}"
    );
    // The sweep saw the garbage line too: its findings testcase fails.
    assert!(child_kinds(case("protocol/findings")).contains(&"failure"));
    assert!(!child_kinds(case("tools/list-result")).contains(&"failure"));
    let failures = doc
        .descendants()
        .filter(|n| n.has_tag_name("failure"))
        .count();
    let root = doc.root_element();
    assert_eq!(
        root.attribute("failures"),
        Some(failures.to_string().as_str())
    );

    let md = o.read("summary.md");
    assert!(md.starts_with("## mcpcheck: ❌ FAIL"), "{md}");
    assert!(md.contains("`stdio/stdout-only-messages`"), "{md}");
    assert!(md.contains("| stdio |"), "{md}");

    let html = o.read("report.html");
    assert!(html.starts_with("<!DOCTYPE html>"));
    // minijinja escapes `/` too.
    assert!(html.contains("stdio&#x2f;stdout-only-messages"));
    for external in ["<link", "src=\"http", "@import", "url(http"] {
        assert!(!html.contains(external), "the HTML report loads {external}");
    }
}

#[test]
fn a_passing_run_validates_and_marks_skips_in_junit() {
    let o = run_with_reports(
        &["--include", "jsonrpc/*", "--include", "lifecycle/*"],
        &[&reference()],
    );
    assert_eq!(o.code, 0, "{}", o.text);
    let full: serde_json::Value = serde_json::from_str(&o.read("results.json")).unwrap();
    let json = single_leg(full.clone());
    let errors = validate(&full);
    assert!(errors.is_empty(), "schema errors: {errors:#?}");
    assert_eq!(json["schema"]["status"], "checked");

    let xml = o.read("junit.xml");
    let doc = junit(&xml);
    assert_eq!(
        doc.descendants()
            .filter(|n| n.has_tag_name("failure"))
            .count(),
        0,
        "{xml}"
    );
    let skipped_json = json["scenarios"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|s| s["verdict"] == "skip")
        .count();
    assert!(skipped_json > 0, "expected revision-specific skips");
    let skipped: Vec<_> = doc
        .descendants()
        .filter(|n| n.has_tag_name("skipped"))
        .collect();
    assert_eq!(skipped.len(), skipped_json, "{xml}");
    assert!(
        skipped
            .iter()
            .all(|s| s.attribute("message").is_some_and(|m| !m.is_empty())),
        "each <skipped> carries its reason: {xml}"
    );
    assert!(o.read("summary.md").starts_with("## mcpcheck: ✅ PASS"));
}

#[test]
fn the_schema_rejects_what_it_does_not_describe() {
    // The schema must be able to fail: a report with a misspelt key or a wrong verdict.
    let o = run_with_reports(&["--exclude", "*"], &[&reference()]);
    let mut json: serde_json::Value = serde_json::from_str(&o.read("results.json")).unwrap();
    assert!(validate(&json).is_empty());
    json["verdict"] = "maybe".into();
    assert!(!validate(&json).is_empty());
    json["verdict"] = "pass".into();
    json["legs"][0]["verdict"] = "maybe".into();
    assert!(!validate(&json).is_empty());
    json["legs"][0]["verdict"] = "pass".into();
    json["legs"][0]["unexpected_key"] = 1.into();
    assert!(!validate(&json).is_empty());
}

#[test]
fn a_bad_report_argument_is_a_usage_error() {
    let output = mcpcheck()
        .args(["run", "--report", "pdf=out.pdf", "--", "true"])
        .output()
        .unwrap();
    assert_eq!(output.status.code(), Some(2), "{}", describe(&output));
    assert!(String::from_utf8_lossy(&output.stderr).contains("unknown report kind"));
}

/// The JSON schema also covers what HTTP runs (`http` on transcript entries) and
/// `--snapshot-dir` (the `snapshot` area) add to the report.
#[test]
fn http_and_snapshot_runs_validate_against_the_report_schema() {
    // Over Streamable HTTP, against the misbehaving fixture's HTTP mode.
    let server = misbehaving_http(&[]);
    let o = run_with_reports(&["--include", "http/*", "--url", &server.url], &[]);
    drop(server);
    let full: serde_json::Value = serde_json::from_str(&o.read("results.json")).unwrap();
    let json = single_leg(full.clone());
    let with_http = json["scenarios"]
        .as_array()
        .unwrap()
        .iter()
        .flat_map(|s| s["transcript"].as_array().unwrap())
        .filter(|e| e.get("http").is_some())
        .count();
    assert!(with_http > 0, "no HTTP entries: {}", o.text);
    let errors = validate(&full);
    assert!(errors.is_empty(), "schema errors: {errors:#?}");

    // With --snapshot-dir (first run: the snapshot is written).
    let dir = tempfile_path("snapshots");
    let o = run_with_reports(
        &[
            "--include",
            "lifecycle/ping-result",
            "--snapshot-dir",
            dir.to_str().unwrap(),
        ],
        &[&reference()],
    );
    let full: serde_json::Value = serde_json::from_str(&o.read("results.json")).unwrap();
    let json = single_leg(full.clone());
    assert_eq!(
        json["snapshot"]["areas"][0]["status"], "written",
        "{}",
        o.text
    );
    let errors = validate(&full);
    assert!(errors.is_empty(), "schema errors: {errors:#?}");

    // A changed tool schema: every report carries the snapshot area, JUnit as a failure.
    let o = run_with_reports(
        &[
            "--include",
            "lifecycle/ping-result",
            "--snapshot-dir",
            dir.to_str().unwrap(),
        ],
        &[&reference(), "--variant", "tool-schema"],
    );
    assert_eq!(o.code, 1, "{}", o.text);
    let full: serde_json::Value = serde_json::from_str(&o.read("results.json")).unwrap();
    assert!(validate(&full).is_empty());
    let xml = o.read("junit.xml");
    let doc = junit(&xml);
    let failed: Vec<&str> = testcases(&doc)
        .iter()
        .filter(|c| child_kinds(**c).contains(&"failure"))
        .filter_map(|c| c.attribute("name"))
        .collect();
    assert_eq!(failed, ["snapshot/tools"], "{xml}");
    let md = o.read("summary.md");
    assert!(md.contains("| tools | changed |"), "{md}");
    let html = o.read("report.html");
    assert!(
        html.contains("<h2>Snapshot</h2>") && html.contains("tools.snap.new"),
        "{html}"
    );
    let _ = std::fs::remove_dir_all(&dir);
}

/// Each scenario carries its own server's stderr: in the JSON (valid against the schema),
/// escaped in the HTML scenario detail, and as JUnit `<system-err>`; over HTTP it says it
/// was not captured rather than showing nothing.
#[test]
fn each_scenario_reports_its_server_stderr_escaped() {
    let o = run_with_reports(
        &["--include", "tools/list-result"],
        &[
            &misbehaving(),
            "--hostile-text",
            "--defect",
            "crash-mid-session",
        ],
    );
    assert_eq!(o.code, 1, "{}", o.text);
    let full: serde_json::Value = serde_json::from_str(&o.read("results.json")).unwrap();
    let json = single_leg(full.clone());
    let errors = validate(&full);
    assert!(errors.is_empty(), "schema errors: {errors:#?}");
    let stderr = &json["scenarios"][0]["stderr"];
    assert_eq!(stderr["status"], "captured", "{stderr}");
    let lines: Vec<&str> = stderr["lines"]
        .as_array()
        .unwrap()
        .iter()
        .map(|l| l.as_str().unwrap())
        .collect();
    assert!(lines.contains(&"fatal: boom"), "{lines:?}");
    assert!(lines.iter().any(|l| l.contains("<script>")), "{lines:?}");
    assert!(stderr["bytes"].as_u64().unwrap() > 0);

    let html = o.read("report.html");
    let section = &html[html
        .find("<h3>Server stderr</h3>")
        .expect("a stderr section")..];
    let section = &section[..section.find("</pre>").unwrap()];
    assert!(section.contains("fatal: boom"), "{section}");
    assert!(section.contains("&lt;script&gt;"), "{section}");
    assert!(
        !section.contains("<script>"),
        "stderr is escaped: {section}"
    );

    let xml = o.read("junit.xml");
    let doc = junit(&xml);
    let case = testcases(&doc)
        .into_iter()
        .find(|c| c.attribute("name") == Some("tools/list-result"))
        .unwrap();
    let err = case
        .children()
        .find(|c| c.has_tag_name("system-err"))
        .and_then(|c| c.text())
        .unwrap_or_else(|| panic!("no system-err: {xml}"));
    assert!(err.contains("fatal: boom"), "{err}");

    // Streamable HTTP: the server is not our process.
    let server = reference_http();
    let o = run_with_reports(
        &["--include", "tools/list-result", "--url", &server.url],
        &[],
    );
    drop(server);
    let full: serde_json::Value = serde_json::from_str(&o.read("results.json")).unwrap();
    let json = single_leg(full.clone());
    let stderr = &json["scenarios"][0]["stderr"];
    assert_eq!(stderr["status"], "not_captured", "{stderr}");
    assert!(stderr["reason"].as_str().unwrap().contains("not captured"));
    assert!(
        o.read("report.html")
            .contains("not captured: the server is not a process")
    );
}

//! No false positives (issue 12): servers that do the right thing get no finding for it.
//! Each test names the false positive it keeps away.

use serde_json::Value;

use crate::support::*;

/// Writes a scenario file (test id `test/<name>`) and returns its path.
fn scenario(name: &str, steps: &str) -> std::path::PathBuf {
    let path = tempfile_path(&format!("{name}.yaml"));
    let text =
        format!("id: test/{name}\ntitle: {name}\nspec: basic/utilities/progress\nsteps:\n{steps}");
    std::fs::write(&path, text).unwrap();
    path
}

fn outcome<'r>(report: &'r Value, id: &str) -> &'r Value {
    report["scenarios"]
        .as_array()
        .and_then(|s| s.iter().find(|s| s["id"] == id))
        .unwrap_or(&Value::Null)
}

/// Every finding of the run, scenario and protocol ones, as `rule: message`.
fn all_findings(report: &Value) -> Vec<String> {
    let mut out = Vec::new();
    let mut take = |list: &Value| {
        for f in list.as_array().into_iter().flatten() {
            out.push(format!("{}: {}", f["rule"], f["message"]));
        }
    };
    take(&report["findings"]);
    for s in report["scenarios"].as_array().into_iter().flatten() {
        take(&s["findings"]);
        take(&s["protocol"]);
    }
    out
}

/// The scenario `id` passed, the run raised no finding anywhere, and it exited 0.
fn assert_clean(code: i32, report: &Value, text: &str, id: &str) {
    let s = outcome(report, id);
    assert_eq!(s["verdict"], "pass", "{s:#}\n{text}");
    let findings = all_findings(report);
    assert!(findings.is_empty(), "{findings:#?}");
    assert_eq!(code, 0, "{text}");
}

/// The false positive: a loop calling a tool that reports progress sent the same
/// `progressToken` on every call, and the reference's progress for the second call,
/// starting again at 1, was reported as `progress.increasing` ("went from 3 to 1").
#[test]
fn a_loop_of_tool_calls_reporting_progress_is_no_progress_failure() {
    let path = scenario(
        "progress-loop",
        "  - initialize:\n  - paginate: { method: tools/list, into: tools }\n  - for_each:\n      in: tools\n      as: tool\n      steps:\n        - request:\n            method: tools/call\n            params: { name: slow, arguments: { steps: 3, delay_ms: 20 } }\n          expect: { result: {} }\n  - expect: { notification: { method: notifications/progress, within: 500ms } }\n",
    );
    let (code, report, text) = run_json(
        &[path.to_str().unwrap(), "--call-tools", "all"],
        &[&reference()],
    );
    let _ = std::fs::remove_file(&path);
    assert_clean(code, &report, &text, "test/progress-loop");
}

/// `mcpcheck fuzz` against the Python SDK server reported "a response with id ..., which
/// matches no request mcpcheck sent": its raw request held `1e309`, which serde_json
/// refuses, so the id was never registered. Python's parser takes the number and answers.
#[test]
fn a_raw_request_beyond_serde_json_is_correlated() {
    let Some(server) = python_sdk_stdio() else {
        return; // `require` has failed the test under CI
    };
    let path = scenario(
        "raw-big-number",
        "  - initialize:\n  - send_raw: \"{\\\"jsonrpc\\\":\\\"2.0\\\",\\\"id\\\":\\\"big\\\",\\\"method\\\":\\\"ping\\\",\\\"params\\\":{\\\"x\\\":1e309}}\\n\"\n  - expect: { response: { id: big, within: 5s, result: {} } }\n",
    );
    let server: Vec<&str> = server.iter().map(String::as_str).collect();
    let (code, report, text) = run_json(&[path.to_str().unwrap(), "--timeout", "10s"], &server);
    let _ = std::fs::remove_file(&path);
    assert_clean(code, &report, &text, "test/raw-big-number");
}

/// `resources/read-each` and its kin demanded that every listed resource read without
/// error; the spec allows an error answer (server/resources#error-handling). With
/// `on_error: next` an error is not judged, and a run where every read got one is a skip.
#[test]
fn an_allowed_error_answer_is_not_judged_and_all_errors_are_a_skip() {
    let steps = |prefix: &str| {
        format!(
            "  - initialize:\n  - paginate: {{ method: resources/list, into: resources }}\n  - for_each:\n      in: resources\n      as: resource\n      steps:\n        - request: {{ method: resources/read, params: {{ uri: \"{prefix}${{resource.uri}}\" }} }}\n          on_error: next\n          expect: {{ result: {{ /contents: {{ type: array }} }} }}\n"
        )
    };
    let missing = scenario("read-missing", &steps("mcpcheck-no-such:"));
    let listed = scenario("read-listed", &steps(""));
    let (code, report, text) = run_json(
        &[missing.to_str().unwrap(), listed.to_str().unwrap()],
        &[&reference()],
    );
    let _ = std::fs::remove_file(&missing);
    let _ = std::fs::remove_file(&listed);
    let s = outcome(&report, "test/read-missing");
    assert_eq!(s["verdict"], "skip", "{s:#}\n{text}");
    assert!(
        s["reason"]
            .as_str()
            .unwrap_or_default()
            .contains("nothing to judge"),
        "{s:#}"
    );
    assert_eq!(
        outcome(&report, "test/read-listed")["verdict"],
        "pass",
        "{text}"
    );
    assert_eq!(code, 0, "{text}");
}

/// An HTTP server that labels its JSON-RPC answers `text/plain` made mcpcheck exit 2 ("not
/// an MCP endpoint"): it is the server's conformance failure, so the finding (quoting the
/// header) and exit 1, with the run going on because the bodies parse.
#[test]
fn json_labelled_text_plain_is_a_finding_and_the_run_goes_on() {
    let server = misbehaving_http(&["--defect", "http-json-as-text-plain"]);
    let (code, report, text) =
        run_url_json(&server.url, &["--include", "http/*", "--timeout", "3s"]);
    assert_eq!(code, 1, "{text}");
    let wrong: Vec<_> = all_findings(&report)
        .into_iter()
        .filter(|f| f.contains("http.response-content-type"))
        .collect();
    assert!(
        wrong
            .iter()
            .any(|f| f.contains("`Content-Type: text/plain`")),
        "{wrong:#?}\n{text}"
    );
    let v = verdicts(&report);
    assert_eq!(v["http/request-content-type"], "fail", "{v:#?}");
    // The run went on: the scenarios that do not look at content types pass.
    assert_eq!(v["http/error-response-id"], "pass", "{v:#?}");
}

/// Checks the tool policy skipped are counted, typed, and the summary says which flag
/// enables them; with `--call-tools all` only the destructive tool is left to mention.
#[test]
fn the_summary_says_how_many_tool_calls_the_policy_skipped_and_how_to_run_them() {
    let md = tempfile_path("policy.md");
    let md_arg = format!("markdown={}", md.display());
    let args = ["run", "--include", "tools/*", "--report", &md_arg, "--"];
    let out = mcpcheck()
        .args(args)
        .arg(reference())
        .output()
        .expect("running mcpcheck");
    let text = describe(&out);
    let markdown = std::fs::read_to_string(&md).unwrap_or_default();
    let _ = std::fs::remove_file(&md);
    let note = text
        .lines()
        .find(|l| l.starts_with("note: ") && l.contains("tool call"))
        .unwrap_or_else(|| panic!("no policy note:\n{text}"));
    assert!(
        note.contains("--call-tools readonly")
            && note.ends_with("run with --call-tools all on a test instance"),
        "{note}"
    );
    // The Markdown summary says it right under its heading.
    let third = markdown.lines().nth(2).unwrap_or_default();
    assert!(
        third.starts_with("> **Not checked:**") && third.contains("--call-tools all"),
        "{markdown}"
    );
    let (_, report, text) = run_json(&["--include", "tools/*"], &[&reference()]);
    let typed: Vec<&Value> = report["scenarios"]
        .as_array()
        .into_iter()
        .flatten()
        .flat_map(|s| s["policy_skips"].as_array().into_iter().flatten())
        .collect();
    assert!(!typed.is_empty(), "{text}");
    assert!(typed.iter().all(|w| *w == "not_read_only"), "{typed:?}");

    let out = mcpcheck()
        .args(["run", "--include", "tools/*", "--call-tools", "all", "--"])
        .arg(reference())
        .output()
        .expect("running mcpcheck");
    let text = describe(&out);
    // Only the reference's destructive tool is left out, and the note says so.
    let notes: Vec<_> = text.lines().filter(|l| l.starts_with("note: ")).collect();
    assert!(
        notes
            .iter()
            .all(|l| l.contains("destructiveHint") && l.contains("--tool-args")),
        "{text}"
    );
}

/// The template scenarios warned (and `official/resources-templates-read` failed) on the
/// Python SDK's low-level server, which answers `resources/templates/list` with -32601: the
/// `resources` capability does not promise templates and no text requires the method. The
/// error is now allowed (a skip, so `--fail-on warning` exits 0), while a server that serves
/// templates still has its results judged (the reference passes them).
#[test]
fn a_server_without_resource_templates_is_not_judged_for_them() {
    const TEMPLATES: [&str; 3] = [
        "resources/templates-list-result",
        "resources/templates-pagination-terminates",
        "official/resources-templates-read",
    ];
    let include: Vec<&str> = TEMPLATES.iter().flat_map(|id| ["--include", *id]).collect();
    let args = [&include[..], &["--fail-on", "warning", "--timeout", "10s"]].concat();

    let (code, report, text) = run_json(&args, &[&reference()]);
    assert_eq!(code, 0, "{text}");
    for id in [
        "resources/templates-list-result",
        "resources/templates-pagination-terminates",
    ] {
        assert_eq!(outcome(&report, id)["verdict"], "pass", "{id}: {text}");
    }

    let Some(server) = python_sdk_stdio() else {
        return; // `require` has failed the test under CI
    };
    let server: Vec<&str> = server.iter().map(String::as_str).collect();
    let (code, report, text) = run_json(&args, &server);
    for id in TEMPLATES {
        let s = outcome(&report, id);
        assert_eq!(s["verdict"], "skip", "{id}: {s:#}\n{text}");
        assert!(
            s["reason"].as_str().unwrap_or_default().contains("-32601")
                || s["reason"]
                    .as_str()
                    .unwrap_or_default()
                    .contains("nothing to judge"),
            "{id}: {s:#}"
        );
    }
    assert!(
        all_findings(&report).is_empty(),
        "{:#?}",
        all_findings(&report)
    );
    assert_eq!(code, 0, "{text}");
}

/// mcp 2.x (`MCPServer`, thirdparty/fastmcp_files.py) on a loaded machine answered a
/// request sent before `initialize` only after stdin had closed (it was still starting).
/// That was reported as the failure `stdio.stdout-flushed` ("does not flush stdout"),
/// though the server had written nothing else that a buffer could have held.
#[test]
fn a_request_held_before_initialize_is_not_called_an_unflushed_stdout() {
    let Some(python) = python_venv() else {
        return; // `require` has failed the test under CI
    };
    let root = tempfile_path("files");
    std::fs::create_dir_all(&root).unwrap();
    std::fs::write(root.join("hello.txt"), "hello\n").unwrap();
    let script = workspace().join("thirdparty/fastmcp_files.py");
    let (python, script, root_s) = (
        python.display().to_string(),
        script.display().to_string(),
        root.display().to_string(),
    );
    let server = [&python[..], &script, "--impl", "mcp", "--root", &root_s];
    let (code, report, text) = run_json(
        &[
            "--include",
            "lifecycle/request-before-initialize",
            "--shutdown-wait",
            "15s",
        ],
        &server,
    );
    let _ = std::fs::remove_dir_all(&root);
    let findings = all_findings(&report);
    assert!(
        !findings.iter().any(|f| f.contains("stdio.stdout-flushed")),
        "{findings:#?}\n{text}"
    );
    let s = outcome(&report, "lifecycle/request-before-initialize");
    assert!(
        s["verdict"] == "warn" || s["verdict"] == "pass",
        "{s:#}\n{text}"
    );
    assert_eq!(code, 0, "{text}");
}

/// `lifecycle/request-before-initialize` writes its request as the server starts and gave it
/// 5 s: on a busy machine a Python or Node server was still loading, answered at about 7 s,
/// and got a warning (and, with the answer landing after stdin closed, a flush failure). A
/// wait before the server's first message now includes the start-up, like the handshake's.
#[test]
fn a_slow_starting_server_is_not_judged_silent_before_initialize() {
    let reference = reference();
    let script = format!("sleep 6; exec '{reference}'");
    let (code, report, text) = run_json(
        &["--include", "lifecycle/request-before-initialize"],
        &["sh", "-c", &script],
    );
    let s = outcome(&report, "lifecycle/request-before-initialize");
    assert_eq!(s["verdict"], "pass", "{s:#}\n{text}");
    assert!(
        all_findings(&report).is_empty(),
        "{:#?}",
        all_findings(&report)
    );
    assert_eq!(code, 0, "{text}");
}

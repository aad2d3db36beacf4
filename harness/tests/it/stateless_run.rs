//! `mcpcheck run --protocol-version 2026-07-28`: the stateless revision over stdio, against
//! the Python `mcp` 2.x SDK server (which answers `server/discover`) and against a server
//! that only knows the handshake revisions.

use crate::support::*;

/// Keeps hangs short; scenarios carry their own windows. Not [`FAST`]: the Python SDK
/// server takes seconds to start and to answer.
const PYTHON_WAITS: [&str; 4] = ["--timeout", "5s", "--startup-timeout", "20s"];

fn sent(report: &serde_json::Value) -> Vec<serde_json::Value> {
    report["transcript"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|e| e["direction"] == "sent")
        .filter_map(|e| serde_json::from_str(e["text"].as_str()?).ok())
        .collect()
}

/// Where mcp 2.3's low-level server (thirdparty/mcp_sdk_server.py) breaks a rule that now
/// also runs at 2026-07-28, each `--exclude`d from the full-suite runs and caught on its own
/// by [`python_sdk_deviations_are_caught`]: it does not answer a line that is not JSON,
/// nor `"jsonrpc":"1.0"` (at 2025-11-25 too); `prompts/get` without its required argument
/// succeeds. All three are SHOULDs (warnings): the leg passes, `--fail-on warning` fails it. (It has no `resources/templates/list` and answers it -32601, which no text
/// forbids: the template scenarios skip, see verdicts.rs.)
const SDK_DEVIATIONS: [(&str, &str); 3] = [
    ("jsonrpc/parse-error", "warn"),
    ("jsonrpc/invalid-request", "warn"),
    ("prompts/missing-argument-error", "warn"),
];

/// `--exclude` for each of [`SDK_DEVIATIONS`].
fn without_sdk_deviations() -> Vec<&'static str> {
    SDK_DEVIATIONS
        .iter()
        .flat_map(|(id, _)| ["--exclude", *id])
        .collect()
}

#[test]
fn python_sdk_deviations_are_caught() {
    let Some(server) = python_sdk_stdio() else {
        return;
    };
    let server: Vec<&str> = server.iter().map(String::as_str).collect();
    let mut args = vec!["--protocol-version", "2026-07-28", "--fail-on", "warning"];
    for (id, _) in SDK_DEVIATIONS {
        args.extend(["--include", id]);
    }
    args.extend(PYTHON_WAITS);
    let (code, report, text) = run_json(&args, &server);
    assert_eq!(code, 1, "{text}");
    for (id, verdict) in SDK_DEVIATIONS {
        assert!(
            scenarios_with(&report, verdict).iter().any(|s| s == id),
            "{id} is not {verdict}: {text}"
        );
    }
}

#[test]
fn python_sdk_server_passes_the_stateless_suite_over_stdio() {
    let Some(server) = python_sdk_stdio() else {
        return;
    };
    let server: Vec<&str> = server.iter().map(String::as_str).collect();
    let mut args = vec!["--protocol-version", "2026-07-28"];
    args.extend(PYTHON_WAITS);
    args.extend(without_sdk_deviations());
    let (code, report, text) = run_json(&args, &server);
    assert_eq!(code, 0, "{text}");
    assert_eq!(report["revision"], "2026-07-28", "{text}");

    // The probe opens with server/discover, not initialize, and learns the server from it.
    assert_eq!(report["steps"][0]["name"], "server/discover", "{text}");
    assert_eq!(report["steps"][0]["status"], "passed", "{text}");
    assert_eq!(report["profile"]["protocol_version"], "2026-07-28");
    assert_eq!(report["profile"]["server_info"]["name"], "mcp-sdk-lowlevel");
    // The JSON report of a stateless run is described by reports/results.schema.json too
    // (a leg of it: run_json returns the one leg).
    let schema = leg_schema();
    let validator = jsonschema::validator_for(&schema).unwrap();
    let errors: Vec<String> = validator
        .iter_errors(&report)
        .map(|e| e.to_string())
        .collect();
    assert!(errors.is_empty(), "report schema errors: {errors:#?}");
    let steps = report["steps"].as_array().unwrap();
    let listed = |name: &str| {
        steps
            .iter()
            .any(|s| s["name"] == name && s["status"] == "passed")
    };
    assert!(listed("tools/list") && listed("prompts/list"), "{text}");

    // No false findings: no failure, no warning, and every stateless scenario passes.
    assert!(failures(&report).is_empty(), "{:?}", failures(&report));
    assert!(findings_at(&report, "warning").is_empty(), "{text}");
    assert!(scenarios_with(&report, "fail").is_empty(), "{text}");
    assert!(scenarios_with(&report, "warn").is_empty(), "{text}");
    assert!(scenarios_with(&report, "error").is_empty(), "{text}");
    let passed = scenarios_with(&report, "pass");
    for id in [
        "stateless/discover-result",
        "stateless/discover-server-info",
        "stateless/unsupported-version-error",
        "stateless/missing-meta-invalid-params",
        "stateless/no-handshake-needed",
    ] {
        assert!(passed.iter().any(|p| p == id), "{id} did not pass: {text}");
    }
    // Handshake scenarios are skipped, not run against a stateless server.
    assert!(
        scenarios_with(&report, "skip")
            .iter()
            .any(|s| s == "lifecycle/initialize-result")
    );

    // The probe never sent initialize; every request carried the per-request _meta.
    let sent = sent(&report);
    assert!(!sent.is_empty());
    for m in &sent {
        assert_ne!(m["method"], "initialize", "{m}");
        assert_ne!(m["method"], "notifications/initialized", "{m}");
        if m.get("id").is_some() {
            let meta = &m["params"]["_meta"];
            assert_eq!(
                meta["io.modelcontextprotocol/protocolVersion"], "2026-07-28",
                "{m}"
            );
            assert!(
                meta["io.modelcontextprotocol/clientCapabilities"].is_object(),
                "{m}"
            );
            assert_eq!(
                meta["io.modelcontextprotocol/clientInfo"]["name"],
                "mcpcheck"
            );
        }
    }
    assert_eq!(sent[0]["method"], "server/discover");
}

/// The same server over Streamable HTTP (`--http PORT`, 127.0.0.1).
/// `subscriptions/listen` over stdio: the SDK's own ListenHandler (`--listen`) acknowledges
/// with the listen request's id, honours an empty filter, and the listen scenarios pass; the
/// scenarios skip against the same server without it (it then declares no
/// `resources.subscribe`).
#[test]
fn python_sdk_listen_handler_passes_the_listen_scenarios() {
    let Some(mut server) = python_sdk_stdio() else {
        return;
    };
    let args = [
        &["--protocol-version", "2026-07-28", "--jobs", "1"][..],
        &["--include", "stateless/listen-*"],
        &PYTHON_WAITS,
    ]
    .concat();
    let plain: Vec<&str> = server.iter().map(String::as_str).collect();
    let (code, report, text) = run_json(&args, &plain);
    assert_eq!(code, 0, "{text}");
    assert_eq!(scenarios_with(&report, "skip").len(), 4, "{text}");

    server.push("--listen".into());
    let server: Vec<&str> = server.iter().map(String::as_str).collect();
    let (code, report, text) = run_json(&args, &server);
    assert_eq!(code, 0, "{text}");
    let mut passed = scenarios_with(&report, "pass");
    passed.sort();
    assert_eq!(
        passed,
        [
            "stateless/listen-ack-first",
            "stateless/listen-acknowledged",
            "stateless/listen-only-requested",
            "stateless/listen-subscription-id"
        ],
        "{text}"
    );
    let acks: Vec<serde_json::Value> = report["scenarios"]
        .as_array()
        .unwrap()
        .iter()
        // listen-ack-first and listen-subscription-id open a listen per resource; the
        // other two one each.
        .filter(|s| {
            s["id"] != "stateless/listen-ack-first" && s["id"] != "stateless/listen-subscription-id"
        })
        .flat_map(|s| s["transcript"].as_array().unwrap().iter())
        .filter(|e| e["direction"] == "received")
        .filter_map(|e| serde_json::from_str::<serde_json::Value>(e["text"].as_str()?).ok())
        .filter(|m| m["method"] == "notifications/subscriptions/acknowledged")
        .collect();
    assert_eq!(acks.len(), 2, "{text}");
    assert!(
        acks.iter()
            .any(|m| m["params"]["_meta"]["io.modelcontextprotocol/subscriptionId"] == "listen-1"),
        "{acks:?}"
    );
}

#[test]
fn python_sdk_server_passes_the_stateless_suite_over_streamable_http() {
    let Some(server) = python_sdk_http("--http", &[]) else {
        return;
    };
    let args = [
        &["--protocol-version", "2026-07-28"][..],
        &PYTHON_WAITS,
        &without_sdk_deviations(),
    ]
    .concat();
    let (code, report, text) = run_url_json(&server.url, &args);
    assert_eq!(code, 0, "{text}");
    assert_eq!(report["steps"][0]["name"], "server/discover", "{text}");
    assert_eq!(report["steps"][0]["status"], "passed", "{text}");
    assert!(failures(&report).is_empty(), "{:?}", failures(&report));
    assert!(findings_at(&report, "warning").is_empty(), "{text}");
    assert!(scenarios_with(&report, "fail").is_empty(), "{text}");
    assert!(scenarios_with(&report, "warn").is_empty(), "{text}");
    let passed = scenarios_with(&report, "pass");
    for id in [
        "stateless/discover-result",
        "stateless/unsupported-version-error",
        "stateless/http-missing-meta-400",
        "stateless/http-header-mismatch-400",
        "stateless/http-unsupported-version-400",
        "stateless/http-unknown-method-404",
    ] {
        assert!(passed.iter().any(|p| p == id), "{id} did not pass: {text}");
    }
    // Every POST of the probe mirrors the body into the 2026-07-28 request headers, and
    // no session is opened or ended (no initialize, no DELETE).
    let exchanges = sweep_http(&report, "exchange");
    assert!(!exchanges.is_empty());
    for h in &exchanges {
        assert_eq!(h["method"], "POST", "{h}");
        let headers = h["request_headers"].as_array().unwrap();
        let header = |name: &str| {
            headers
                .iter()
                .find(|kv| kv[0] == name)
                .and_then(|kv| kv[1].as_str())
                .map(str::to_owned)
        };
        assert_eq!(
            header("mcp-protocol-version").as_deref(),
            Some("2026-07-28")
        );
        assert!(header("mcp-method").is_some(), "{h}");
        assert!(header("mcp-session-id").is_none(), "{h}");
    }
}

/// `subscriptions/listen` over Streamable HTTP against the SDK's ListenHandler, which
/// keeps the listen stream open (2026-07-28 basic/transports/streamable-http#receiving-messages:
/// "The server's response is itself an SSE stream that stays open"): the acknowledgment is
/// delivered from the open stream, the listen scenarios pass, and the scenarios' cancellation
/// closes the stream instead of POSTing `notifications/cancelled`
/// (basic/patterns/cancellation#transport-specific-cancellation), with no resumption.
#[test]
fn python_sdk_listen_handler_passes_the_listen_scenarios_over_streamable_http() {
    let Some(server) = python_sdk_http("--http", &["--listen"]) else {
        return;
    };
    let args = [
        &["--protocol-version", "2026-07-28"][..],
        &["--include", "stateless/listen-*"],
        &PYTHON_WAITS,
    ]
    .concat();
    let (code, report, text) = run_url_json(&server.url, &args);
    assert_eq!(code, 0, "{text}");
    let mut passed = scenarios_with(&report, "pass");
    passed.sort();
    assert_eq!(
        passed,
        [
            "stateless/listen-ack-first",
            "stateless/listen-acknowledged",
            "stateless/listen-only-requested",
            "stateless/listen-subscription-id"
        ],
        "{text}"
    );
    for scenario in report["scenarios"].as_array().unwrap() {
        let http: Vec<&serde_json::Value> = scenario["transcript"]
            .as_array()
            .unwrap()
            .iter()
            .filter_map(|e| e.get("http"))
            .collect();
        // server/discover and the listens (listen-ack-first: resources/list too, then a
        // listen per resource): no cancellation is a POST.
        let posts = http.iter().filter(|h| h["kind"] == "exchange").count();
        let per_resource = [
            "stateless/listen-ack-first",
            "stateless/listen-subscription-id",
        ];
        let listens = if per_resource.contains(&scenario["id"].as_str().unwrap_or_default()) {
            posts - 2
        } else {
            assert_eq!(posts, 2, "{} {http:?}", scenario["id"]);
            1
        };
        assert!(!http.iter().any(|h| h["kind"] == "resume"), "{http:?}");
        let ends: Vec<&str> = http
            .iter()
            .filter(|h| h["kind"] == "stream_end")
            .filter_map(|h| h["reason"].as_str())
            .collect();
        assert_eq!(ends.len(), listens, "{} {http:?}", scenario["id"]);
        assert!(
            ends.iter()
                .all(|e| e.starts_with("mcpcheck closed the stream to cancel the subscription")),
            "{ends:?}"
        );
    }
}

#[test]
fn a_handshake_only_server_fails_discover() {
    // The rmcp reference fixture speaks the handshake revisions only: server/discover is
    // refused before `initialize`, which 2026-07-28 makes a failure ("Servers MUST
    // implement server/discover").
    let fixture = reference();
    let mut args = vec!["--protocol-version", "2026-07-28", "--exclude", "*"];
    args.extend(PYTHON_WAITS);
    let (code, report, text) = run_json(&args, &[&fixture]);
    assert_eq!(code, 1, "{text}");
    assert!(
        failures(&report).iter().any(|r| r == "stateless.discover"),
        "{text}"
    );
    assert_eq!(report["steps"][0]["name"], "server/discover");
    assert_eq!(report["steps"][0]["status"], "failed");
    // The verdict says what it means and what to do.
    assert!(
        text.contains("a server that knows only the handshake revisions")
            && text.contains("--protocol-version auto"),
        "{text}"
    );
}

/// The other way round: a stateless-only server checked at a handshake revision fails
/// `initialize`, and the finding names the likely reason.
#[test]
fn a_stateless_only_server_fails_the_handshake_with_a_hint() {
    let Some(server) = scripted_server(r#"["2026-07-28"]"#, &tools_list("complete")) else {
        return;
    };
    let server: Vec<&str> = server.iter().map(String::as_str).collect();
    let args = [
        &["--protocol-version", "2025-11-25", "--exclude", "*"][..],
        &PYTHON_WAITS,
    ]
    .concat();
    let (code, report, text) = run_json(&args, &server);
    assert_eq!(code, 1, "{text}");
    assert_eq!(report["steps"][0]["status"], "failed", "{text}");
    assert!(
        text.contains("`initialize` failed with error -32601")
            && text.contains("only the stateless revision (2026-07-28)"),
        "{text}"
    );
}

#[test]
fn the_legacy_sse_transport_is_refused_for_2026_07_28() {
    // Resolved before any connection: nothing listens on this port.
    let out = mcpcheck()
        .args([
            "run",
            "--protocol-version",
            "2026-07-28",
            "--transport",
            "sse",
            "--url",
            "http://127.0.0.1:9/mcp",
        ])
        .output()
        .unwrap();
    let text = describe(&out);
    assert_eq!(out.status.code(), Some(2), "{text}");
    assert!(text.contains("HTTP+SSE"), "{text}");
}

/// A scripted stateless stdio server (system `python3`): a valid DiscoverResult listing
/// `versions`, and `tools_list` (a Python literal) as the `tools/list` result.
fn scripted_server(versions: &str, tools_list: &str) -> Option<Vec<String>> {
    let python3 = python3()?;
    let script = format!(
        r#"
import sys, json
for line in sys.stdin:
    m = json.loads(line)
    if "id" not in m:
        continue
    method = m.get("method")
    if method == "server/discover":
        r = {{"resultType": "complete", "supportedVersions": {versions}, "capabilities": {{"tools": {{}}}}, "ttlMs": 0, "cacheScope": "private"}}
    elif method == "tools/list":
        r = {tools_list}
    else:
        print(json.dumps({{"jsonrpc": "2.0", "id": m["id"], "error": {{"code": -32601, "message": "Method not found"}}}}), flush=True)
        continue
    print(json.dumps({{"jsonrpc": "2.0", "id": m["id"], "result": r}}), flush=True)
"#
    );
    Some(vec![python3.into(), "-c".into(), script])
}

/// The first request of a stateless session, server/discover, includes the server's
/// start-up, so it gets `--startup-timeout` like `initialize` does, not `--timeout`.
#[test]
fn a_slow_starting_stateless_server_gets_the_startup_allowance() {
    let Some(mut server) = scripted_server(r#"["2026-07-28"]"#, &tools_list("complete")) else {
        return;
    };
    let script = server.pop().unwrap();
    server.push(format!("import time\ntime.sleep(2)\n{script}"));
    let server: Vec<&str> = server.iter().map(String::as_str).collect();
    let args = [
        "--protocol-version",
        "2026-07-28",
        "--exclude",
        "*",
        "--timeout",
        "1s",
        "--startup-timeout",
        "20s",
    ];
    let (code, report, text) = run_json(&args, &server);
    assert_eq!(code, 0, "{text}");
    assert_eq!(report["steps"][0]["status"], "passed", "{text}");
}

fn tools_list(result_type: &str) -> String {
    format!(
        r#"{{"resultType": "{result_type}", "tools": [], "ttlMs": 0, "cacheScope": "private"}}"#
    )
}

fn probe_only(server: &[String]) -> (i32, serde_json::Value, String) {
    let server: Vec<&str> = server.iter().map(String::as_str).collect();
    let mut args = vec!["--protocol-version", "2026-07-28", "--exclude", "*"];
    args.extend(PYTHON_WAITS);
    run_json(&args, &server)
}

#[test]
fn result_types_are_checked() {
    // The control: a conformant script passes, so the findings below come from the defect.
    let Some(server) = scripted_server(r#"["2026-07-28"]"#, &tools_list("complete")) else {
        return;
    };
    let (code, report, text) = probe_only(&server);
    assert_eq!(code, 0, "{text}");
    assert!(failures(&report).is_empty(), "{text}");

    // An unknown resultType "MUST be considered invalid" (2026-07-28 basic#resulttype).
    let server = scripted_server(r#"["2026-07-28"]"#, &tools_list("weird")).unwrap();
    let (code, report, text) = probe_only(&server);
    assert_eq!(code, 1, "{text}");
    assert_eq!(failures(&report), vec!["stateless.result-type"], "{text}");

    // A missing one is a schema violation (every 2026-07-28 result requires it).
    let server = scripted_server(
        r#"["2026-07-28"]"#,
        r#"{"tools": [], "ttlMs": 0, "cacheScope": "private"}"#,
    )
    .unwrap();
    let (code, report, text) = probe_only(&server);
    assert_eq!(code, 1, "{text}");
    assert!(!failures(&report).is_empty(), "{text}");
    assert!(text.contains("resultType"), "{text}");

    // `input_required` is judged as an InputRequiredResult, not as a ListToolsResult
    // (which would want `tools`): no schema failure. But `tools/list` may not answer one,
    // and it carries neither `inputRequests` nor `requestState` (basic/patterns/mrtr).
    let server =
        scripted_server(r#"["2026-07-28"]"#, r#"{"resultType": "input_required"}"#).unwrap();
    let (code, report, text) = probe_only(&server);
    assert_eq!(code, 1, "{text}");
    let rules = failures(&report);
    assert!(!rules.is_empty(), "{text}");
    assert!(
        rules.iter().all(|r| r == "stateless.input-required"),
        "{rules:?} {text}"
    );
}

#[test]
fn discover_must_list_the_version_it_serves() {
    let Some(server) = scripted_server(r#"["2099-01-01"]"#, &tools_list("complete")) else {
        return;
    };
    let (code, report, text) = probe_only(&server);
    assert_eq!(code, 1, "{text}");
    assert!(
        failures(&report)
            .iter()
            .any(|r| r == "lifecycle.version-negotiation"),
        "{text}"
    );
    assert_eq!(report["profile"]["supported_versions"][0], "2099-01-01");
}

/// The `--protocol-version auto` line mcpcheck prints on stderr.
fn auto_line(text: &str) -> &str {
    text.lines()
        .find(|l| l.starts_with("--protocol-version auto:"))
        .unwrap_or("")
}

#[test]
fn auto_runs_the_dual_era_fixture_at_the_stateless_revision() {
    let args = [
        &["--protocol-version", "auto", "--include", "stateless/*"][..],
        &PYTHON_WAITS,
    ]
    .concat();
    let (code, report, text) = run_json(&args, &[&misbehaving()]);
    assert_eq!(code, 0, "{text}");
    let line = auto_line(&text);
    // A dual-era fixture: discovery lists the handshake revisions too.
    assert!(
        line.contains(
            "server/discover: supports 2024-11-05, 2025-03-26, 2025-06-18, 2025-11-25, 2026-07-28;"
        ),
        "{text}"
    );
    assert!(
        line.contains("initialize offering 2025-11-25: negotiated 2025-11-25"),
        "{text}"
    );
    assert!(line.ends_with("running at 2026-07-28"), "{text}");
    assert_eq!(report["revision"], "2026-07-28", "{text}");
    assert_eq!(report["steps"][0]["name"], "server/discover", "{text}");
    assert!(scenarios_with(&report, "pass").len() >= 7, "{text}");
}

#[test]
fn auto_runs_a_handshake_only_server_at_its_negotiated_revision() {
    let args = [
        &["--protocol-version", "auto", "--include", "lifecycle/*"][..],
        &PYTHON_WAITS,
    ]
    .concat();
    let (code, report, text) = run_json(&args, &[&reference()]);
    assert_eq!(code, 0, "{text}");
    let line = auto_line(&text);
    assert!(line.contains("(a handshake-only server)"), "{text}");
    assert!(line.ends_with("running at 2025-11-25"), "{text}");
    assert_eq!(report["revision"], "2025-11-25", "{text}");
    assert_eq!(report["steps"][0]["name"], "initialize", "{text}");
}

/// A server whose `server/discover` hides 2026-07-28 (here: no `supportedVersions`) while
/// it serves 2026-07-28 requests is not taken for a handshake-only server (issue 27.5):
/// the probe finds a 2026-07-28 `tools/list` answered with a 2026-07-28 result, says so,
/// and the default run keeps the 2026-07-28 leg, whose sweep and scenarios judge the
/// discovery. Before, the run checked 2025-11-25 alone and passed.
#[test]
fn a_discovery_that_hides_the_stateless_revision_does_not_hide_its_leg() {
    let args = [
        &[
            "--protocol-version",
            "eras",
            "--include",
            "stateless/discover-*",
        ][..],
        &PYTHON_WAITS,
    ]
    .concat();
    let server = [
        misbehaving(),
        "--defect".into(),
        "stateless-discover-no-versions".into(),
    ];
    let server: Vec<&str> = server.iter().map(String::as_str).collect();
    let (code, report, text) = run_json(&args, &server);
    assert_eq!(code, 1, "{text}");
    assert!(
        text.contains("yet the server answered a 2026-07-28 `tools/list`"),
        "{text}"
    );
    let legs = report["legs"].as_array().expect("two legs");
    let stateless = legs
        .iter()
        .find(|l| l["revision"] == "2026-07-28")
        .unwrap_or_else(|| panic!("no 2026-07-28 leg\n{text}"));
    assert_eq!(
        verdicts(stateless)
            .get("stateless/discover-result")
            .map(String::as_str),
        Some("fail"),
        "{text}"
    );
}

/// A legacy stdio server that never answers what it does not know (no error at all): the
/// discover probe ends at its bounded wait (the start-up timeout, at most 15 s) and the run
/// falls back to the handshake,
/// where the server negotiates 2025-06-18.
#[test]
fn auto_treats_a_silent_discover_as_a_legacy_server() {
    let python3 = crate::support::require(&crate::support::PYTHON3, || {
        std::process::Command::new("python3")
            .arg("--version")
            .output()
            .is_ok_and(|o| o.status.success())
            .then_some(())
    });
    if python3.is_none() {
        return;
    }
    let script = r#"
import sys, json
for line in sys.stdin:
    m = json.loads(line)
    if m.get("method") == "initialize":
        r = {"protocolVersion": "2025-06-18", "capabilities": {}, "serverInfo": {"name": "silent", "version": "1"}}
        print(json.dumps({"jsonrpc": "2.0", "id": m["id"], "result": r}), flush=True)
"#;
    let args = [
        &["--protocol-version", "auto", "--exclude", "*"][..],
        &["--timeout", "2s", "--startup-timeout", "3s"],
    ]
    .concat();
    let started = std::time::Instant::now();
    let (_, report, text) = run_json(&args, &["python3", "-c", script]);
    let line = auto_line(&text);
    assert!(
        line.contains("server/discover: `server/discover` got no response within 3s"),
        "{text}"
    );
    assert!(line.ends_with("running at 2025-06-18"), "{text}");
    assert_eq!(report["revision"], "2025-06-18", "{text}");
    assert!(started.elapsed() < std::time::Duration::from_secs(30));
}

/// The Python mcp 2.x server: discovery lists 2026-07-28, so the run speaks it.
#[test]
fn auto_finds_the_stateless_revision_of_the_python_sdk_server() {
    let Some(server) = python_sdk_stdio() else {
        return;
    };
    let server: Vec<&str> = server.iter().map(String::as_str).collect();
    let args = [
        &["--protocol-version", "auto", "--exclude", "*"][..],
        &PYTHON_WAITS,
    ]
    .concat();
    let (code, report, text) = run_json(&args, &server);
    assert_eq!(code, 0, "{text}");
    let line = auto_line(&text);
    assert!(
        line.contains("server/discover: supports 2026-07-28"),
        "{text}"
    );
    assert!(line.ends_with("running at 2026-07-28"), "{text}");
    assert_eq!(report["revision"], "2026-07-28", "{text}");
    eprintln!("{line}");
}

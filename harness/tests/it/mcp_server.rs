//! `mcpcheck mcp`, mcpcheck as an MCP server: it passes its own suite (every tool called,
//! with synthesized and with invalid arguments), and a client session over stdio gets the
//! three tools, a schema-valid report of the reference server, the failure of a
//! misbehaving one, explanations, and no process left behind by a run cut off.

use std::io::{BufRead, BufReader, Write};
use std::process::{Child, ChildStdin, Command, Stdio};
use std::sync::mpsc::{Receiver, channel};
use std::time::{Duration, Instant};

use serde_json::{Value, json};

use crate::support::*;

#[test]
fn mcpcheck_mcp_passes_its_own_suite_with_every_tool_called() {
    let exe = env!("CARGO_BIN_EXE_mcpcheck");
    // The default (the era it speaks), then every revision: the tools are listed and
    // answered per revision (no outputSchema or structuredContent before 2025-06-18), and
    // batches are split in 2025-03-26 only.
    for revisions in [&[][..], &["--protocol-version", "all"]] {
        let started = Instant::now();
        let output = mcpcheck()
            .args(["run", "--call-tools", "all", "--fail-on", "warning"])
            .args(FAST)
            .args(revisions)
            .args(["--", exe, "mcp"])
            .output()
            .expect("running mcpcheck");
        assert_eq!(
            output.status.code(),
            Some(0),
            "{revisions:?}: {}",
            describe(&output)
        );
        // The synthesized run_checks calls must end at once (a tool error), not at a timeout.
        assert!(started.elapsed() < Duration::from_secs(60), "{revisions:?}");
    }
}

/// A client session with `mcpcheck mcp` over stdio.
struct Session {
    child: Child,
    stdin: ChildStdin,
    lines: Receiver<String>,
    next_id: u64,
}

impl Session {
    fn start(env: &[(&str, &str)]) -> Session {
        let mut child = Command::new(env!("CARGO_BIN_EXE_mcpcheck"))
            .arg("mcp")
            .env("MCPCHECK_SCHEMA_DIR", schema_dir())
            .env_remove(NESTED)
            .envs(env.iter().copied())
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::inherit())
            .spawn()
            .expect("starting mcpcheck mcp");
        let stdin = child.stdin.take().expect("piped stdin");
        let stdout = child.stdout.take().expect("piped stdout");
        let (tx, lines) = channel();
        std::thread::spawn(move || {
            for line in BufReader::new(stdout).lines() {
                let Ok(line) = line else { break };
                if tx.send(line).is_err() {
                    break;
                }
            }
        });
        let mut s = Session {
            child,
            stdin,
            lines,
            next_id: 0,
        };
        let init = s.request(
            "initialize",
            json!({"protocolVersion": "2025-11-25", "capabilities": {},
                   "clientInfo": {"name": "it", "version": "1"}}),
        );
        assert_eq!(init["result"]["protocolVersion"], "2025-11-25", "{init}");
        s.send(&json!({"jsonrpc": "2.0", "method": "notifications/initialized"}));
        s
    }

    fn send(&mut self, message: &Value) {
        writeln!(self.stdin, "{message}").expect("writing to mcpcheck mcp");
        self.stdin.flush().expect("flushing");
    }

    /// Sends a request and returns its response; every stdout line must be JSON-RPC.
    fn request(&mut self, method: &str, params: Value) -> Value {
        self.next_id += 1;
        let id = self.next_id;
        self.send(&json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params}));
        let deadline = Instant::now() + Duration::from_secs(120);
        loop {
            let left = deadline.saturating_duration_since(Instant::now());
            let line = self
                .lines
                .recv_timeout(left)
                .unwrap_or_else(|e| panic!("no answer to {method} ({e})"));
            let message: Value = serde_json::from_str(&line)
                .unwrap_or_else(|e| panic!("stdout carried a non-JSON line ({e}): {line}"));
            assert_eq!(message["jsonrpc"], "2.0", "{line}");
            if message["id"] == id {
                return message;
            }
        }
    }

    fn call(&mut self, tool: &str, arguments: Value) -> Value {
        let response = self.request("tools/call", json!({"name": tool, "arguments": arguments}));
        assert!(response.get("error").is_none(), "{response}");
        response["result"].clone()
    }
}

impl Drop for Session {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// The nesting guard's variable, unset for these sessions (the test may itself run under
/// a `run_checks`).
pub const NESTED: &str = "MCPCHECK_MCP_NESTED";

fn text(result: &Value) -> String {
    result["content"][0]["text"]
        .as_str()
        .unwrap_or("")
        .to_owned()
}

#[test]
fn a_client_lists_the_tools_checks_servers_and_asks_for_explanations() {
    let mut s = Session::start(&[]);
    let listed = s.request("tools/list", json!({}));
    let tools = listed["result"]["tools"].as_array().expect("tools").clone();
    let names: Vec<&str> = tools.iter().filter_map(|t| t["name"].as_str()).collect();
    assert_eq!(names, ["run_checks", "list_scenarios", "explain"]);
    for t in &tools {
        assert_eq!(t["outputSchema"]["type"], "object", "{t}");
    }
    let run_checks = &tools[0];
    assert_eq!(run_checks["annotations"]["readOnlyHint"], false);
    assert_eq!(run_checks["annotations"]["openWorldHint"], false);
    assert_eq!(tools[2]["annotations"]["readOnlyHint"], true);
    let report_schema =
        jsonschema::validator_for(&run_checks["outputSchema"]).expect("a valid outputSchema");

    // The reference server passes a few scenarios, and the report fits the schema.
    let reference = s.call(
        "run_checks",
        json!({"command": [reference()], "protocol_version": "2025-11-25",
               "include": ["lifecycle/*", "tools/list-result"], "timeout_seconds": 60}),
    );
    assert_eq!(reference["isError"], false, "{}", text(&reference));
    let report = &reference["structuredContent"];
    assert_eq!(report["verdict"], "pass", "{}", text(&reference));
    assert_eq!(report["legs"][0]["tally"]["fail"], 0);
    assert!(report["legs"][0]["tally"]["pass"].as_u64().unwrap() >= 3);
    let errors: Vec<String> = report_schema
        .iter_errors(report)
        .map(|e| format!("{} at {}", e, e.instance_path()))
        .collect();
    assert!(errors.is_empty(), "{errors:#?}");
    assert!(
        text(&reference).contains(": pass (exit code 0)"),
        "{}",
        text(&reference)
    );

    // A server that writes garbage on stdout fails, and the summary says why.
    let garbage = s.call(
        "run_checks",
        json!({"command": [misbehaving(), "--defect", "garbage-stdout"],
               "protocol_version": "2025-11-25", "include": ["stdio/stdout-only-messages"],
               "timeout_seconds": 60}),
    );
    assert_eq!(garbage["isError"], false, "{}", text(&garbage));
    assert_eq!(garbage["structuredContent"]["verdict"], "fail");
    assert!(report_schema.is_valid(&garbage["structuredContent"]));
    assert!(
        text(&garbage).contains("stdio.stdout-only-messages"),
        "{}",
        text(&garbage)
    );

    // What cannot be checked at all is a tool error with a reason.
    let missing = s.call(
        "run_checks",
        json!({"command": ["/nonexistent/mcp-server"]}),
    );
    assert_eq!(missing["isError"], true);
    assert!(
        text(&missing).contains("could not start"),
        "{}",
        text(&missing)
    );
    let remote = s.call("run_checks", json!({"url": "http://example.com/mcp"}));
    assert_eq!(remote["isError"], true);
    assert!(text(&remote).contains("loopback"), "{}", text(&remote));

    // Explanations: a known rule, and an unknown id with a near miss named.
    let rule = s.call("explain", json!({"id": "jsonrpc.id-echoed"}));
    assert_eq!(rule["isError"], false);
    assert_eq!(rule["structuredContent"]["kind"], "rule");
    assert_eq!(rule["structuredContent"]["level"], "must");
    let explain_schema = jsonschema::validator_for(&tools[2]["outputSchema"]).unwrap();
    assert!(explain_schema.is_valid(&rule["structuredContent"]));
    let unknown = s.call("explain", json!({"id": "jsonrpc.id-echoe"}));
    assert_eq!(unknown["isError"], true);
    assert!(
        text(&unknown).contains("did you mean jsonrpc.id-echoed"),
        "{}",
        text(&unknown)
    );

    let listed = s.call("list_scenarios", json!({"include": ["stdio/*"]}));
    assert_eq!(listed["isError"], false);
    let count = listed["structuredContent"]["count"].as_u64().unwrap();
    assert!(count >= 1);
    assert_eq!(
        listed["structuredContent"]["scenarios"]
            .as_array()
            .unwrap()
            .len() as u64,
        count
    );
}

#[test]
fn a_run_cut_off_by_its_budget_leaves_no_process_behind() {
    let marker = format!("MCPCHECK_MCP_IT={}", std::process::id());
    let (key, value) = marker.split_once('=').unwrap();
    let mut s = Session::start(&[(key, value)]);
    let started = Instant::now();
    // A "server" that never answers: the run's budget ends it.
    let result = s.call(
        "run_checks",
        json!({"command": ["sleep", "600"], "protocol_version": "2025-11-25",
               "include": ["lifecycle/ping-result"], "timeout_seconds": 2}),
    );
    assert!(started.elapsed() < Duration::from_secs(30), "{result}");
    if result["isError"] == false {
        assert_ne!(result["structuredContent"]["verdict"], "pass", "{result}");
    }
    drop(s);
    let deadline = Instant::now() + Duration::from_secs(5);
    while !processes_with_env(&marker).is_empty() && Instant::now() < deadline {
        std::thread::sleep(Duration::from_millis(100));
    }
    assert_eq!(processes_with_env(&marker), Vec::<u32>::new());
}

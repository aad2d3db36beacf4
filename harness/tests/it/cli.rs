//! The command line's contract: exit codes, clear errors for bad input, schema resolution
//! and `schemas fetch` against a loopback server.

use std::io::{BufRead, BufReader, Write};
use std::net::TcpListener;

use crate::support::*;

fn run(args: &[&str]) -> (i32, String) {
    let out = mcpcheck().args(args).output().unwrap();
    (out.status.code().unwrap_or(-1), describe(&out))
}

#[test]
fn usage_errors_exit_2_with_a_clear_message() {
    let cases: &[(&[&str], &str)] = &[
        (&["run"], "no server to check"),
        (
            &["run", "--timeout", "soon", "--", "true"],
            "invalid value 'soon' for '--timeout",
        ),
        (
            &["run", "--protocol-version", "2025-01-01", "--", "true"],
            "unknown protocol revision `2025-01-01`",
        ),
        (
            &["run", "--env", "NOEQUALS", "--", "true"],
            "expected KEY=VALUE",
        ),
        (
            &["run", "--cwd", "/definitely/not/here", "--", "true"],
            "not a directory",
        ),
        (&["run", "--server", "a", "--", "b"], "cannot be used with"),
        (&["run", "--bogus-flag"], "unexpected argument"),
    ];
    for (args, needle) in cases {
        let (code, text) = run(args);
        assert_eq!(code, 2, "{args:?}: {text}");
        assert!(
            text.contains(needle),
            "{args:?}: expected {needle:?} in\n{text}"
        );
    }
}

#[test]
fn a_command_that_cannot_start_is_a_harness_error() {
    let (code, text) = run(&["run", "--", "/no/such/server-binary", "--flag"]);
    assert_eq!(code, 2, "{text}");
    assert!(
        text.contains("could not start `/no/such/server-binary --flag`"),
        "{text}"
    );
}

/// Serves `schema/<rev>/schema.json` from the shared schemas, tampering with one revision.
fn serve_schemas(tamper: Option<&'static str>) -> (String, std::thread::JoinHandle<()>) {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let base = format!("http://{}", listener.local_addr().unwrap());
    let dir = schema_dir();
    listener.set_nonblocking(true).unwrap();
    let handle = std::thread::spawn(move || {
        let deadline = std::time::Instant::now() + std::time::Duration::from_secs(30);
        let mut served = 0;
        while served < 5 && std::time::Instant::now() < deadline {
            let Ok((mut stream, _)) = listener.accept() else {
                std::thread::sleep(std::time::Duration::from_millis(20));
                continue;
            };
            served += 1;
            stream.set_nonblocking(false).unwrap();
            let mut reader = BufReader::new(stream.try_clone().unwrap());
            let mut request_line = String::new();
            reader.read_line(&mut request_line).unwrap();
            loop {
                let mut h = String::new();
                if reader.read_line(&mut h).unwrap() == 0 || h == "\r\n" {
                    break;
                }
            }
            let path = request_line
                .split_whitespace()
                .nth(1)
                .unwrap_or("/")
                .to_owned();
            let rev = path.split('/').rev().nth(1).unwrap_or("").to_owned();
            let mut body = std::fs::read(dir.join(&rev).join("schema.json")).unwrap_or_default();
            if Some(rev.as_str()) == tamper {
                body.extend_from_slice(b" ");
            }
            let head = format!(
                "HTTP/1.1 200 OK\r\nContent-Length: {}\r\nConnection: close\r\n\r\n",
                body.len()
            );
            let _ = stream.write_all(head.as_bytes());
            let _ = stream.write_all(&body);
        }
    });
    (base, handle)
}

#[test]
fn schemas_fetch_verifies_the_pins() {
    let dest = tempfile_path("schemas");
    let (base, server) = serve_schemas(None);
    let (code, text) = run(&[
        "schemas",
        "fetch",
        "--base-url",
        &base,
        "--dest",
        dest.to_str().unwrap(),
    ]);
    server.join().unwrap();
    assert_eq!(code, 0, "{text}");
    for rev in [
        "2024-11-05",
        "2025-03-26",
        "2025-06-18",
        "2025-11-25",
        "2026-07-28",
    ] {
        assert!(
            dest.join(rev).join("schema.json").is_file(),
            "{rev} missing: {text}"
        );
    }

    let dest = tempfile_path("schemas-tampered");
    let (base, server) = serve_schemas(Some("2025-06-18"));
    let (code, text) = run(&[
        "schemas",
        "fetch",
        "--base-url",
        &base,
        "--dest",
        dest.to_str().unwrap(),
    ]);
    server.join().unwrap();
    assert_eq!(code, 2, "{text}");
    assert!(
        text.contains("2025-06-18/schema.json: checksum mismatch"),
        "{text}"
    );
    assert!(
        !dest.join("2025-06-18/schema.json").exists(),
        "a tampered schema must not be saved"
    );
    assert!(dest.join("2025-11-25/schema.json").exists());
}

#[test]
fn schemas_list_reports_origin_and_pin() {
    let (code, text) = run(&["schemas", "list"]);
    assert_eq!(code, 0, "{text}");
    assert!(
        text.contains("2025-11-25") && text.contains("matches pin"),
        "{text}"
    );
}

/// `mcpcheck list --format json`: the suite as data, every scenario once with its fields.
#[test]
fn list_as_json_gives_each_scenario_with_its_fields() {
    let out = mcpcheck()
        .args(["list", "--format", "json"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(0), "{}", describe(&out));
    let list: Vec<serde_json::Value> = serde_json::from_slice(&out.stdout).unwrap();
    assert!(list.len() > 50, "{} scenarios", list.len());
    let ids: std::collections::BTreeSet<&str> =
        list.iter().filter_map(|s| s["id"].as_str()).collect();
    assert_eq!(ids.len(), list.len(), "ids are unique");
    let s = list
        .iter()
        .find(|s| s["id"] == "tools/list-result")
        .expect("tools/list-result is listed");
    assert_eq!(s["area"], "tools");
    assert_eq!(s["severity"], "must");
    assert!(s["title"].as_str().is_some_and(|t| !t.is_empty()), "{s:#}");
    assert!(s["spec"].as_str().is_some_and(|t| t.contains('#')), "{s:#}");
    assert!(
        s["revisions"]
            .as_array()
            .unwrap()
            .contains(&"2025-11-25".into()),
        "{s:#}"
    );
    assert_eq!(
        s["transports"],
        serde_json::json!(["stdio", "http"]),
        "{s:#}"
    );
    assert_eq!(s["requires"], serde_json::json!(["tools"]), "{s:#}");
}

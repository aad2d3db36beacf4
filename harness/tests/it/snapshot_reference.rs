//! Example: snapshot-testing an MCP server with insta, the way a Rust server's own tests
//! can. The committed snapshots are in `tests/it/snapshots/it__snapshot_reference__*.snap`;
//! when the server's surface changes, this test fails and `cargo insta review` shows the
//! change to accept or reject.
//!
//! ```text
//! let snap = mcpcheck::snapshot::Capture::default()
//!     .command_blocking(&["./target/debug/my-server"])?;
//! insta::assert_yaml_snapshot!("tools", snap.area("tools"));
//! ```

use mcpcheck::snapshot::{Capture, Snapshot};

/// Snapshots the reference fixture, started with `extra` arguments.
fn capture(extra: &[&str]) -> Snapshot {
    let mut argv = vec![crate::support::reference()];
    argv.extend(extra.iter().map(|s| s.to_string()));
    let capture = Capture {
        schema_dir: Some(crate::support::schema_dir()),
        ..Capture::default()
    };
    capture
        .command_blocking(&argv)
        .expect("snapshot of the reference server")
}

#[test]
fn the_reference_server_surface_is_unchanged() {
    let snap = capture(&[]);
    // Already-redacted shapes go straight to insta...
    for area in ["tools", "resources", "prompts"] {
        insta::assert_yaml_snapshot!(area, snap.area(area));
    }
    // ...or the raw capture with the same redactions as insta settings.
    let mut settings = insta::Settings::clone_current();
    let redactions = snap.insta_redactions("server");
    assert!(
        redactions
            .iter()
            .any(|(sel, ph)| sel == ".serverInfo.version" && ph == "[version]"),
        "{redactions:?}"
    );
    for (selector, placeholder) in redactions {
        settings.add_redaction(&selector, placeholder);
    }
    settings.bind(|| insta::assert_yaml_snapshot!("server", snap.raw_area("server")));
}

/// The same assertion fails when the fixture changes one tool's schema. It runs against a
/// copy of the committed snapshot, so insta's `.snap.new` lands in a scratch directory.
#[test]
fn a_changed_tool_schema_fails_the_insta_assertion() {
    // These make insta accept anything, so the failure could not show.
    if std::env::var_os("INSTA_FORCE_PASS").is_some()
        || std::env::var("INSTA_UPDATE").is_ok_and(|v| v == "always")
    {
        // Under CI that setting would hide every snapshot failure: refuse to pass.
        assert!(
            std::env::var_os("CI").is_none(),
            "INSTA_FORCE_PASS or INSTA_UPDATE=always is set under CI: snapshot tests cannot fail"
        );
        // Elsewhere, run this very test again in a process without them: it is checked,
        // never skipped.
        let rerun = std::process::Command::new(std::env::current_exe().expect("test binary"))
            .args([
                "--exact",
                "snapshot_reference::a_changed_tool_schema_fails_the_insta_assertion",
            ])
            .env_remove("INSTA_FORCE_PASS")
            .env_remove("INSTA_UPDATE")
            .output()
            .expect("re-running the test without the insta overrides");
        let out = String::from_utf8_lossy(&rerun.stdout);
        // A filter that matched nothing would also succeed: require the one test to run.
        assert!(
            rerun.status.success() && out.contains("1 passed"),
            "the test without the insta overrides:\n{out}"
        );
        return;
    }
    let scratch = crate::support::tempfile_path("insta-scratch");
    std::fs::create_dir_all(&scratch).unwrap();
    let name = "it__snapshot_reference__tools.snap";
    let committed = crate::support::workspace()
        .join("harness/tests/it/snapshots")
        .join(name);
    std::fs::copy(&committed, scratch.join(name)).expect("committed tools snapshot");
    let mut settings = insta::Settings::clone_current();
    settings.set_snapshot_path(&scratch);

    let plain = capture(&[]);
    settings.bind(|| insta::assert_yaml_snapshot!("tools", plain.area("tools")));

    let changed = capture(&["--variant", "tool-schema"]);
    let outcome = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
        settings.bind(|| insta::assert_yaml_snapshot!("tools", changed.area("tools")));
    }));
    assert!(outcome.is_err(), "insta accepted a changed tool schema");
    let _ = std::fs::remove_dir_all(&scratch);
}

/// An in-process server over a stream pair, no process: a tiny hand-written server
/// that answers the handshake and lists one tool.
#[test]
fn an_in_process_server_can_be_snapshotted_over_a_stream_pair() {
    use mcpcheck::transport::stream::StreamTransport;
    use tokio::io::{AsyncBufReadExt, AsyncWriteExt, BufReader};

    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    let snap = runtime.block_on(async {
        let (client_out, server_in) = tokio::io::duplex(64 * 1024);
        let (server_out, client_in) = tokio::io::duplex(64 * 1024);
        tokio::spawn(async move {
            let mut lines = BufReader::new(server_in).lines();
            let mut out = server_out;
            while let Ok(Some(line)) = lines.next_line().await {
                let msg: serde_json::Value = serde_json::from_str(&line).unwrap();
                let Some(id) = msg.get("id").cloned() else {
                    continue;
                };
                let result = match msg["method"].as_str() {
                    Some("initialize") => serde_json::json!({
                        "protocolVersion": "2025-11-25",
                        "capabilities": {"tools": {}},
                        "serverInfo": {"name": "in-process", "version": "9.9.9"}
                    }),
                    Some("tools/list") => serde_json::json!({"tools": [
                        {"name": "hello", "inputSchema": {"type": "object"}}
                    ]}),
                    _ => serde_json::json!({}),
                };
                let reply = serde_json::json!({"jsonrpc": "2.0", "id": id, "result": result});
                out.write_all(format!("{reply}\n").as_bytes())
                    .await
                    .unwrap();
            }
        });
        let transport = StreamTransport::new(client_in, client_out, "in-process");
        let capture = Capture {
            schema_dir: Some(crate::support::schema_dir()),
            ..Capture::default()
        };
        capture.transport(Box::new(transport)).await
    });
    let snap = snap.expect("in-process snapshot");
    assert_eq!(snap.area("server")["serverInfo"]["version"], "[version]");
    assert_eq!(snap.area("tools")["list"][0]["name"], "hello");
    // Not annotated read-only, so the default policy does not call it.
    assert!(snap.area("tools")["calls"]["hello"]["skipped"].is_string());
    assert_eq!(
        snap.area("prompts"),
        &serde_json::json!({"declared": false})
    );
}

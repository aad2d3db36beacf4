//! Determinism: a server that returns the same surface in another order (list items, object
//! keys, `required` entries) gives a byte-identical snapshot; a change of order where order
//! means something (content items) does not.

use mcpcheck::snapshot::{Capture, Snapshot};
use mcpcheck::transport::stream::StreamTransport;
use serde_json::{Value, json};
use tokio::io::{AsyncBufReadExt, AsyncWriteExt, BufReader};

/// Runs a minimal in-process server answering with `answers[method]` and captures it.
fn capture(answers: Value) -> Snapshot {
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    runtime
        .block_on(async move {
            let (client_out, server_in) = tokio::io::duplex(64 * 1024);
            let (mut server_out, client_in) = tokio::io::duplex(64 * 1024);
            tokio::spawn(async move {
                let mut lines = BufReader::new(server_in).lines();
                while let Ok(Some(line)) = lines.next_line().await {
                    let msg: Value = serde_json::from_str(&line).unwrap();
                    let Some(id) = msg.get("id").cloned() else {
                        continue;
                    };
                    let method = msg["method"].as_str().unwrap_or_default();
                    let result = answers.get(method).cloned().unwrap_or(json!({}));
                    let reply = json!({"jsonrpc": "2.0", "id": id, "result": result});
                    let line = format!("{reply}\n");
                    if server_out.write_all(line.as_bytes()).await.is_err() {
                        break;
                    }
                }
            });
            let capture = Capture {
                schema_dir: Some(crate::support::schema_dir()),
                ..Capture::default()
            };
            capture
                .transport(Box::new(StreamTransport::new(
                    client_in, client_out, "test",
                )))
                .await
        })
        .expect("capture")
}

fn init() -> Value {
    json!({
        "protocolVersion": "2025-11-25",
        "capabilities": {"tools": {}, "prompts": {}},
        "serverInfo": {"name": "order", "version": "1.0.0"}
    })
}

fn yaml(s: &Snapshot) -> String {
    Snapshot::AREAS.iter().map(|a| s.to_yaml(a)).collect()
}

#[test]
fn list_order_key_order_and_schema_sets_do_not_change_the_snapshot() {
    let ro = json!({"readOnlyHint": true});
    let a = capture(json!({
        "initialize": init(),
        "tools/list": {"tools": [
            {"name": "alpha", "annotations": ro, "inputSchema": {"type": "object", "properties": {"x": {"type": "string"}, "y": {"type": "string"}}, "required": ["x", "y"]}},
            {"name": "beta", "inputSchema": {"type": "object"}}
        ]},
        "tools/call": {"content": [{"type": "text", "text": "one"}], "isError": false},
        "prompts/list": {"prompts": [{"name": "p"}, {"name": "q"}]},
        "prompts/get": {"messages": []}
    }));
    let b = capture(json!({
        "initialize": {"serverInfo": {"version": "2.0.0", "name": "order"}, "capabilities": {"prompts": {}, "tools": {}}, "protocolVersion": "2025-11-25"},
        "tools/list": {"tools": [
            {"inputSchema": {"type": "object"}, "name": "beta"},
            {"inputSchema": {"required": ["y", "x"], "properties": {"y": {"type": "string"}, "x": {"type": "string"}}, "type": "object"}, "annotations": ro, "name": "alpha"}
        ]},
        "tools/call": {"isError": false, "content": [{"text": "a different text", "type": "text"}]},
        "prompts/list": {"prompts": [{"name": "q"}, {"name": "p"}]},
        "prompts/get": {"messages": []}
    }));
    assert_eq!(yaml(&a), yaml(&b));
    // The call was made with synthesized arguments for the required properties.
    assert_eq!(
        a.area("tools")["calls"]["alpha"]["arguments"],
        json!({"x": "mcpcheck", "y": "mcpcheck"})
    );
}

#[test]
fn content_order_is_kept_because_it_means_something() {
    let answers = |content: Value| {
        json!({
            "initialize": init(),
            "tools/list": {"tools": [{"name": "t", "annotations": {"readOnlyHint": true}, "inputSchema": {"type": "object"}}]},
            "tools/call": {"content": content},
            "prompts/list": {"prompts": []}
        })
    };
    let text = json!({"type": "text", "text": "x"});
    let image = json!({"type": "image", "data": "AA==", "mimeType": "image/png"});
    let a = capture(answers(json!([text.clone(), image.clone()])));
    let b = capture(answers(json!([image, text])));
    assert_ne!(yaml(&a), yaml(&b));
}

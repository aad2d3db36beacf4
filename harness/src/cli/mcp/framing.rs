//! A guard between stdin/stdout and rmcp's stdio transport, for the JSON-RPC framing cases
//! rmcp leaves unanswered.
//!
//! rmcp reads lines and silently drops one that is not JSON, and answers a message that is
//! JSON but not a valid JSON-RPC request without its id. JSON-RPC 2.0 (section 5.1) asks
//! for `-32700 Parse error` and `-32600 Invalid Request` with the request's id, and
//! mcpcheck's own suite holds servers to that (`jsonrpc/parse-error`,
//! `jsonrpc/invalid-request`, should). So each line from stdin is looked at here first: a
//! line rmcp would mishandle is answered here, every other line is passed on unchanged.
//! Both rmcp's lines and these answers reach stdout through one writer, a whole line at a
//! time, so they never interleave.

use serde_json::{Value, json};
use tokio::io::{AsyncBufReadExt, AsyncRead, AsyncWrite, AsyncWriteExt, BufReader, DuplexStream};
use tokio::sync::mpsc;
use tokio::task::JoinHandle;

use crate::protocol::Revision;

/// What the guard gives rmcp in place of stdin and stdout, and the task that writes
/// stdout (await it after the session, so every answer is flushed).
#[derive(Debug)]
pub struct Guarded {
    /// rmcp reads the passed-on lines here.
    pub input: DuplexStream,
    /// rmcp writes its messages here.
    pub output: DuplexStream,
    /// Ends once rmcp's output is closed and everything is written.
    pub writer: JoinHandle<()>,
}

/// Pipe capacity between the guard and rmcp: a backlog, not a limit on message size.
const PIPE: usize = 256 * 1024;

/// Starts the guard on `stdin` and `stdout`.
pub fn guard<R, W>(stdin: R, stdout: W) -> Guarded
where
    R: AsyncRead + Unpin + Send + 'static,
    W: AsyncWrite + Unpin + Send + 'static,
{
    let (lines_tx, lines_rx) = mpsc::unbounded_channel::<Vec<u8>>();
    let (rmcp_in, mut to_rmcp) = tokio::io::duplex(PIPE);
    let (from_rmcp, rmcp_out) = tokio::io::duplex(PIPE);
    let writer = tokio::spawn(write_lines(stdout, lines_rx));
    let relay_tx = lines_tx.clone();
    tokio::spawn(async move {
        let mut lines = BufReader::new(from_rmcp);
        let mut line = Vec::new();
        while matches!(lines.read_until(b'\n', &mut line).await, Ok(n) if n > 0) {
            if relay_tx.send(std::mem::take(&mut line)).is_err() {
                break;
            }
        }
    });
    tokio::spawn(async move {
        let mut reader = BufReader::new(stdin);
        let mut line = Vec::new();
        let mut revision = None;
        while matches!(reader.read_until(b'\n', &mut line).await, Ok(n) if n > 0) {
            let taken = std::mem::take(&mut line);
            let (pass, answers) = match judge(&taken, &mut revision) {
                Judged::Pass => (vec![taken], Vec::new()),
                Judged::Answer(answer) => (Vec::new(), vec![answer]),
                Judged::Split(items) => split(items, &mut revision),
            };
            let mut closed = false;
            for answer in answers {
                let mut text = answer.to_string().into_bytes();
                text.push(b'\n');
                closed |= lines_tx.send(text).is_err();
            }
            for line in pass {
                closed |= to_rmcp.write_all(&line).await.is_err();
            }
            if closed {
                break;
            }
        }
        // End of input: rmcp sees it too, and ends the session.
        let _ = to_rmcp.shutdown().await;
    });
    Guarded {
        input: rmcp_in,
        output: rmcp_out,
        writer,
    }
}

async fn write_lines<W: AsyncWrite + Unpin>(
    mut stdout: W,
    mut lines: mpsc::UnboundedReceiver<Vec<u8>>,
) {
    while let Some(line) = lines.recv().await {
        if stdout.write_all(&line).await.is_err() || stdout.flush().await.is_err() {
            eprintln!("mcpcheck mcp: stdout closed; stopping");
            break;
        }
    }
}

/// What to do with one line from stdin.
#[derive(Debug)]
enum Judged {
    /// Pass it on to rmcp as it is.
    Pass,
    /// Answer it here; rmcp never sees it.
    Answer(Value),
    /// A 2025-03-26 batch: its messages, each passed on (or answered) as if it came alone.
    Split(Vec<Value>),
}

/// The lines for rmcp and the answers for a batch's messages.
fn split(items: Vec<Value>, revision: &mut Option<Revision>) -> (Vec<Vec<u8>>, Vec<Value>) {
    let mut pass = Vec::new();
    let mut answers = Vec::new();
    for item in items {
        if item.is_array() {
            answers.push(error(
                *revision,
                None,
                -32600,
                "Invalid Request: a batch inside a batch",
            ));
            continue;
        }
        match judge_value(&item, revision) {
            Judged::Answer(answer) => answers.push(answer),
            _ => {
                let mut line = item.to_string().into_bytes();
                line.push(b'\n');
                pass.push(line);
            }
        }
    }
    (pass, answers)
}

/// How to handle a line rmcp would mishandle. `revision` is the one the client asked for
/// in `initialize`, noted as it passes: from 2025-11-25 an error whose request id is
/// unreadable omits `id` (the schema allows no `null`); earlier revisions and JSON-RPC
/// say `null`. Batches exist only in 2025-03-26: there each of its messages is handed to
/// rmcp on its own (and answered on its own, which the revision allows: "MUST support
/// receiving" batches); in any other revision a batch is an invalid request.
fn judge(line: &[u8], revision: &mut Option<Revision>) -> Judged {
    let body = line.trim_ascii();
    if body.is_empty() {
        return Judged::Pass;
    }
    match serde_json::from_slice::<Value>(body) {
        Ok(Value::Array(items)) => {
            if items.is_empty() {
                Judged::Answer(error(
                    *revision,
                    None,
                    -32600,
                    "Invalid Request: an empty batch",
                ))
            } else if *revision == Some(Revision::V2025_03_26) {
                Judged::Split(items)
            } else {
                Judged::Answer(error(
                    *revision,
                    None,
                    -32600,
                    "Invalid Request: JSON-RPC batches exist only in protocol revision 2025-03-26",
                ))
            }
        }
        Ok(value) => judge_value(&value, revision),
        Err(e) => Judged::Answer(error(*revision, None, -32700, &format!("Parse error: {e}"))),
    }
}

/// [`judge`] for one JSON value that is not a batch.
fn judge_value(value: &Value, revision: &mut Option<Revision>) -> Judged {
    let Value::Object(obj) = value else {
        return Judged::Answer(error(
            *revision,
            None,
            -32600,
            "Invalid Request: a JSON-RPC message must be an object",
        ));
    };
    let id = obj
        .get("id")
        .filter(|id| id.is_string() || id.is_i64() || id.is_u64())
        .cloned();
    let invalid = |why: &str| {
        Judged::Answer(error(
            *revision,
            id.clone(),
            -32600,
            &format!("Invalid Request: {why}"),
        ))
    };
    if obj.get("jsonrpc").and_then(Value::as_str) != Some("2.0") {
        return invalid("\"jsonrpc\" must be \"2.0\"");
    }
    if obj.get("id").is_some() && id.is_none() {
        return invalid("\"id\" must be a string or an integer");
    }
    if let Some(method) = obj.get("method") {
        let Some(method) = method.as_str() else {
            return invalid("\"method\" must be a string");
        };
        if method == "initialize" && revision.is_none() {
            *revision = obj
                .get("params")
                .and_then(|p| p.get("protocolVersion"))
                .and_then(Value::as_str)
                .and_then(|v| v.parse().ok())
                // A revision this server does not speak negotiates down to the newest.
                .filter(|r| *r <= Revision::LATEST_HANDSHAKE)
                .or(Some(Revision::LATEST_HANDSHAKE));
        }
    }
    Judged::Pass
}

fn error(revision: Option<Revision>, id: Option<Value>, code: i64, message: &str) -> Value {
    let error = json!({"code": code, "message": message});
    match id {
        Some(id) => json!({"jsonrpc": "2.0", "id": id, "error": error}),
        None if revision.is_some_and(|r| r >= Revision::V2025_11_25) => {
            json!({"jsonrpc": "2.0", "error": error})
        }
        None => json!({"jsonrpc": "2.0", "id": null, "error": error}),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn answer(line: &str) -> Option<Value> {
        match judge(line.as_bytes(), &mut None) {
            Judged::Answer(v) => Some(v),
            Judged::Pass => None,
            Judged::Split(items) => panic!("split {items:?}"),
        }
    }

    #[test]
    fn lines_rmcp_mishandles_are_answered_here() {
        let e = answer("{\"jsonrpc\":\"2.0\",\"id\":1,\"method\"").unwrap();
        assert_eq!(e["error"]["code"], -32700);
        assert_eq!(e["id"], Value::Null);
        let e = answer(r#"{"jsonrpc":"1.0","id":"invalid-1","method":"ping"}"#).unwrap();
        assert_eq!(e["error"]["code"], -32600);
        assert_eq!(e["id"], "invalid-1");
        assert_eq!(answer("42").unwrap()["error"]["code"], -32600);
        assert_eq!(
            answer(r#"{"jsonrpc":"2.0","id":1.5,"method":"ping"}"#).unwrap()["error"]["code"],
            -32600
        );
    }

    #[test]
    fn messages_and_batches_pass_through() {
        assert!(answer(r#"{"jsonrpc":"2.0","id":1,"method":"ping"}"#).is_none());
        assert!(answer(r#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#).is_none());
        assert!(answer(r#"{"jsonrpc":"2.0","id":1,"result":{}}"#).is_none());
        assert!(answer("  \r\n").is_none());
    }

    #[test]
    fn from_2025_11_25_an_unreadable_id_is_omitted() {
        let mut revision = None;
        let init = r#"{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-11-25"}}"#;
        assert!(matches!(
            judge(init.as_bytes(), &mut revision),
            Judged::Pass
        ));
        let Judged::Answer(e) = judge(b"nope", &mut revision) else {
            panic!("not answered")
        };
        assert!(e.get("id").is_none(), "{e}");
    }

    #[test]
    fn batches_are_split_in_2025_03_26_and_refused_elsewhere() {
        let batch = br#"[{"jsonrpc":"2.0","id":"b1","method":"ping"},{"jsonrpc":"1.0","id":"b2","method":"ping"}]"#;
        let mut old = Some(Revision::V2025_03_26);
        let Judged::Split(items) = judge(batch, &mut old) else {
            panic!("not split")
        };
        let (pass, answers) = split(items, &mut old);
        assert_eq!(pass.len(), 1);
        assert_eq!(answers[0]["id"], "b2");
        for revision in [Revision::V2025_06_18, Revision::V2025_11_25] {
            let Judged::Answer(e) = judge(batch, &mut Some(revision)) else {
                panic!("{revision}: not refused")
            };
            assert_eq!(e["error"]["code"], -32600);
            assert_eq!(
                e.get("id").is_some(),
                revision < Revision::V2025_11_25,
                "{e}"
            );
        }
        let Judged::Answer(e) = judge(b"[]", &mut old) else {
            panic!("empty batch not refused")
        };
        assert_eq!(e["error"]["code"], -32600);
    }
}

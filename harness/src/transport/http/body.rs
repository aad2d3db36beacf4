//! What the exchange and its stream readers share: reading a whole body, handing one
//! message to the session, and noting the HTTP status a JSON-RPC error came under.

use futures_util::StreamExt;
use serde_json::Value;
use tokio::sync::mpsc;

use super::diagnose::error_chain;
use super::handle::HttpHandle;
use super::record::{HttpRecord, StreamAnomaly};
use crate::transport::Inbound;
use crate::transport::framing::RawFrame;

/// Reports the HTTP status a JSON-RPC error response came under ([`StreamAnomaly::ErrorStatus`]).
pub(super) async fn note_error_status(
    value: &Value,
    status: u16,
    sse: bool,
    tx: &mpsc::Sender<Inbound>,
) {
    let Some(code) = value.pointer("/error/code").and_then(Value::as_i64) else {
        return;
    };
    let anomaly = StreamAnomaly::ErrorStatus {
        request_id: value.get("id").cloned().unwrap_or(Value::Null),
        code,
        status,
        sse,
    };
    let _ = tx.send(Inbound::Http(HttpRecord::Anomaly(anomaly))).await;
}

/// Reads a whole body, up to `max` bytes.
pub(crate) async fn read_body(response: reqwest::Response, max: usize) -> Result<Vec<u8>, String> {
    let mut stream = response.bytes_stream();
    let mut out = Vec::new();
    while let Some(chunk) = stream.next().await {
        let chunk = chunk.map_err(|e| format!("reading the body failed: {}", error_chain(&e)))?;
        out.extend_from_slice(&chunk);
        if out.len() > max {
            return Err(format!("the body exceeded {max} bytes"));
        }
    }
    Ok(out)
}

/// Hands one message to the session, noting the negotiated revision on the way.
pub(crate) async fn deliver(
    handle: &HttpHandle,
    value: Value,
    text: &str,
    tx: &mpsc::Sender<Inbound>,
) {
    {
        let mut s = handle.lock();
        if let Some(init) = &s.initialize_id
            && value.get("id") == Some(init)
            && let Some(v) = value
                .pointer("/result/protocolVersion")
                .and_then(Value::as_str)
        {
            s.revision = Some(v.to_owned());
            s.initialize_id = None;
        }
    }
    let frame = RawFrame {
        offset: 0,
        bytes: text.as_bytes().to_vec(),
        value,
    };
    let _ = tx.send(Inbound::Frame(frame)).await;
}

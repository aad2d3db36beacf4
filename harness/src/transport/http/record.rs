//! How the transcript records HTTP: one [`HttpRecord`] per exchange, SSE event, stream end,
//! resumption or problem, so a report can show what went over the wire beside the frames.

use serde::Serialize;

use super::headers::header_of;

/// One HTTP event, as the transcript records it.
#[derive(Clone, Debug, PartialEq, Serialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum HttpRecord {
    /// A request and its response head (and body, unless it is an SSE stream).
    Exchange {
        method: String,
        url: String,
        request_headers: Vec<(String, String)>,
        status: u16,
        response_headers: Vec<(String, String)>,
        #[serde(skip_serializing_if = "Option::is_none")]
        body: Option<String>,
    },
    /// One event of an SSE stream (its data, if a message, follows as a received frame).
    SseEvent {
        stream: String,
        #[serde(skip_serializing_if = "String::is_empty")]
        id: String,
        event: String,
        #[serde(skip_serializing_if = "Option::is_none")]
        retry_ms: Option<u64>,
        data_bytes: usize,
        /// The data, for raw scenario exchanges (the transport's messages are frames).
        #[serde(skip_serializing_if = "Option::is_none")]
        data: Option<String>,
    },
    /// An SSE stream ended (or broke).
    StreamEnd { stream: String, reason: String },
    /// mcpcheck reconnects to a stream that ended before its response: a GET with
    /// `Last-Event-ID` after `wait_ms` (the server's `retry`, else the default).
    Resume {
        stream: String,
        last_event_id: String,
        attempt: u32,
        wait_ms: u64,
    },
    /// The server broke a transport rule mcpcheck checks as the exchange goes (rule id of
    /// `check::rules`); the session turns it into a finding.
    Violation { rule: String, problem: String },
    /// A request that got no HTTP response at all.
    Failed {
        method: String,
        url: String,
        error: String,
    },
    /// Something in a response that is not a JSON-RPC message where one belongs.
    Invalid { context: String, problem: String },
}

impl HttpRecord {
    /// One line for the human transcript.
    pub fn summary(&self) -> String {
        match self {
            HttpRecord::Exchange {
                method,
                url,
                status,
                response_headers,
                ..
            } => {
                let ct = header_of(response_headers, "content-type").unwrap_or("-");
                format!("HTTP {method} {url} -> {status} ({ct})")
            }
            HttpRecord::SseEvent {
                stream, id, event, ..
            } => format!("SSE {stream}: event {event:?} id {id:?}"),
            HttpRecord::StreamEnd { stream, reason } => format!("SSE {stream} ended: {reason}"),
            HttpRecord::Resume {
                stream,
                last_event_id,
                attempt,
                wait_ms,
            } => format!(
                "SSE {stream}: resuming with GET, Last-Event-ID {last_event_id:?} (attempt {attempt}, after {wait_ms} ms)"
            ),
            HttpRecord::Violation { rule, problem } => format!("HTTP [{rule}] {problem}"),
            HttpRecord::Failed { method, url, error } => {
                format!("HTTP {method} {url} failed: {error}")
            }
            HttpRecord::Invalid { context, problem } => format!("HTTP {context}: {problem}"),
        }
    }
}

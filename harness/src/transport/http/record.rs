//! How the transcript records HTTP: one [`HttpRecord`] per exchange, SSE event, stream end,
//! resumption or problem, so a report can show what went over the wire beside the frames.

use serde::Serialize;
use serde_json::Value;

use super::headers::header_of;
use crate::protocol::Revision;

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
    /// Something the server did on a stream that may break a transport rule; the session
    /// judges it (the transport judges nothing).
    Anomaly(StreamAnomaly),
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
            HttpRecord::Anomaly(a) => format!("SSE {a}"),
            HttpRecord::Failed { method, url, error } => {
                format!("HTTP {method} {url} failed: {error}")
            }
            HttpRecord::Invalid { context, problem } => format!("HTTP {context}: {problem}"),
        }
    }
}

/// What a server did on an SSE stream (or in a response head) that the session may judge:
/// facts, not findings.
#[derive(Clone, Debug, PartialEq, Serialize)]
#[serde(tag = "anomaly", rename_all = "snake_case")]
pub enum StreamAnomaly {
    /// After a resumption with `Last-Event-ID`, the stream delivered an event id it had
    /// delivered before.
    DuplicateEventId { stream: String, id: String },
    /// After a resumption, the stream carried the response to a request it was not answering.
    ReplayFromOtherStream { stream: String, request_id: Value },
    /// The server closed the stream before the response to `request_id` (a listen stream,
    /// or one mcpcheck closed, is never reported). `negotiated`: the session's revision, if
    /// known.
    ClosedBeforeResponse {
        stream: String,
        request_id: Value,
        #[serde(skip_serializing_if = "Option::is_none")]
        negotiated: Option<Revision>,
    },
    /// A 2xx answer to a POST whose body is JSON-RPC but whose `Content-Type` is neither
    /// `application/json` nor `text/event-stream` (`""` when absent). Its messages were
    /// delivered all the same.
    WrongContentType { content_type: String },
}

impl std::fmt::Display for StreamAnomaly {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            StreamAnomaly::DuplicateEventId { stream, id } => write!(
                f,
                "{stream}: after resuming with Last-Event-ID, event {id:?} came again"
            ),
            StreamAnomaly::ReplayFromOtherStream { stream, request_id } => write!(
                f,
                "{stream}: after resuming with Last-Event-ID, the response to request {request_id} came, which this stream does not carry"
            ),
            StreamAnomaly::ClosedBeforeResponse {
                stream, request_id, ..
            } => write!(
                f,
                "{stream}: the server closed the stream before the response to request {request_id}"
            ),
            StreamAnomaly::WrongContentType { content_type } => write!(
                f,
                "a JSON-RPC answer came with Content-Type {content_type:?}"
            ),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_anomaly_is_recorded_with_its_kind_and_facts() {
        let record = HttpRecord::Anomaly(StreamAnomaly::ClosedBeforeResponse {
            stream: "#2 (POST)".into(),
            request_id: serde_json::json!(3),
            negotiated: Some(Revision::V2025_06_18),
        });
        assert_eq!(
            serde_json::to_value(&record).unwrap(),
            serde_json::json!({"kind": "anomaly", "anomaly": "closed_before_response",
                "stream": "#2 (POST)", "request_id": 3, "negotiated": "2025-06-18"})
        );
        assert_eq!(
            record.summary(),
            "SSE #2 (POST): the server closed the stream before the response to request 3"
        );
    }
}

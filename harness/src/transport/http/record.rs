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
        /// The HTTP method.
        method: String,
        /// The endpoint's URL.
        url: String,
        /// The headers sent (secrets redacted).
        request_headers: Vec<(String, String)>,
        /// The response status.
        status: u16,
        /// The headers received.
        response_headers: Vec<(String, String)>,
        /// The body (secrets redacted); `None` for an SSE stream or an empty body.
        #[serde(skip_serializing_if = "Option::is_none")]
        body: Option<String>,
    },
    /// One event of an SSE stream (its data, if a message, follows as a received frame).
    SseEvent {
        /// The stream's name in the transcript, e.g. `#3 (POST)`.
        stream: String,
        /// The event's `id` field (empty: none).
        #[serde(skip_serializing_if = "String::is_empty")]
        id: String,
        /// The event type (`message` unless the server named another).
        event: String,
        /// The event's `retry` field, in milliseconds.
        #[serde(skip_serializing_if = "Option::is_none")]
        retry_ms: Option<u64>,
        /// Size of the event's data, in bytes.
        data_bytes: usize,
        /// The data, for raw scenario exchanges (the transport's messages are frames).
        #[serde(skip_serializing_if = "Option::is_none")]
        data: Option<String>,
    },
    /// An SSE stream ended (or broke).
    StreamEnd {
        /// The stream's name in the transcript.
        stream: String,
        /// Why it ended, in words.
        reason: String,
    },
    /// mcpcheck reconnects to a stream that ended before its response: a GET with
    /// `Last-Event-ID` after `wait_ms` (the server's `retry`, else the default).
    Resume {
        /// The stream resumed.
        stream: String,
        /// The id sent as `Last-Event-ID`.
        last_event_id: String,
        /// Which resumption this is, from 1.
        attempt: u32,
        /// How long mcpcheck waited before the GET, in milliseconds.
        wait_ms: u64,
    },
    /// Something the server did on a stream that may break a transport rule; the session
    /// judges it (the transport judges nothing).
    Anomaly(StreamAnomaly),
    /// A request that got no HTTP response at all.
    Failed {
        /// The HTTP method.
        method: String,
        /// The endpoint's URL.
        url: String,
        /// Why there was no response (connection, TLS or timeout error; secrets redacted).
        error: String,
        /// Whether the TLS handshake failed, told by the error's types where it was made
        /// ([`is_tls_failure`](super::diagnose::is_tls_failure)), never by its message.
        /// Not in the report: `error` says it in words.
        #[serde(skip)]
        tls: bool,
    },
    /// Something in a response that is not a JSON-RPC message where one belongs.
    Invalid {
        /// Where: which response or stream.
        context: String,
        /// What is wrong with it.
        problem: String,
    },
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
            HttpRecord::Anomaly(
                a @ (StreamAnomaly::ErrorStatus { .. } | StreamAnomaly::WrongContentType { .. }),
            ) => format!("HTTP {a}"),
            HttpRecord::Anomaly(a) => format!("SSE {a}"),
            HttpRecord::Failed {
                method, url, error, ..
            } => {
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
    DuplicateEventId {
        /// The stream's name in the transcript.
        stream: String,
        /// The event id delivered again.
        id: String,
    },
    /// After a resumption, the stream carried the response to a request it was not answering.
    ReplayFromOtherStream {
        /// The stream's name in the transcript.
        stream: String,
        /// The id of the response that belonged elsewhere.
        request_id: Value,
    },
    /// The server closed the stream before the response to `request_id` (a listen stream,
    /// or one mcpcheck closed, is never reported). `negotiated`: the session's revision, if
    /// known.
    ClosedBeforeResponse {
        /// The stream's name in the transcript.
        stream: String,
        /// The id of the request left unanswered.
        request_id: Value,
        /// The session's revision, if known.
        #[serde(skip_serializing_if = "Option::is_none")]
        negotiated: Option<Revision>,
    },
    /// An SSE stream whose response head lacks `X-Accel-Buffering: no`, which tells a
    /// reverse proxy not to hold its events back (reported for a session's first such
    /// stream only).
    SseBufferable {
        /// The stream's name in the transcript.
        stream: String,
    },
    /// A 2xx answer to a POST whose body is JSON-RPC but whose `Content-Type` is neither
    /// `application/json` nor `text/event-stream` (`""` when absent). Its messages were
    /// delivered all the same.
    WrongContentType {
        /// The header as sent.
        content_type: String,
    },
    /// A JSON-RPC error response and the HTTP status it came under (for one delivered as an
    /// SSE event, the stream's own status). Facts for the session: some codes carry a
    /// required status.
    ErrorStatus {
        /// The id of the request the error answers.
        request_id: Value,
        /// The JSON-RPC error code.
        code: i64,
        /// The HTTP status of the response (or of the stream) that carried it.
        status: u16,
        /// Whether it came as an event of an SSE stream.
        sse: bool,
    },
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
            StreamAnomaly::SseBufferable { stream } => write!(
                f,
                "{stream}: the stream's response has no `X-Accel-Buffering: no` header"
            ),
            StreamAnomaly::WrongContentType { content_type } => write!(
                f,
                "a JSON-RPC answer came with Content-Type {content_type:?}"
            ),
            StreamAnomaly::ErrorStatus {
                request_id,
                code,
                status,
                sse,
            } => write!(
                f,
                "error {code} answering request {request_id} came under HTTP {status}{}",
                if *sse { " (an SSE event)" } else { "" }
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

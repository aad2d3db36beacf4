//! Stream anomalies the HTTP transport reports, judged: each becomes a finding of the transport
//! rule it breaks, or nothing where the negotiated revision allows it.

use crate::check::rules;
use crate::outcome::Finding;
use crate::protocol::Revision;
use crate::protocol::codes::MISSING_REQUIRED_CLIENT_CAPABILITY;
use crate::transport::http::StreamAnomaly;

/// The finding `anomaly` amounts to in a session speaking `revision`, if any.
pub(super) fn finding(anomaly: &StreamAnomaly, revision: Revision) -> Option<Finding> {
    match anomaly {
        // "replay messages that would have been sent after the last event ID"
        // (basic/transports#resumability-and-redelivery).
        StreamAnomaly::DuplicateEventId { stream, id } => Some(Finding::new(
            &rules::HTTP_SSE_EVENT_ID_UNIQUE,
            revision,
            format!(
                "after resuming stream {stream} with Last-Event-ID, the server replayed event {id:?}, which it had delivered before"
            ),
        )),
        // "MUST NOT replay messages that would have been delivered on a different stream".
        StreamAnomaly::ReplayFromOtherStream { stream, request_id } => Some(Finding::new(
            &rules::HTTP_SSE_REPLAY_SAME_STREAM,
            revision,
            format!(
                "after resuming stream {stream} with Last-Event-ID, the server sent the response to request {request_id}, which was not sent on that stream"
            ),
        )),
        // Before 2025-11-25, "the server SHOULD NOT close the SSE stream before sending a
        // JSON-RPC response" (basic/transports#sending-messages-to-the-server); 2025-11-25
        // lets it close the connection after an event id, for the client to poll. An
        // unknown negotiated revision is judged by the handshake checks, not here.
        StreamAnomaly::ClosedBeforeResponse {
            stream,
            request_id,
            negotiated: Some(negotiated),
        } if *negotiated < Revision::V2025_11_25 => Some(Finding::new(
            &rules::HTTP_SSE_CLOSED_BEFORE_RESPONSE,
            revision,
            format!(
                "the server closed SSE stream {stream} before sending the response to request {request_id}; in {negotiated} it SHOULD NOT (polling a closed stream came in 2025-11-25)"
            ),
        )),
        StreamAnomaly::ClosedBeforeResponse { .. } => None,
        // 2026-07-28 basic#meta: a MissingRequiredClientCapabilityError "On HTTP, the
        // response status MUST be 400 Bad Request" (an SSE event comes under the stream's
        // 200). Other codes' statuses are judged by the scenarios that provoke them.
        StreamAnomaly::ErrorStatus {
            request_id,
            code: MISSING_REQUIRED_CLIENT_CAPABILITY,
            status,
            sse,
        } if !revision.has_handshake() && *status != 400 => Some(
            Finding::new(
                &rules::STATELESS_MISSING_CAPABILITY_ERROR,
                revision,
                format!(
                    "MissingRequiredClientCapabilityError (-32021) answering request {request_id} came under HTTP {status}{}",
                    if *sse { ", as an event of an SSE stream" } else { "" }
                ),
            )
            .expected("HTTP 400 Bad Request"),
        ),
        StreamAnomaly::ErrorStatus { .. } => None,
        // 2026-07-28 basic/transports/streamable-http#receiving-messages: "When initiating an
        // SSE stream, servers SHOULD include the X-Accel-Buffering: no header in the HTTP
        // response" (earlier revisions do not ask for it).
        StreamAnomaly::SseBufferable { stream } if !revision.has_handshake() => Some(
            Finding::new(
                &rules::HTTP_SSE_UNBUFFERED,
                revision,
                format!("SSE stream {stream} came without an `X-Accel-Buffering: no` header, so a reverse proxy may hold its events back"),
            )
            .expected("X-Accel-Buffering: no"),
        ),
        StreamAnomaly::SseBufferable { .. } => None,
        // "If the input is a JSON-RPC request, the server MUST either return Content-Type:
        // text/event-stream ... or Content-Type: application/json" (basic/transports).
        StreamAnomaly::WrongContentType { content_type } => Some(
            Finding::new(
                &rules::HTTP_RESPONSE_CONTENT_TYPE,
                revision,
                format!(
                    "the server answered a POSTed request with a JSON-RPC body under `Content-Type: {content_type}`{}",
                    if content_type.is_empty() { " (no Content-Type header)" } else { "" }
                ),
            )
            .expected("Content-Type: application/json (or text/event-stream for an SSE stream)"),
        ),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn closed(negotiated: Option<Revision>) -> StreamAnomaly {
        StreamAnomaly::ClosedBeforeResponse {
            stream: "#1 (POST)".into(),
            request_id: serde_json::json!(2),
            negotiated,
        }
    }

    #[test]
    fn an_sse_stream_without_the_buffering_header_is_a_2026_warning_only() {
        let a = StreamAnomaly::SseBufferable {
            stream: "#2 (POST)".into(),
        };
        let f = finding(&a, Revision::V2026_07_28).expect("a 2026-07-28 finding");
        assert_eq!(f.rule, rules::HTTP_SSE_UNBUFFERED.id);
        assert_eq!(f.severity, crate::outcome::Severity::Warning);
        assert!(finding(&a, Revision::V2025_11_25).is_none());
    }

    #[test]
    fn a_missing_capability_error_must_come_under_400() {
        let under = |code, status, sse| StreamAnomaly::ErrorStatus {
            request_id: serde_json::json!(3),
            code,
            status,
            sse,
        };
        let r5 = Revision::V2026_07_28;
        assert!(finding(&under(-32021, 400, false), r5).is_none());
        let f = finding(&under(-32021, 200, true), r5).expect("a MUST");
        assert_eq!(f.rule, rules::STATELESS_MISSING_CAPABILITY_ERROR.id);
        assert!(f.message.contains("HTTP 200, as an event"), "{}", f.message);
        assert!(finding(&under(-32021, 200, false), Revision::V2025_11_25).is_none());
        assert!(finding(&under(-32601, 200, false), r5).is_none());
    }

    #[test]
    fn a_mislabelled_json_answer_is_a_failure_quoting_the_header() {
        let wrong = StreamAnomaly::WrongContentType {
            content_type: "text/plain; charset=utf-8".into(),
        };
        let f = finding(&wrong, Revision::V2025_06_18).expect("a MUST");
        assert_eq!(f.rule, rules::HTTP_RESPONSE_CONTENT_TYPE.id);
        assert_eq!(f.severity, crate::outcome::Severity::Failure);
        assert!(
            f.message
                .contains("`Content-Type: text/plain; charset=utf-8`"),
            "{}",
            f.message
        );
    }

    #[test]
    fn an_early_close_is_a_warning_only_before_2025_11_25() {
        let f = finding(&closed(Some(Revision::V2025_06_18)), Revision::V2025_06_18).unwrap();
        assert_eq!(f.rule, rules::HTTP_SSE_CLOSED_BEFORE_RESPONSE.id);
        assert!(
            f.message.contains("in 2025-06-18 it SHOULD NOT"),
            "{}",
            f.message
        );
        assert!(finding(&closed(Some(Revision::V2025_11_25)), Revision::V2025_11_25).is_none());
        assert!(finding(&closed(None), Revision::V2025_06_18).is_none());
    }

    #[test]
    fn a_replay_after_resumption_is_a_failure() {
        let dup = StreamAnomaly::DuplicateEventId {
            stream: "#1 (POST)".into(),
            id: "7".into(),
        };
        let f = finding(&dup, Revision::V2025_11_25).unwrap();
        assert_eq!(f.rule, rules::HTTP_SSE_EVENT_ID_UNIQUE.id);
        let other = StreamAnomaly::ReplayFromOtherStream {
            stream: "#1 (POST)".into(),
            request_id: serde_json::json!("a"),
        };
        let f = finding(&other, Revision::V2025_11_25).unwrap();
        assert_eq!(f.rule, rules::HTTP_SSE_REPLAY_SAME_STREAM.id);
        assert!(f.message.contains("request \"a\""), "{}", f.message);
    }
}

//! Resuming a stream that ended before its response: GET with `Last-Event-ID` after the
//! server's `retry`, a bounded number of times within the request timeout.

use std::time::Duration;

use tokio::sync::mpsc;

use super::BODY_QUOTE;
use super::body::read_body;
use super::diagnose::{error_chain, is_tls_failure};
use super::handle::HttpHandle;
use super::headers::{header_of, record_headers};
use super::record::{HttpRecord, StreamAnomaly};
use super::sse_stream::{StreamTrack, read_sse, report};
use crate::transport::Inbound;

/// Reconnections of one stream before mcpcheck gives up on it.
pub const MAX_RESUMES: u32 = 5;
/// The wait before a reconnection when the server sent no `retry` (the SSE standard leaves
/// the default to the client).
pub const DEFAULT_RETRY: Duration = Duration::from_millis(500);
/// The longest `retry` honoured; a longer one ends the resumption.
const MAX_RETRY: Duration = Duration::from_secs(30);

/// Resumes a stream that ended before its response: GET with `Last-Event-ID` after the
/// server's `retry` (the client "MUST respect the retry field", 2025-11-25), at most
/// [`MAX_RESUMES`] times and not past `deadline`. Without an event id there is nothing to
/// resume from, and the session's own timeout reports the missing response.
pub(super) async fn resume(
    handle: &HttpHandle,
    stream: &str,
    tx: &mpsc::Sender<Inbound>,
    track: &mut StreamTrack,
    deadline: tokio::time::Instant,
) {
    // 2026-07-28: "Resumable SSE streams via Last-Event-ID are not supported."
    if !handle.resumable() {
        return;
    }
    while track.awaited.is_some() {
        let Some(last) = track.last_id.clone() else {
            return;
        };
        let end = |reason: String| HttpRecord::StreamEnd {
            stream: stream.to_owned(),
            reason,
        };
        if track.resumes >= MAX_RESUMES {
            let _ = tx
                .send(Inbound::Http(end(format!(
                    "mcpcheck gave up resuming after {MAX_RESUMES} reconnections without the response"
                ))))
                .await;
            return;
        }
        let wait = track.retry.unwrap_or(DEFAULT_RETRY);
        if wait > MAX_RETRY || tokio::time::Instant::now() + wait >= deadline {
            let _ = tx
                .send(Inbound::Http(end(format!(
                    "not resumed: a wait of {} ms would pass the request timeout",
                    wait.as_millis()
                ))))
                .await;
            return;
        }
        track.resumes += 1;
        let _ = tx
            .send(Inbound::Http(HttpRecord::Resume {
                stream: stream.to_owned(),
                last_event_id: last.clone(),
                attempt: track.resumes,
                wait_ms: wait.as_millis() as u64,
            }))
            .await;
        tokio::time::sleep(wait).await;
        let req = handle
            .request(reqwest::Method::GET, "text/event-stream")
            .header("last-event-id", last);
        let (client, request) = req.build_split();
        let Ok(request) = request else { return };
        let method = request.method().to_string();
        let url = request.url().to_string();
        let request_headers = record_headers(request.headers(), handle.options());
        let response = match tokio::time::timeout_at(deadline, client.execute(request)).await {
            Ok(Ok(r)) => r,
            Ok(Err(e)) => {
                let _ = tx
                    .send(Inbound::Http(HttpRecord::Failed {
                        method,
                        url,
                        error: handle.options().redact(&error_chain(&e)),
                        tls: is_tls_failure(&e),
                    }))
                    .await;
                continue;
            }
            Err(_) => {
                let _ = tx
                    .send(Inbound::Http(HttpRecord::Failed {
                        method,
                        url,
                        error: "no response headers before the request timeout".into(),
                        tls: false,
                    }))
                    .await;
                return;
            }
        };
        let status = response.status().as_u16();
        let response_headers = record_headers(response.headers(), handle.options());
        let sse = header_of(&response_headers, "content-type")
            .is_some_and(|ct| ct.to_ascii_lowercase().starts_with("text/event-stream"));
        if !sse || status != 200 {
            // 405: the server offers no stream to resume (allowed); anything else is
            // judged by the `http/*` scenarios.
            let body = read_body(response, BODY_QUOTE)
                .await
                .ok()
                .map(|b| handle.options().redact(&String::from_utf8_lossy(&b)))
                .filter(|b| !b.is_empty());
            let _ = tx
                .send(Inbound::Http(HttpRecord::Exchange {
                    method,
                    url,
                    request_headers,
                    status,
                    response_headers,
                    body,
                }))
                .await;
            return;
        }
        let _ = tx
            .send(Inbound::Http(HttpRecord::Exchange {
                method,
                url,
                request_headers,
                status,
                response_headers,
                body: None,
            }))
            .await;
        if tokio::time::timeout_at(
            deadline,
            read_sse(handle, response.bytes_stream(), stream, tx, track),
        )
        .await
        .is_err()
        {
            let _ = tx
                .send(Inbound::Http(end(
                    "mcpcheck stopped reading at the request timeout".into(),
                )))
                .await;
            return;
        }
    }
}

/// Reports a stream the server closed before the response it carries, with the revision
/// the connection negotiated (whether that is allowed depends on it; the session judges).
pub(super) async fn closed_before_response(
    handle: &HttpHandle,
    stream: &str,
    tx: &mpsc::Sender<Inbound>,
    track: &StreamTrack,
) {
    let Some(id) = &track.awaited else { return };
    let negotiated = handle.negotiated();
    let anomaly = StreamAnomaly::ClosedBeforeResponse {
        stream: stream.to_owned(),
        request_id: id.clone(),
        negotiated,
    };
    report(tx, anomaly).await;
}

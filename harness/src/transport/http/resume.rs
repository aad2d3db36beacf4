//! Resuming a stream that ended before its response: GET with `Last-Event-ID` after the
//! server's `retry`, a bounded number of times within the request timeout.

use std::time::Duration;

use tokio::sync::mpsc;

use super::BODY_QUOTE;
use super::body::read_body;
use super::diagnose::error_chain;
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
        let Some(wait) = next_wait(stream, tx, track, deadline).await else {
            return;
        };
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
        let reconnect = Reconnect {
            handle,
            stream,
            tx,
            deadline,
        };
        if !reconnect.once(track, last).await {
            return;
        }
    }
}

/// The wait before the next reconnection, or `None` when mcpcheck gives up on the stream
/// (recorded as its end): after [`MAX_RESUMES`] reconnections, or when the server's
/// `retry` is too long or would pass `deadline`.
async fn next_wait(
    stream: &str,
    tx: &mpsc::Sender<Inbound>,
    track: &StreamTrack,
    deadline: tokio::time::Instant,
) -> Option<Duration> {
    if track.resumes >= MAX_RESUMES {
        let reason = format!(
            "mcpcheck gave up resuming after {MAX_RESUMES} reconnections without the response"
        );
        let _ = tx.send(Inbound::Http(end(stream, reason))).await;
        return None;
    }
    let wait = track.retry.unwrap_or(DEFAULT_RETRY);
    if wait > MAX_RETRY || tokio::time::Instant::now() + wait >= deadline {
        let reason = format!(
            "not resumed: a wait of {} ms would pass the request timeout",
            wait.as_millis()
        );
        let _ = tx.send(Inbound::Http(end(stream, reason))).await;
        return None;
    }
    Some(wait)
}

/// The record of the end of a resumed `stream`.
fn end(stream: &str, reason: String) -> HttpRecord {
    HttpRecord::StreamEnd {
        stream: stream.to_owned(),
        reason,
    }
}

/// One stream's reconnections, each a GET with `Last-Event-ID`, none past `deadline`.
struct Reconnect<'a> {
    handle: &'a HttpHandle,
    stream: &'a str,
    tx: &'a mpsc::Sender<Inbound>,
    deadline: tokio::time::Instant,
}

impl Reconnect<'_> {
    /// Reconnects once after event `last` and reads what the new stream carries; `false`
    /// when there is nothing more to resume from (the server offers no stream, or the
    /// deadline passed).
    async fn once(&self, track: &mut StreamTrack, last: String) -> bool {
        let (outcome, record) = reconnect(self.handle, &last, self.deadline).await;
        let _ = self.tx.send(Inbound::Http(record)).await;
        let response = match outcome {
            Reconnection::Stream(response) => response,
            // 405: the server offers no stream to resume (allowed); anything else is
            // judged by the `http/*` scenarios.
            Reconnection::NoStream { .. } | Reconnection::TimedOut => return false,
            Reconnection::Failed(_) => return true,
        };
        let read = read_sse(
            self.handle,
            response.bytes_stream(),
            self.stream,
            self.tx,
            track,
        );
        if tokio::time::timeout_at(self.deadline, read).await.is_err() {
            let reason = "mcpcheck stopped reading at the request timeout".into();
            let _ = self.tx.send(Inbound::Http(end(self.stream, reason))).await;
            return false;
        }
        true
    }
}

/// What one reconnection with `Last-Event-ID` got.
#[derive(Debug)]
pub enum Reconnection {
    /// A new SSE stream (200, `text/event-stream`) to read on.
    Stream(reqwest::Response),
    /// An answer without a stream (405: the server offers none).
    NoStream {
        /// The HTTP status.
        status: u16,
        /// The content type, lower case (empty when there is none).
        content_type: String,
    },
    /// No HTTP response: why, secrets redacted.
    Failed(String),
    /// No response headers before the deadline.
    TimedOut,
}

/// Reconnects once after event `last` (GET with `Last-Event-ID`), not past `deadline`:
/// what it got, and the record of the exchange for the transcript (a refusal's body
/// quoted up to a bound). The transport's resumption and the `http` step's both use it.
pub async fn reconnect(
    handle: &HttpHandle,
    last: &str,
    deadline: tokio::time::Instant,
) -> (Reconnection, HttpRecord) {
    let req = handle
        .request(reqwest::Method::GET, "text/event-stream")
        .header("last-event-id", last);
    let (_, request) = req.build_split();
    let request = match request {
        Ok(r) => r,
        Err(e) => {
            let error = handle.options().redact(&error_chain(&e));
            let record = HttpRecord::Failed {
                method: "GET".into(),
                url: handle.options().url.to_string(),
                error: error.clone(),
                tls: false,
            };
            return (Reconnection::Failed(error), record);
        }
    };
    let method = request.method().to_string();
    let url = request.url().to_string();
    let request_headers = record_headers(request.headers(), handle.options());
    let failed = |error: String, tls| HttpRecord::Failed {
        method: method.clone(),
        url: url.clone(),
        error,
        tls,
    };
    let sent = handle.client().execute(request);
    let response = match tokio::time::timeout_at(deadline, sent).await {
        Ok(Ok(r)) => r,
        Ok(Err(e)) => {
            let error = handle.options().redact(&error_chain(&e));
            let record = failed(error.clone(), e.is_tls_failure());
            return (Reconnection::Failed(error), record);
        }
        Err(_) => {
            let error = "no response headers before the request timeout".into();
            return (Reconnection::TimedOut, failed(error, false));
        }
    };
    let status = response.status().as_u16();
    let response_headers = record_headers(response.headers(), handle.options());
    let content_type = header_of(&response_headers, "content-type")
        .unwrap_or("")
        .to_ascii_lowercase();
    let exchange = |body| HttpRecord::Exchange {
        method,
        url,
        request_headers,
        status,
        response_headers,
        body,
    };
    if status == 200 && content_type.starts_with("text/event-stream") {
        return (Reconnection::Stream(response), exchange(None));
    }
    let body = tokio::time::timeout_at(deadline, read_body(response, BODY_QUOTE))
        .await
        .ok()
        .and_then(Result::ok)
        .map(|b| handle.options().redact(&String::from_utf8_lossy(&b)))
        .filter(|b| !b.is_empty());
    let outcome = Reconnection::NoStream {
        status,
        content_type,
    };
    (outcome, exchange(body))
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

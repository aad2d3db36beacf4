//! Sending the `http` step's request and reading the answer into an [`HttpReply`]: a plain
//! body (bounded by the frame limit and the step's `within`), or an SSE stream read by
//! [`super::sse`] and resumed with GET and `Last-Event-ID` when the step dropped it or
//! the server closed it before the awaited response. Every exchange goes to the transcript.

use futures_util::StreamExt;
use serde_json::Value;

use super::sse::read_events;
use super::{HttpReply, SseAcc, SseEnd};
use crate::scenario::model::http::HttpStep;
use crate::session::{RawHttp, Session};
use crate::transport::http::{DEFAULT_RETRY, HttpRecord, MAX_RESUMES, Reconnection, reconnect};

/// Sends `request` and reads the answer within the step's `within`; `Err` is a request
/// that got no HTTP response (already recorded in the transcript).
pub(super) async fn exchange(
    handle: &RawHttp,
    request: reqwest::Request,
    step: &HttpStep,
    session: &mut Session,
) -> Result<HttpReply, String> {
    let deadline = tokio::time::Instant::now() + step.within;
    let method = request.method().to_string();
    let url = request.url().to_string();
    let request_headers = handle.record_headers(request.headers());
    let sent_body = request
        .body()
        .and_then(|b| b.as_bytes())
        .map(|b| String::from_utf8_lossy(b).into_owned());
    if let Some(b) = sent_body {
        session.record_sent(b);
    }
    let response = match tokio::time::timeout_at(deadline, handle.execute(request)).await {
        Ok(Ok(r)) => r,
        Ok(Err(e)) => {
            let error = e.describe(handle);
            session.record_http(HttpRecord::Failed {
                method,
                url,
                error: error.clone(),
                tls: e.is_tls(),
            });
            return Err(error);
        }
        Err(_) => {
            let error = format!("no response headers within {:?}", step.within);
            session.record_http(HttpRecord::Failed {
                method,
                url,
                error: error.clone(),
                tls: false,
            });
            return Err(error);
        }
    };
    answer(
        handle,
        response,
        step,
        session,
        (method, url, request_headers),
        deadline,
    )
    .await
}

/// What was sent: the method, the URL and the recorded request headers.
type Sent = (String, String, Vec<(String, String)>);

/// Reads the answer to a request already sent until the step's `deadline`, resuming an
/// SSE stream as the spec asks.
pub(super) async fn answer(
    handle: &RawHttp,
    response: reqwest::Response,
    step: &HttpStep,
    session: &mut Session,
    sent: Sent,
    deadline: tokio::time::Instant,
) -> Result<HttpReply, String> {
    let status = response.status().as_u16();
    let headers = response.headers().clone();
    let sse = headers
        .get(reqwest::header::CONTENT_TYPE)
        .and_then(|v| v.to_str().ok())
        .is_some_and(|v| v.to_ascii_lowercase().starts_with("text/event-stream"));
    if sse {
        let (messages, acc) = read_sse(handle, response, step, session, sent, deadline).await;
        return Ok(HttpReply {
            status,
            headers,
            body: Vec::new(),
            messages,
            sse: Some(acc),
        });
    }
    let (method, url, request_headers) = sent;
    let response_headers = handle.record_headers(&headers);
    let max = handle.options().max_frame;
    let (body, note) = read_body(response, step, deadline, max).await;
    let text = String::from_utf8_lossy(&body).into_owned();
    session.record_http(HttpRecord::Exchange {
        method: method.clone(),
        url,
        request_headers,
        status,
        response_headers,
        body: (!text.is_empty()).then(|| handle.options().redact(&text)),
    });
    if let Some(problem) = note {
        session.record_http(HttpRecord::Invalid {
            context: format!("raw {method} response"),
            problem,
        });
    }
    let mut messages = Vec::new();
    if let Ok(v) = serde_json::from_str::<Value>(text.trim()) {
        match v {
            Value::Array(items) => messages.extend(items),
            v => messages.push(v),
        }
    }
    Ok(HttpReply {
        status,
        headers,
        body,
        messages,
        sse: None,
    })
}

/// A plain body, up to `max` bytes and the `deadline`, with a note when it did not end
/// well (cut off, too long, a read error).
async fn read_body(
    response: reqwest::Response,
    step: &HttpStep,
    deadline: tokio::time::Instant,
    max: usize,
) -> (Vec<u8>, Option<String>) {
    let mut body = Vec::new();
    let mut stream = response.bytes_stream();
    loop {
        match tokio::time::timeout_at(deadline, stream.next()).await {
            Err(_) => {
                let note = format!("the body did not end within {:?}", step.within);
                return (body, Some(note));
            }
            Ok(None) => return (body, None),
            Ok(Some(Err(e))) => {
                let note = format!(
                    "reading the body failed: {}",
                    crate::transport::http::error_chain(&e)
                );
                return (body, Some(note));
            }
            Ok(Some(Ok(chunk))) => {
                body.extend_from_slice(&chunk);
                if body.len() > max {
                    return (body, Some(format!("the body exceeded {max} bytes")));
                }
            }
        }
    }
}

/// An SSE answer: its events read, and the stream resumed with GET and `Last-Event-ID`
/// when the step dropped it or the server closed it before the awaited response.
async fn read_sse(
    handle: &RawHttp,
    response: reqwest::Response,
    step: &HttpStep,
    session: &mut Session,
    sent: Sent,
    deadline: tokio::time::Instant,
) -> (Vec<Value>, SseAcc) {
    let (method, url, request_headers) = sent;
    session.record_http(HttpRecord::Exchange {
        method: method.clone(),
        url,
        request_headers,
        status: response.status().as_u16(),
        response_headers: handle.record_headers(response.headers()),
        body: None,
    });
    let wanted = step.expect.response.as_ref().map(|(id, _)| id.clone());
    let mut acc = SseAcc {
        check_unique: step.expect.unique_event_ids,
        ..SseAcc::default()
    };
    // A GET's stream may never end: when the step judges only the head, read no further.
    // (A POST's stream is read on: at 2026-07-28 closing it would cancel the request.)
    if step.method.eq_ignore_ascii_case("GET") && !step.expect.reads_stream() && !step.resume {
        session.record_event(format!(
            "mcpcheck closed the {method} stream: the step judges only the response head"
        ));
        return (Vec::new(), acc);
    }
    let mut messages = Vec::new();
    let stream_name = format!("raw {method} #{}", session.transcript().entries().len());
    let mut end = read_events(
        session,
        handle,
        response,
        &stream_name,
        deadline,
        wanted.as_ref(),
        step.resume,
        &mut messages,
        &mut acc,
    )
    .await;
    // Resume a stream the step dropped, or one the server closed before the response
    // (2025-11-25: the client "SHOULD then poll" and "MUST respect the retry field").
    note_early_close(&end, wanted.is_some(), &mut acc);
    while (end == SseEnd::Dropped || (end == SseEnd::Closed && wanted.is_some()))
        && acc.resumes < MAX_RESUMES
        && handle.resumable()
    {
        let Some(last) = acc.last_id.clone() else {
            break;
        };
        let wait = acc.retry.unwrap_or(DEFAULT_RETRY);
        if tokio::time::Instant::now() + wait >= deadline {
            break;
        }
        acc.resumes += 1;
        session.record_http(HttpRecord::Resume {
            stream: stream_name.clone(),
            last_event_id: last.clone(),
            attempt: acc.resumes,
            wait_ms: wait.as_millis() as u64,
        });
        tokio::time::sleep(wait).await;
        let Some(response) = resume(handle, session, &last, deadline, &mut acc).await else {
            break;
        };
        end = read_events(
            session,
            handle,
            response,
            &stream_name,
            deadline,
            wanted.as_ref(),
            false,
            &mut messages,
            &mut acc,
        )
        .await;
        note_early_close(&end, wanted.is_some(), &mut acc);
    }
    (messages, acc)
}

/// One resumption GET with `Last-Event-ID: last`: the SSE stream it opened, or `None`
/// when it got none (recorded, and judged in `acc` when the answer breaks a rule).
async fn resume(
    handle: &RawHttp,
    session: &mut Session,
    last: &str,
    deadline: tokio::time::Instant,
    acc: &mut SseAcc,
) -> Option<reqwest::Response> {
    let (outcome, record) = reconnect(handle, last, deadline).await;
    session.record_http(record);
    match outcome {
        Reconnection::Stream(response) => Some(response),
        Reconnection::NoStream {
            status,
            content_type,
        } => {
            if status != 405 {
                acc.problems.push(format!(
                    "the GET with Last-Event-ID {last:?} was answered with {status} ({content_type:?}); a GET MUST get text/event-stream or 405 (basic/transports#listening-for-messages-from-the-server)"
                ));
            }
            acc.refused = Some((status, content_type));
            None
        }
        Reconnection::Failed(error) => {
            acc.problems.push(format!(
                "resuming with GET and Last-Event-ID {last:?} got no HTTP response: {error}"
            ));
            None
        }
        Reconnection::TimedOut => None,
    }
}

/// Notes a connection the server closed before the awaited response, and whether a `retry`
/// field came before (2025-11-25: "it SHOULD send an SSE event with a standard retry field
/// before closing the connection").
fn note_early_close(end: &SseEnd, awaiting: bool, acc: &mut SseAcc) {
    if *end == SseEnd::Closed && awaiting {
        acc.closed_early = true;
        if acc.retry.is_none() {
            acc.closed_without_retry = true;
        }
    }
}

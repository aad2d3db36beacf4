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
use crate::transport::http::{DEFAULT_RETRY, HttpRecord, MAX_RESUMES};

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

/// Reads the answer to a request already sent (`sent`: its method, URL and recorded
/// headers) until the step's `deadline`, resuming an SSE stream as the spec asks.
#[expect(
    clippy::too_many_lines,
    reason = "split pending in session/scenario rewrite"
)]
pub(super) async fn answer(
    handle: &RawHttp,
    response: reqwest::Response,
    step: &HttpStep,
    session: &mut Session,
    sent: (String, String, Vec<(String, String)>),
    deadline: tokio::time::Instant,
) -> Result<HttpReply, String> {
    let (method, url, request_headers) = sent;
    let status = response.status().as_u16();
    let headers = response.headers().clone();
    let response_headers = handle.record_headers(&headers);
    let sse = headers
        .get(reqwest::header::CONTENT_TYPE)
        .and_then(|v| v.to_str().ok())
        .is_some_and(|v| v.to_ascii_lowercase().starts_with("text/event-stream"));
    let max = handle.options().max_frame;
    let mut body = Vec::new();
    let mut messages = Vec::new();
    let mut sse_acc = None;
    if sse {
        session.record_http(HttpRecord::Exchange {
            method: method.clone(),
            url,
            request_headers,
            status,
            response_headers,
            body: None,
        });
        let wanted = step.expect.response.as_ref().map(|(id, _)| id.clone());
        let mut acc = SseAcc {
            check_unique: step.expect.unique_event_ids,
            ..SseAcc::default()
        };
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
            let request = match handle
                .request(reqwest::Method::GET, "text/event-stream")
                .header("last-event-id", &last)
                .build()
            {
                Ok(r) => r,
                Err(e) => return Err(format!("building the resumption GET: {e}")),
            };
            let url = request.url().to_string();
            let request_headers = handle.record_headers(request.headers());
            let response = match tokio::time::timeout_at(deadline, handle.execute(request)).await {
                Ok(Ok(r)) => r,
                Ok(Err(e)) => {
                    let error = e.describe(handle);
                    session.record_http(HttpRecord::Failed {
                        method: "GET".into(),
                        url,
                        error: error.clone(),
                        tls: e.is_tls(),
                    });
                    acc.problems.push(format!(
                        "resuming with GET and Last-Event-ID {last:?} got no HTTP response: {error}"
                    ));
                    break;
                }
                Err(_) => break,
            };
            let status = response.status().as_u16();
            let headers = response.headers().clone();
            let response_headers = handle.record_headers(&headers);
            let ct = headers
                .get(reqwest::header::CONTENT_TYPE)
                .and_then(|v| v.to_str().ok())
                .unwrap_or("")
                .to_ascii_lowercase();
            if status != 200 || !ct.starts_with("text/event-stream") {
                let body = tokio::time::timeout_at(deadline, response.bytes())
                    .await
                    .ok()
                    .and_then(Result::ok)
                    .map(|b| String::from_utf8_lossy(&b).into_owned())
                    .filter(|b| !b.is_empty());
                session.record_http(HttpRecord::Exchange {
                    method: "GET".into(),
                    url,
                    request_headers,
                    status,
                    response_headers,
                    body: body.map(|b| handle.options().redact(&b)),
                });
                if status != 405 {
                    acc.problems.push(format!(
                        "the GET with Last-Event-ID {last:?} was answered with {status} ({ct:?}); a GET MUST get text/event-stream or 405 (basic/transports#listening-for-messages-from-the-server)"
                    ));
                }
                acc.refused = Some((status, ct));
                break;
            }
            session.record_http(HttpRecord::Exchange {
                method: "GET".into(),
                url,
                request_headers,
                status,
                response_headers,
                body: None,
            });
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
        sse_acc = Some(acc);
    } else {
        let mut stream = response.bytes_stream();
        let mut note = None;
        loop {
            match tokio::time::timeout_at(deadline, stream.next()).await {
                Err(_) => {
                    note = Some(format!("the body did not end within {:?}", step.within));
                    break;
                }
                Ok(None) => break,
                Ok(Some(Err(e))) => {
                    note = Some(format!(
                        "reading the body failed: {}",
                        crate::transport::http::error_chain(&e)
                    ));
                    break;
                }
                Ok(Some(Ok(chunk))) => {
                    body.extend_from_slice(&chunk);
                    if body.len() > max {
                        note = Some(format!("the body exceeded {max} bytes"));
                        break;
                    }
                }
            }
        }
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
        if let Ok(v) = serde_json::from_str::<Value>(text.trim()) {
            match v {
                Value::Array(items) => messages.extend(items),
                v => messages.push(v),
            }
        }
    }
    Ok(HttpReply {
        status,
        headers,
        body,
        messages,
        sse: sse_acc,
    })
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

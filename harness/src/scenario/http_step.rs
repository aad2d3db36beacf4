//! The `http` step: one raw HTTP exchange with the server's MCP endpoint, outside the
//! transport's own rules, to test the Streamable HTTP transport itself (spec:
//! `basic/transports#streamable-http`): a request without the session id, with a foreign
//! `Origin`, with a bad `MCP-Protocol-Version`, a GET or DELETE; then checks on the status,
//! headers, body, and the JSON-RPC response in a JSON body or an SSE stream.
//!
//! SSE answers follow the resumability rules (basic/transports#resumability-and-redelivery,
//! 2025-03-26 on): event ids must be new in the session; a stream the server closes before
//! the awaited response is polled with GET and `Last-Event-ID` after its `retry`; with
//! `resume: true` the step itself drops the connection after the first event id and resumes,
//! and checks that the replay repeats nothing and carries nothing of another stream.

use std::time::Duration;

use futures_util::StreamExt;
use reqwest::header::{HeaderName, HeaderValue};
use serde_json::Value;

use super::model::http::{HeaderChoice, HttpStep};
use crate::session::Session;
use crate::transport::http::{
    DEFAULT_RETRY, HttpHandle, HttpRecord, MAX_RESUMES, POST_ACCEPT, SESSION_HEADER,
    VERSION_HEADER, error_chain,
};
use crate::transport::sse_reader::SseReader;

/// Why an `http` step stopped the scenario.
#[derive(Debug)]
pub enum HttpStop {
    /// The step does not apply to this server, and why.
    Skip(String),
    /// A problem in the step or the harness.
    Error(String),
}

/// What the exchange returned, for the checks.
struct Answer {
    status: u16,
    headers: reqwest::header::HeaderMap,
    body: Vec<u8>,
    messages: Vec<Value>,
    /// What the SSE stream (if any) showed of resumability.
    sse: Option<SseAcc>,
}

/// An SSE answer across its connections (the first, then GETs with `Last-Event-ID`).
#[derive(Debug, Default)]
struct SseAcc {
    /// Event ids received, in order, each once.
    ids: Vec<String>,
    last_id: Option<String>,
    retry: Option<Duration>,
    /// Broken resumability rules.
    problems: Vec<String>,
    /// The step dropped the connection after an event id, to resume.
    disconnected: bool,
    /// Reconnections made.
    resumes: u32,
    /// Status and content type of the last resumption GET that got no SSE stream.
    refused: Option<(u16, String)>,
    /// Check each id against the other streams of the session (`event_ids: unique`).
    check_unique: bool,
}

/// How reading one SSE connection ended.
#[derive(Debug, PartialEq)]
enum SseEnd {
    /// The awaited response arrived.
    Answered,
    /// The server closed the stream.
    Closed,
    /// The step dropped the connection to resume (`resume: true`).
    Dropped,
    /// Broken stream or the step's time ran out.
    Stopped,
}

/// Runs the exchange and returns the broken expectations (empty: all held).
pub async fn run(
    step: &HttpStep,
    body: Option<Value>,
    session: &mut Session,
) -> Result<Vec<String>, HttpStop> {
    // The step speaks Streamable HTTP; over stdio or the 2024-11-05 HTTP+SSE transport
    // it does not apply.
    let Some(handle) = session.http() else {
        return Err(HttpStop::Skip(format!(
            "the `http` step needs a Streamable HTTP endpoint; this run uses {}",
            session.describe_server()
        )));
    };
    let current_session = handle.session_id();
    if step.session == HeaderChoice::Omit && current_session.is_none() && handle.initialized() {
        return Err(HttpStop::Skip(
            "the server issued no session id, so none can be left out".into(),
        ));
    }
    let request = build(step, body, &handle, current_session)?;
    let answer = exchange(&handle, request, step, session).await;
    let answer = match answer {
        Ok(a) => a,
        Err(e) => {
            return Ok(vec![format!(
                "the {} got no HTTP response: {e}",
                step.method
            )]);
        }
    };
    if step.expect.skip_on_status.contains(&answer.status) {
        return Err(HttpStop::Skip(format!(
            "the server answered the {} with {}",
            step.method, answer.status
        )));
    }
    resumability(step, &answer)?;
    let mut problems = answer
        .sse
        .as_ref()
        .map(|s| s.problems.clone())
        .unwrap_or_default();
    problems.extend(check(step, &answer));
    Ok(problems)
}

/// Skips a step whose resumability expectations the server gives nothing to check:
/// no SSE stream, no event ids, no resumption offered (405, allowed), no replay (a MAY).
/// A broken rule is never skipped.
fn resumability(step: &HttpStep, a: &Answer) -> Result<(), HttpStop> {
    if !step.resume && !step.expect.unique_event_ids {
        return Ok(());
    }
    let ct = a
        .headers
        .get(reqwest::header::CONTENT_TYPE)
        .and_then(|v| v.to_str().ok())
        .unwrap_or("-");
    let Some(sse) = &a.sse else {
        return Err(HttpStop::Skip(format!(
            "the server answered the {} with {} ({ct}), not an SSE stream: no event ids to check",
            step.method, a.status
        )));
    };
    if !sse.problems.is_empty() {
        return Ok(());
    }
    if sse.ids.is_empty() {
        return Err(HttpStop::Skip(
            "the server's SSE stream carried no event ids (ids are a MAY): not resumable".into(),
        ));
    }
    if !step.resume {
        return Ok(());
    }
    if !sse.disconnected {
        return Err(HttpStop::Skip(
            "the response came in the stream's first event with an id: nothing was left to resume"
                .into(),
        ));
    }
    match &sse.refused {
        Some((405, _)) => Err(HttpStop::Skip(
            "the server answered the GET with Last-Event-ID with 405: it offers no resumption (allowed)".into(),
        )),
        // "The server MUST either return Content-Type: text/event-stream in response to
        // this HTTP GET, or else return HTTP 405 Method Not Allowed."
        Some(_) => Ok(()),
        None => {
            let answered = step.expect.response.as_ref().is_none_or(|(id, _)| {
                a.messages.iter().any(|m| {
                    m.get("id") == Some(id) && (m.get("result").is_some() || m.get("error").is_some())
                })
            });
            if answered {
                Ok(())
            } else {
                Err(HttpStop::Skip(format!(
                    "the server accepted the GET with Last-Event-ID but replayed nothing of the stream within {:?} (replay is a MAY)",
                    step.within
                )))
            }
        }
    }
}

fn build(
    step: &HttpStep,
    body: Option<Value>,
    handle: &HttpHandle,
    session_id: Option<String>,
) -> Result<reqwest::Request, HttpStop> {
    let method = reqwest::Method::from_bytes(step.method.as_bytes())
        .map_err(|_| HttpStop::Error(format!("`{}` is not an HTTP method", step.method)))?;
    let options = handle.options();
    let accept = if method == reqwest::Method::GET {
        "text/event-stream"
    } else {
        POST_ACCEPT
    };
    let mut req = handle
        .client()
        .request(method, options.url.clone())
        .header(reqwest::header::ACCEPT, accept);
    for (k, v) in &options.headers {
        req = req.header(k, v);
    }
    let mut request = req
        .build()
        .map_err(|e| HttpStop::Error(format!("building the request: {e}")))?;
    let headers = request.headers_mut();
    let mut set = |name: &str, value: &str| -> Result<(), HttpStop> {
        let n = HeaderName::from_bytes(name.as_bytes())
            .map_err(|_| HttpStop::Error(format!("`{name}` is not a header name")))?;
        let v = HeaderValue::from_str(value)
            .map_err(|_| HttpStop::Error(format!("`{value}` is not a header value")))?;
        headers.insert(n, v);
        Ok(())
    };
    match (&step.session, session_id) {
        (HeaderChoice::Current, Some(id)) => set(SESSION_HEADER, &id)?,
        (HeaderChoice::Value(v), _) => set(SESSION_HEADER, v)?,
        _ => {}
    }
    match (&step.protocol_version, handle.protocol_version_header()) {
        (HeaderChoice::Current, Some(v)) => set(VERSION_HEADER, &v)?,
        (HeaderChoice::Value(v), _) => set(VERSION_HEADER, v)?,
        _ => {}
    }
    if let Some(body) = &body {
        set("content-type", "application/json")?;
        let bytes = match body {
            Value::String(s) => s.clone().into_bytes(),
            other => other.to_string().into_bytes(),
        };
        *request.body_mut() = Some(bytes.into());
    }
    let headers = request.headers_mut();
    for (k, v) in &step.headers {
        let n = HeaderName::from_bytes(k.as_bytes())
            .map_err(|_| HttpStop::Error(format!("`{k}` is not a header name")))?;
        let v = HeaderValue::from_str(v)
            .map_err(|_| HttpStop::Error(format!("`{v}` is not a header value")))?;
        headers.insert(n, v);
    }
    Ok(request)
}

async fn exchange(
    handle: &HttpHandle,
    request: reqwest::Request,
    step: &HttpStep,
    session: &mut Session,
) -> Result<Answer, String> {
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
    let response = match tokio::time::timeout_at(deadline, handle.client().execute(request)).await {
        Ok(Ok(r)) => r,
        Ok(Err(e)) => {
            let error = handle.options().redact(&error_chain(&e));
            session.record_http(HttpRecord::Failed {
                method,
                url,
                error: error.clone(),
            });
            return Err(error);
        }
        Err(_) => {
            let error = format!("no response headers within {:?}", step.within);
            session.record_http(HttpRecord::Failed {
                method,
                url,
                error: error.clone(),
            });
            return Err(error);
        }
    };
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
            let response =
                match tokio::time::timeout_at(deadline, handle.client().execute(request)).await {
                    Ok(Ok(r)) => r,
                    Ok(Err(e)) => {
                        let error = handle.options().redact(&error_chain(&e));
                        session.record_http(HttpRecord::Failed {
                            method: "GET".into(),
                            url,
                            error: error.clone(),
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
                    note = Some(format!("reading the body failed: {}", error_chain(&e)));
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
    Ok(Answer {
        status,
        headers,
        body,
        messages,
        sse: sse_acc,
    })
}

/// Reads one SSE connection until the awaited response, its end, `deadline`, or (with
/// `drop_at_id`) the first new event id that is not the response. Checks each id against
/// the session's (basic/transports#resumability-and-redelivery: "globally unique across all
/// streams within that session") and, after a resumption, each message against what the
/// stream delivered before.
#[allow(clippy::too_many_arguments)]
async fn read_events(
    session: &mut Session,
    handle: &HttpHandle,
    response: reqwest::Response,
    stream: &str,
    deadline: tokio::time::Instant,
    wanted: Option<&Value>,
    drop_at_id: bool,
    messages: &mut Vec<Value>,
    acc: &mut SseAcc,
) -> SseEnd {
    let max = handle.options().max_frame;
    let resumed = acc.resumes > 0;
    let unique_ids = acc.check_unique;
    let mut events = SseReader::from_response(response, max);
    // The SSE last-event-id buffer persists: an event without an `id` field repeats the
    // previous id, which is no new id.
    let mut previous = String::new();
    let (end, reason) = loop {
        match tokio::time::timeout_at(deadline, events.next()).await {
            Err(_) => {
                break (
                    SseEnd::Stopped,
                    "mcpcheck stopped reading at the step's `within`".to_owned(),
                );
            }
            Ok(None) => break (SseEnd::Closed, "the server closed the stream".to_owned()),
            Ok(Some(Err(e))) => break (SseEnd::Stopped, format!("broken stream: {e}")),
            Ok(Some(Ok(ev))) => {
                session.record_http(HttpRecord::SseEvent {
                    stream: stream.to_owned(),
                    id: ev.id.clone(),
                    event: ev.event.clone(),
                    retry_ms: ev.retry.map(|d| d.as_millis() as u64),
                    data_bytes: ev.data.len(),
                    data: Some(handle.options().redact(&ev.data)),
                });
                if ev.retry.is_some() {
                    acc.retry = ev.retry;
                }
                let new_id = !ev.id.is_empty() && ev.id != previous;
                previous = ev.id.clone();
                if new_id {
                    if acc.ids.contains(&ev.id) {
                        acc.problems.push(format!(
                            "after resuming with Last-Event-ID, event {:?} was delivered again; a replay carries only the events after that id",
                            ev.id
                        ));
                    } else if let Some(first) = handle.note_event_id(&ev.id, stream)
                        && first != stream
                        && unique_ids
                    {
                        acc.problems.push(format!(
                            "event id {:?} was already used on another stream of this session ({first}); ids MUST be unique across the session's streams",
                            ev.id
                        ));
                    }
                    if !acc.ids.contains(&ev.id) {
                        acc.ids.push(ev.id.clone());
                    }
                    acc.last_id = Some(ev.id.clone());
                }
                let mut answered = false;
                if ev.event == "message"
                    && ev.data.len() <= max
                    && let Ok(v) = serde_json::from_str::<Value>(&ev.data)
                {
                    let is_response = v.get("result").is_some() || v.get("error").is_some();
                    let id = v.get("id").filter(|_| is_response);
                    answered = id.is_some() && id == wanted;
                    if resumed && messages.contains(&v) {
                        acc.problems.push(format!(
                            "after resuming with Last-Event-ID, a message the stream had delivered was sent again: {}",
                            crate::protocol::text::quote(&ev.data, 200)
                        ));
                    } else if resumed && let Some(id) = id.filter(|_| !answered) {
                        acc.problems.push(format!(
                            "after resuming with Last-Event-ID, the server sent the response to request {id}, which was not sent on this stream; it MUST NOT replay messages of another stream"
                        ));
                    }
                    messages.push(v);
                }
                if answered {
                    break (
                        SseEnd::Answered,
                        "mcpcheck had what it waited for".to_owned(),
                    );
                }
                if drop_at_id && new_id && !acc.disconnected {
                    acc.disconnected = true;
                    break (
                        SseEnd::Dropped,
                        format!(
                            "mcpcheck dropped the connection after event {:?}, to resume",
                            ev.id
                        ),
                    );
                }
            }
        }
    };
    session.record_http(HttpRecord::StreamEnd {
        stream: stream.to_owned(),
        reason,
    });
    end
}

fn check(step: &HttpStep, a: &Answer) -> Vec<String> {
    let e = &step.expect;
    let mut problems = Vec::new();
    let what = &step.method;
    if !e.status.is_empty() && !e.status.iter().any(|s| s.matches(a.status)) {
        let want = e
            .status
            .iter()
            .map(|s| s.to_string())
            .collect::<Vec<_>>()
            .join(" or ");
        problems.push(format!(
            "the {what} was answered with HTTP {}; expected {want}",
            a.status
        ));
    }
    if e.empty_body && !a.body.is_empty() {
        problems.push(format!(
            "the {what} was answered with a {}-byte body; expected none: {}",
            a.body.len(),
            crate::session::quote(&String::from_utf8_lossy(&a.body), 200)
        ));
    }
    let ct = a
        .headers
        .get(reqwest::header::CONTENT_TYPE)
        .and_then(|v| v.to_str().ok())
        .unwrap_or("")
        .to_ascii_lowercase();
    if (200..300).contains(&a.status)
        && !e.content_type.is_empty()
        && !e.content_type.iter().any(|t| ct.starts_with(t.as_str()))
    {
        problems.push(format!(
            "the {what} was answered with content type {ct:?}; expected {}",
            e.content_type.join(" or ")
        ));
    }
    let required = e.headers.iter().map(|h| (h, true));
    let optional = e.headers_if_present.iter().map(|h| (h, false));
    for ((name, re), required) in required.chain(optional) {
        match a.headers.get(name.as_str()).map(|v| v.to_str()) {
            None if !required => {}
            None => problems.push(format!("the response to the {what} has no `{name}` header")),
            Some(Err(_)) => problems.push(format!(
                "the `{name}` header of the response is not visible ASCII"
            )),
            Some(Ok(v)) if !re.0.is_match(v) => problems.push(format!(
                "the `{name}` header {v:?} does not match /{}/",
                re.0.as_str()
            )),
            Some(Ok(_)) => {}
        }
    }
    if let Some((id, error)) = &e.response {
        let found = a.messages.iter().find(|m| {
            m.get("id") == Some(id) && (m.get("result").is_some() || m.get("error").is_some())
        });
        match (found, error) {
            (None, _) => {
                let seen = a
                    .messages
                    .iter()
                    .map(|m| {
                        m.get("id")
                            .map(|i| i.to_string())
                            .unwrap_or_else(|| "none".into())
                    })
                    .collect::<Vec<_>>()
                    .join(", ");
                problems.push(format!(
                    "no JSON-RPC response with id {id} in the answer to the {what} (ids seen: {})",
                    if seen.is_empty() {
                        "no message at all".to_owned()
                    } else {
                        seen
                    }
                ));
            }
            (Some(m), Some(true)) if m.get("error").is_none() => problems.push(format!(
                "the response with id {id} is a result; expected an error"
            )),
            (Some(m), Some(false)) if m.get("result").is_none() => problems.push(format!(
                "the response with id {id} is an error; expected a result"
            )),
            _ => {}
        }
    }
    problems
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::scenario::StepKind;
    use crate::scenario::model::http::{HttpExpect, Status};
    use crate::scenario::parse::parse_scenario;

    fn scenario(step: &str) -> Result<HttpStep, String> {
        let text = format!(
            "id: http/t\ntitle: t\nspec: basic/transports\ntransports: [http]\nsteps:\n  - initialize: {{}}\n  - http:\n{step}"
        );
        let s = parse_scenario("t.yaml", &text).map_err(|e| e.to_string())?;
        match &s.steps[1].kind {
            StepKind::Http(h) => Ok((**h).clone()),
            other => Err(format!("{other:?}")),
        }
    }

    #[test]
    fn parses_every_setting() {
        let h = scenario(
            "      method: delete\n      session: omit\n      protocol_version: \"1999-01-01\"\n      headers: { Origin: \"http://x.example\" }\n      within: 1s\n      resume: true\n      expect:\n        status: [200, 4xx]\n        skip_on_status: 405\n        body: empty\n        content_type: Text/Event-Stream\n        headers: { Mcp-Session-Id: \"^a\" }\n        response: { id: x-1, error: true }\n        event_ids: unique\n",
        )
        .unwrap();
        assert_eq!(h.method, "DELETE");
        assert_eq!(h.session, HeaderChoice::Omit);
        assert_eq!(h.protocol_version, HeaderChoice::Value("1999-01-01".into()));
        assert_eq!(
            h.headers,
            vec![("Origin".into(), "http://x.example".into())]
        );
        assert_eq!(h.within, Duration::from_secs(1));
        let e = &h.expect;
        assert_eq!(e.status, vec![Status::Exact(200), Status::Class(4)]);
        assert_eq!(e.skip_on_status, vec![405]);
        assert!(e.empty_body);
        assert_eq!(e.content_type, vec!["text/event-stream"]);
        assert_eq!(e.headers[0].0, "mcp-session-id");
        assert_eq!(e.response, Some((serde_json::json!("x-1"), Some(true))));
        assert!(h.resume && e.unique_event_ids);
        assert!(Status::Class(4).matches(404) && !Status::Class(4).matches(500));
    }

    #[test]
    fn rejects_what_it_cannot_send_or_check() {
        let bad = [
            ("      expect: { status: 6xx }\n", "not an HTTP status"),
            ("      expect: { status: 99 }\n", "not an HTTP status"),
            ("      method: TRACE\n", "not a method"),
            ("      expect: { body: full }\n", "`body` expects `empty`"),
            (
                "      expect: { headers: { x: \"(\" } }\n",
                "regular expression",
            ),
            ("      expect: { skip_on_status: 4xx }\n", "exact statuses"),
            ("      bogus: 1\n", "bogus"),
            ("      resume: yes please\n", "`resume`"),
            (
                "      expect: { event_ids: sorted }\n",
                "`event_ids` expects `unique`",
            ),
        ];
        for (step, want) in bad {
            let err = scenario(step).unwrap_err();
            assert!(err.contains(want), "{step}: {err}");
        }
    }

    #[test]
    fn checks_report_each_broken_expectation() {
        let step = HttpStep {
            method: "POST".into(),
            body: None,
            session: HeaderChoice::Current,
            protocol_version: HeaderChoice::Current,
            headers: vec![],
            within: Duration::from_secs(1),
            resume: false,
            expect: HttpExpect {
                status: vec![Status::Exact(202)],
                empty_body: true,
                response: Some((serde_json::json!(1), Some(false))),
                ..HttpExpect::default()
            },
        };
        let answer = Answer {
            status: 200,
            headers: reqwest::header::HeaderMap::new(),
            body: b"{}".to_vec(),
            sse: None,
            messages: vec![
                serde_json::json!({"jsonrpc": "2.0", "id": 1, "error": {"code": 1, "message": "x"}}),
            ],
        };
        let problems = check(&step, &answer);
        assert_eq!(problems.len(), 3, "{problems:?}");
        let ok = Answer {
            status: 202,
            headers: reqwest::header::HeaderMap::new(),
            body: vec![],
            sse: None,
            messages: vec![serde_json::json!({"jsonrpc": "2.0", "id": 1, "result": {}})],
        };
        assert!(check(&step, &ok).is_empty());
    }

    /// Regression (issue 15): the step read SSE with eventsource-stream directly, without
    /// the guard of `transport/sse_body.rs`, and panicked on a stream that starts with a
    /// byte order mark. It now reads through `transport::sse_reader`, like the transport:
    /// the BOM is skipped and the event after it is read.
    #[tokio::test]
    async fn an_sse_answer_that_starts_with_a_bom_is_read_not_a_panic() {
        use std::sync::Arc;
        use tokio::io::{AsyncReadExt, AsyncWriteExt};

        use crate::schema::SchemaStore;
        use crate::session::SessionConfig;
        use crate::transport::http::{HttpOptions, HttpTransport};

        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let url = format!("http://{}/mcp", listener.local_addr().unwrap());
        let server = tokio::spawn(async move {
            let (mut conn, _) = listener.accept().await.unwrap();
            let mut head = vec![0; 4096];
            let _ = conn.read(&mut head).await;
            let body = "\u{feff}event: message\nid: e-1\ndata: {\"jsonrpc\":\"2.0\",\"id\":\"b-1\",\"result\":{}}\n\n";
            let head = format!(
                "HTTP/1.1 200 OK\r\ncontent-type: text/event-stream\r\ncontent-length: {}\r\nconnection: close\r\n\r\n",
                body.len()
            );
            conn.write_all(head.as_bytes()).await.unwrap();
            conn.write_all(body.as_bytes()).await.unwrap();
            let _ = conn.shutdown().await;
        });
        let transport = HttpTransport::new(HttpOptions::new(&url).unwrap())
            .unwrap()
            .without_get_stream();
        let mut session = Session::new(
            Box::new(transport),
            Arc::new(SchemaStore::default()),
            SessionConfig::default(),
            std::time::Instant::now(),
        );
        let step = scenario(
            "      method: get\n      within: 5s\n      expect:\n        status: 200\n        response: { id: b-1 }\n",
        )
        .unwrap();
        let problems = run(&step, None, &mut session).await.unwrap();
        assert!(problems.is_empty(), "{problems:?}");
        let events: Vec<_> = session
            .transcript()
            .entries()
            .iter()
            .filter_map(|e| match &e.http {
                Some(HttpRecord::SseEvent { id, event, .. }) => Some((id.clone(), event.clone())),
                _ => None,
            })
            .collect();
        assert_eq!(events, vec![("e-1".to_owned(), "message".to_owned())]);
        server.await.unwrap();
    }
}

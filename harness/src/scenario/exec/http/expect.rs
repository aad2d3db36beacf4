//! Holding an `http` step's answer against its `expect`: status, body, content type,
//! headers and the JSON-RPC response; and the skips for resumability expectations the
//! server gives nothing to check.

use serde_json::Value;

use super::{HttpReply, HttpStop};
use crate::scenario::model::http::{HttpExpect, HttpStep, SseShould};

/// Skips a step whose resumability expectations the server gives nothing to check:
/// no SSE stream, no event ids, no resumption offered (405, allowed), no replay (a MAY).
/// A broken rule is never skipped.
pub(super) fn resumability(step: &HttpStep, a: &HttpReply) -> Result<(), HttpStop> {
    if !step.resume && !step.expect.unique_event_ids {
        return Ok(());
    }
    let ct = a.content_type().unwrap_or("-");
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
                    crate::protocol::response_id(m) == Some(id)
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

/// Skips a step with `sse:` expectations when the server answered with one JSON body:
/// priming and polling are about SSE streams, and a JSON answer is allowed.
pub(super) fn sse_applies(step: &HttpStep, a: &HttpReply) -> Result<(), HttpStop> {
    if step.expect.sse.is_empty() || a.sse.is_some() || !(200..300).contains(&a.status) {
        return Ok(());
    }
    let ct = a.content_type().unwrap_or("-");
    Err(HttpStop::Skip(format!(
        "the server answered the {} with one JSON body ({ct}), not an SSE stream (allowed): priming and polling do not apply",
        step.method
    )))
}

/// The `sse:` SHOULDs the stream broke, one sentence each.
fn sse_shoulds(step: &HttpStep, a: &HttpReply) -> Vec<String> {
    let Some(sse) = &a.sse else {
        return Vec::new();
    };
    let mut problems = Vec::new();
    for should in &step.expect.sse {
        match should {
            SseShould::Priming => match sse.first_event {
                Some((true, true)) => {}
                Some((has_id, _)) => problems.push(format!(
                    "the SSE stream's first event {}; the server SHOULD first send an event with an id and empty data, to prime the client to reconnect",
                    if has_id { "carried data" } else { "had no id" }
                )),
                None => problems.push(
                    "the SSE stream carried no event at all; the server SHOULD first send an event with an id and empty data, to prime the client to reconnect".into(),
                ),
            },
            SseShould::RetryBeforeClose if sse.closed_without_retry => problems.push(
                "the server closed the SSE connection before the response without sending a `retry` field first; it SHOULD, so the client knows when to reconnect".into(),
            ),
            SseShould::RetryBeforeClose => {}
        }
    }
    problems
}

/// The step's expectations `a` breaks, one sentence each (empty: all held).
pub(super) fn check(step: &HttpStep, a: &HttpReply) -> Vec<String> {
    let e = &step.expect;
    let mut problems = sse_shoulds(step, a);
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
            crate::protocol::text::quote(&String::from_utf8_lossy(&a.body), 200)
        ));
    }
    let ct = a.content_type().unwrap_or("").to_ascii_lowercase();
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
        let found = a
            .messages
            .iter()
            .find(|m| crate::protocol::response_id(m) == Some(id));
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
                let closed = match &a.sse {
                    Some(sse) if sse.closed_early => format!(
                        "; the server closed the SSE connection before it, and mcpcheck reconnected {} time(s) with GET and Last-Event-ID",
                        sse.resumes
                    ),
                    _ => String::new(),
                };
                problems.push(format!(
                    "no JSON-RPC response with id {id} in the answer to the {what} (ids seen: {}){closed}",
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
            (Some(m), _) => problems.extend(code_problem(e, id, m)),
        }
    }
    problems
}

/// What is wrong with the error code of the awaited response `m`, if anything: not one of
/// `code`, or the one `not_code` rules out.
fn code_problem(e: &HttpExpect, id: &Value, m: &Value) -> Option<String> {
    let code = m.pointer("/error/code").and_then(Value::as_i64);
    let has = || code.map_or("no error code".to_owned(), |c| format!("error code {c}"));
    if !e.response_codes.is_empty() && !code.is_some_and(|c| e.response_codes.contains(&c)) {
        let want: Vec<String> = e.response_codes.iter().map(i64::to_string).collect();
        return Some(format!(
            "the response with id {id} has {}; expected error code {}",
            has(),
            want.join(" or ")
        ));
    }
    match e.response_not_code {
        Some(not) if code == Some(not) => Some(format!(
            "the response with id {id} is an error with code {not}, which the request does not deserve: {}",
            crate::protocol::text::quote(&m["error"].to_string(), 200)
        )),
        _ => None,
    }
}

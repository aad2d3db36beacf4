//! The `http` step: one raw HTTP exchange with the server's MCP endpoint, outside the
//! transport's own rules, to test the Streamable HTTP transport itself (spec:
//! `basic/transports#streamable-http`): a request without the session id, with a foreign
//! `Origin`, with a bad `MCP-Protocol-Version`, a GET or DELETE; then checks on the status,
//! headers, body, and the JSON-RPC response in a JSON body or an SSE stream.

use std::time::Duration;

use futures_util::StreamExt;
use reqwest::header::{HeaderName, HeaderValue};
use serde_json::Value;

use super::model::Template;
use crate::session::Session;
use crate::transport::http::{
    HttpHandle, HttpRecord, POST_ACCEPT, SESSION_HEADER, VERSION_HEADER, error_chain,
};

/// One raw exchange and what its response must look like.
#[derive(Clone, Debug, PartialEq)]
pub struct HttpStep {
    /// `GET`, `POST` or `DELETE`.
    pub method: String,
    /// A JSON body (a string is sent as is, for malformed bodies).
    pub body: Option<Template>,
    pub session: HeaderChoice,
    pub protocol_version: HeaderChoice,
    /// Headers added or replaced (`Origin`, `Host`, `Accept`, ...).
    pub headers: Vec<(String, String)>,
    /// How long the exchange may take; an SSE stream is read until then.
    pub within: Duration,
    pub expect: HttpExpect,
}

/// What to send in a header the transport normally manages.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum HeaderChoice {
    /// What the transport would send now.
    Current,
    /// Leave the header out.
    Omit,
    /// This value.
    Value(String),
}

/// Expected HTTP status: exact, or a class (`4xx`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Status {
    Exact(u16),
    Class(u16),
}

impl Status {
    fn matches(self, code: u16) -> bool {
        match self {
            Status::Exact(c) => c == code,
            Status::Class(c) => code / 100 == c,
        }
    }
}

impl std::fmt::Display for Status {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Status::Exact(c) => write!(f, "{c}"),
            Status::Class(c) => write!(f, "{c}xx"),
        }
    }
}

#[derive(Clone, Debug, Default, PartialEq)]
pub struct HttpExpect {
    /// Acceptable statuses (empty: any).
    pub status: Vec<Status>,
    /// Statuses on which the rest of the scenario does not apply (a server that answers
    /// DELETE with 405 does not end sessions), and the scenario is skipped.
    pub skip_on_status: Vec<u16>,
    /// The body must be empty.
    pub empty_body: bool,
    /// For a 2xx answer: the content type must start with one of these.
    pub content_type: Vec<String>,
    /// Headers that must be present, each matching a regex.
    pub headers: Vec<(String, HeaderRegex)>,
    /// A JSON-RPC response with this id must be in the body or the SSE stream;
    /// `error: Some(true)` demands an error response.
    pub response: Option<(Value, Option<bool>)>,
}

/// A regex, compared by its text (the model derives `PartialEq`).
#[derive(Clone, Debug)]
pub struct HeaderRegex(pub regex::Regex);

impl PartialEq for HeaderRegex {
    fn eq(&self, other: &Self) -> bool {
        self.0.as_str() == other.0.as_str()
    }
}

/// Why an `http` step stopped the scenario.
#[derive(Debug)]
pub enum HttpStop {
    Skip(String),
    Error(String),
}

/// What the exchange returned, for the checks.
struct Answer {
    status: u16,
    headers: reqwest::header::HeaderMap,
    body: Vec<u8>,
    messages: Vec<Value>,
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
    Ok(check(step, &answer))
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
    if sse {
        session.record_http(HttpRecord::Exchange {
            method: method.clone(),
            url,
            request_headers,
            status,
            response_headers,
            body: None,
        });
        use eventsource_stream::Eventsource;
        let mut events = response.bytes_stream().eventsource();
        let wanted = step.expect.response.as_ref().map(|(id, _)| id.clone());
        let reason = loop {
            match tokio::time::timeout_at(deadline, events.next()).await {
                Err(_) => break format!("mcpcheck stopped reading after {:?}", step.within),
                Ok(None) => break "the server closed the stream".to_owned(),
                Ok(Some(Err(e))) => break format!("broken stream: {e}"),
                Ok(Some(Ok(ev))) => {
                    session.record_http(HttpRecord::SseEvent {
                        stream: format!("raw {method}"),
                        id: ev.id.clone(),
                        event: ev.event.clone(),
                        retry_ms: ev.retry.map(|d| d.as_millis() as u64),
                        data_bytes: ev.data.len(),
                        data: Some(handle.options().redact(&ev.data)),
                    });
                    if ev.event == "message"
                        && ev.data.len() <= max
                        && let Ok(v) = serde_json::from_str::<Value>(&ev.data)
                    {
                        let done = wanted.as_ref().is_some_and(|id| v.get("id") == Some(id))
                            && (v.get("result").is_some() || v.get("error").is_some());
                        messages.push(v);
                        if done {
                            break "mcpcheck had what it waited for".to_owned();
                        }
                    }
                }
            }
        };
        session.record_http(HttpRecord::StreamEnd {
            stream: format!("raw {method}"),
            reason,
        });
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
    })
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
    for (name, re) in &e.headers {
        match a.headers.get(name.as_str()).map(|v| v.to_str()) {
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
            "      method: delete\n      session: omit\n      protocol_version: \"1999-01-01\"\n      headers: { Origin: \"http://x.example\" }\n      within: 1s\n      expect:\n        status: [200, 4xx]\n        skip_on_status: 405\n        body: empty\n        content_type: Text/Event-Stream\n        headers: { Mcp-Session-Id: \"^a\" }\n        response: { id: x-1, error: true }\n",
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
            messages: vec![serde_json::json!({"jsonrpc": "2.0", "id": 1, "result": {}})],
        };
        assert!(check(&step, &ok).is_empty());
    }
}

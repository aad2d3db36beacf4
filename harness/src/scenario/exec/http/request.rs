//! Building the `http` step's request: its method, the endpoint's URL and configured
//! headers, the session id and `MCP-Protocol-Version` as the step chooses (current, a
//! value, or left out), the body, and the step's own headers last.

use reqwest::header::{HeaderName, HeaderValue};
use serde_json::Value;

use super::HttpStop;
use crate::scenario::model::http::{HeaderChoice, HttpStep};
use crate::transport::http::{HttpHandle, POST_ACCEPT, SESSION_HEADER, VERSION_HEADER};

/// The request `step` describes, with `body` (a string is sent as is, other JSON
/// serialized) and the session's id when the step keeps it.
pub(super) fn build(
    step: &HttpStep,
    body: Option<Value>,
    headers_from: Option<Value>,
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
    // Built here, sent by the session (`RawHttp::execute`), after the tool-call gate.
    let mut request = reqwest::Request::new(method, options.url.clone());
    let headers = request.headers_mut();
    headers.insert(reqwest::header::ACCEPT, HeaderValue::from_static(accept));
    for (k, v) in &options.headers {
        headers.append(k, v.clone());
    }
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
    let built: Vec<(String, String)> = match headers_from {
        None => Vec::new(),
        Some(Value::Object(map)) => map
            .into_iter()
            .map(|(k, v)| match v {
                Value::String(s) => Ok((k, s)),
                other => Err(HttpStop::Error(format!(
                    "header `{k}` built from `headers` is {other}, not a string"
                ))),
            })
            .collect::<Result<_, _>>()?,
        Some(other) => {
            return Err(HttpStop::Error(format!(
                "`headers` built {other}, not an object of header names and values"
            )));
        }
    };
    let headers = request.headers_mut();
    for (k, v) in step.headers.iter().chain(&built) {
        let n = HeaderName::from_bytes(k.as_bytes())
            .map_err(|_| HttpStop::Error(format!("`{k}` is not a header name")))?;
        let v = HeaderValue::from_str(v)
            .map_err(|_| HttpStop::Error(format!("`{v}` is not a header value")))?;
        headers.insert(n, v);
    }
    Ok(request)
}

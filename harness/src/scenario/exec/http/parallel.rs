//! `parallel: N`: the same request sent N times at once, each copy with its own JSON-RPC
//! id, so several POST streams are open together (2025-11-25
//! basic/transports#multiple-connections: "The client MAY remain connected to multiple SSE
//! streams simultaneously"). All requests go out before any answer is read; then each
//! answer is read and held to the step's `expect` for its own id.

use futures_util::future::join_all;
use serde_json::Value;

use super::HttpStop;
use super::exchange::answer;
use crate::scenario::model::http::HttpStep;
use crate::session::RawHttp;
use crate::session::Session;
use crate::transport::http::HttpRecord;

/// The id of copy `k` (1-based) of a request whose id is `id`: `"x"` becomes `"x-k"`, a
/// number `n` becomes `n + k - 1`, anything else is kept.
fn copy_id(id: &Value, k: usize) -> Value {
    match id {
        Value::String(s) => Value::String(format!("{s}-{k}")),
        Value::Number(n) => n
            .as_i64()
            .map(|n| Value::from(n + k as i64 - 1))
            .unwrap_or_else(|| id.clone()),
        other => other.clone(),
    }
}

/// Copy `k` of the step and its body: the body's id and the expected response's id (when
/// it is the body's) renumbered alike.
fn copy(step: &HttpStep, body: Option<&Value>, k: usize) -> (HttpStep, Option<Value>) {
    let mut step = step.clone();
    let mut body = body.cloned();
    if let Some(Value::Object(m)) = body.as_mut()
        && let Some(id) = m.get("id").cloned()
    {
        m.insert("id".into(), copy_id(&id, k));
        if let Some((want, _)) = step.expect.response.as_mut()
            && *want == id
        {
            *want = copy_id(&id, k);
        }
    }
    (step, body)
}

/// Sends every copy, then reads and checks each answer; problems name their copy.
pub(super) async fn run(
    step: &HttpStep,
    body: Option<Value>,
    headers: Option<Value>,
    session: &mut Session,
    handle: &RawHttp,
    session_id: Option<String>,
) -> Result<Vec<String>, HttpStop> {
    let deadline = tokio::time::Instant::now() + step.within;
    let n = step.parallel;
    let mut copies = Vec::with_capacity(n);
    for k in 1..=n {
        let (step, body) = copy(step, body.as_ref(), k);
        let request =
            super::request::build(&step, body, headers.clone(), handle, session_id.clone())?;
        super::admit(handle, &request)?;
        let sent = (
            request.method().to_string(),
            request.url().to_string(),
            handle.record_headers(request.headers()),
        );
        if let Some(b) = request.body().and_then(|b| b.as_bytes()) {
            session.record_sent(String::from_utf8_lossy(b).into_owned());
        }
        copies.push((step, request, sent));
    }
    let responses = join_all(
        copies
            .iter_mut()
            .map(|(_, request, _)| {
                let request = request.try_clone();
                async {
                    match request {
                        Some(r) => tokio::time::timeout_at(deadline, handle.execute(r))
                            .await
                            .map_err(|_| {
                                let error = format!("no response headers within {:?}", step.within);
                                (error, false)
                            })?
                            .map_err(|e| (e.describe(handle), e.is_tls())),
                        None => Err(("the request could not be copied".to_owned(), false)),
                    }
                }
            })
            .collect::<Vec<_>>(),
    )
    .await;
    let mut problems = Vec::new();
    for (k, ((copy_step, _, sent), response)) in copies.into_iter().zip(responses).enumerate() {
        let label = format!("copy {} of {n} sent at once", k + 1);
        let response = match response {
            Ok(r) => r,
            Err((error, tls)) => {
                session.record_http(HttpRecord::Failed {
                    method: sent.0.clone(),
                    url: sent.1.clone(),
                    error: error.clone(),
                    tls,
                });
                problems.push(format!(
                    "{label}: the {} got no HTTP response: {error}",
                    sent.0
                ));
                continue;
            }
        };
        match answer(handle, response, &copy_step, session, sent, deadline).await {
            Ok(a) => {
                let mut found = a
                    .sse
                    .as_ref()
                    .map(|s| s.problems.clone())
                    .unwrap_or_default();
                found.extend(super::expect::check(&copy_step, &a));
                problems.extend(found.into_iter().map(|p| format!("{label}: {p}")));
            }
            Err(error) => problems.push(format!("{label}: {error}")),
        }
    }
    Ok(problems)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn each_copy_gets_its_own_id_and_expects_it() {
        assert_eq!(copy_id(&json!("ms"), 2), json!("ms-2"));
        assert_eq!(copy_id(&json!(1000), 3), json!(1002));
        assert_eq!(copy_id(&json!(null), 3), json!(null));
        let step = HttpStep {
            method: "POST".into(),
            body: None,
            session: crate::scenario::model::http::HeaderChoice::Current,
            protocol_version: crate::scenario::model::http::HeaderChoice::Current,
            headers: vec![],
            within: std::time::Duration::from_secs(1),
            resume: false,
            parallel: 3,
            headers_from: None,
            expect: crate::scenario::model::http::HttpExpect {
                response: Some((json!("ms"), Some(false))),
                ..Default::default()
            },
        };
        let body = json!({"jsonrpc": "2.0", "id": "ms", "method": "tools/list"});
        let (s, b) = copy(&step, Some(&body), 3);
        assert_eq!(b.unwrap()["id"], "ms-3");
        assert_eq!(s.expect.response.unwrap().0, "ms-3");
    }
}

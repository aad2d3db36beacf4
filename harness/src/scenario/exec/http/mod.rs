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
//!
//! The parts: [`request`] builds the request the step describes, [`exchange`] sends it and
//! reads the answer (a JSON body, or an SSE stream resumed as the spec requires), [`sse`]
//! reads one SSE connection and checks its event ids and replays, [`expect`] holds the
//! answer against the step's `expect`.

mod exchange;
mod expect;
mod parallel;
mod request;
mod sse;

use std::time::Duration;

use serde_json::Value;

use crate::scenario::model::http::{HeaderChoice, HttpStep};
use crate::session::{RawHttp, Session};

/// Why an `http` step stopped the scenario.
#[derive(Debug)]
pub enum HttpStop {
    /// The step does not apply to this server, and why.
    Skip(String),
    /// A problem in the step or the harness.
    Error(String),
    /// The tool-call gate keeps the step's `tools/call` back: nothing was sent, and the
    /// step is a policy skip, not a server that did not answer.
    Refused(crate::session::Refused),
}

/// Asks the tool-call gate about `request`'s body before anything is sent or recorded.
fn admit(handle: &RawHttp, request: &reqwest::Request) -> Result<(), HttpStop> {
    match request.body().and_then(|b| b.as_bytes()) {
        Some(body) => handle.check(body).map_err(HttpStop::Refused),
        None => Ok(()),
    }
}

/// What the exchange returned, for the checks.
pub(super) struct HttpReply {
    pub(super) status: u16,
    pub(super) headers: reqwest::header::HeaderMap,
    pub(super) body: Vec<u8>,
    pub(super) messages: Vec<Value>,
    /// What the SSE stream (if any) showed of resumability.
    pub(super) sse: Option<SseAcc>,
}

impl HttpReply {
    /// The `Content-Type` of the answer, if it has a readable one.
    pub(super) fn content_type(&self) -> Option<&str> {
        self.headers
            .get(reqwest::header::CONTENT_TYPE)
            .and_then(|v| v.to_str().ok())
    }
}

/// An SSE answer across its connections (the first, then GETs with `Last-Event-ID`).
#[derive(Debug, Default)]
pub(super) struct SseAcc {
    /// Event ids received, in order, each once.
    pub(super) ids: Vec<String>,
    pub(super) last_id: Option<String>,
    pub(super) retry: Option<Duration>,
    /// Broken resumability rules.
    pub(super) problems: Vec<String>,
    /// The step dropped the connection after an event id, to resume.
    pub(super) disconnected: bool,
    /// Reconnections made.
    pub(super) resumes: u32,
    /// Status and content type of the last resumption GET that got no SSE stream.
    pub(super) refused: Option<(u16, String)>,
    /// Check each id against the other streams of the session (`event_ids: unique`).
    pub(super) check_unique: bool,
    /// The first event of the first connection: (it had an id, its data was empty).
    pub(super) first_event: Option<(bool, bool)>,
    /// The server closed a connection before the response without having sent a `retry`.
    pub(super) closed_without_retry: bool,
    /// The server closed a connection before the response (with or without `retry`).
    pub(super) closed_early: bool,
}

/// How reading one SSE connection ended.
#[derive(Debug, PartialEq)]
pub(super) enum SseEnd {
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
    headers: Option<Value>,
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
    if step.parallel > 1 {
        return parallel::run(step, body, headers, session, &handle, current_session).await;
    }
    let request = request::build(step, body, headers, &handle, current_session)?;
    admit(&handle, &request)?;
    let answer = exchange::exchange(&handle, request, step, session).await;
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
    expect::resumability(step, &answer)?;
    expect::sse_applies(step, &answer)?;
    let mut problems = answer
        .sse
        .as_ref()
        .map(|s| s.problems.clone())
        .unwrap_or_default();
    problems.extend(expect::check(step, &answer));
    Ok(problems)
}

#[cfg(test)]
mod tests {
    use super::expect::check;
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
            "      method: delete\n      session: omit\n      protocol_version: \"1999-01-01\"\n      headers: { Origin: \"http://x.example\" }\n      within: 1s\n      resume: true\n      expect:\n        status: [200, 4xx]\n        skip_on_status: 405\n        body: empty\n        content_type: Text/Event-Stream\n        headers: { Mcp-Session-Id: \"^a\" }\n        response: { id: x-1, error: true }\n        event_ids: unique\n        sse: [priming, retry]\n",
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
        assert_eq!(
            e.sse,
            vec![
                crate::scenario::model::http::SseShould::Priming,
                crate::scenario::model::http::SseShould::RetryBeforeClose
            ]
        );
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
            (
                "      expect: { sse: [priming, ping] }\n",
                "`sse` expects `priming` or `retry`",
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
            headers_from: None,
            within: Duration::from_secs(1),
            resume: false,
            parallel: 1,
            expect: HttpExpect {
                status: vec![Status::Exact(202)],
                empty_body: true,
                response: Some((serde_json::json!(1), Some(false))),
                ..HttpExpect::default()
            },
        };
        let answer = HttpReply {
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
        let ok = HttpReply {
            status: 202,
            headers: reqwest::header::HeaderMap::new(),
            body: vec![],
            sse: None,
            messages: vec![serde_json::json!({"jsonrpc": "2.0", "id": 1, "result": {}})],
        };
        assert!(check(&step, &ok).is_empty());
    }

    /// `code` takes one code or a list (two MUSTs may each allow one); `not_code` passes a
    /// result and every error but its code, under any status.
    #[test]
    fn response_codes_and_the_one_code_ruled_out() {
        let h = scenario("      expect:\n        response: { id: a, code: [-32602, -32020] }\n")
            .unwrap();
        assert_eq!(h.expect.response_codes, vec![-32602, -32020]);
        let not =
            scenario("      expect:\n        response: { id: a, not_code: -32020 }\n").unwrap();
        assert_eq!(not.expect.response_not_code, Some(-32020));
        let answer = |message: serde_json::Value| HttpReply {
            status: 400,
            headers: reqwest::header::HeaderMap::new(),
            body: b"{}".to_vec(),
            sse: None,
            messages: vec![message],
        };
        let error = |code: i64| {
            answer(
                serde_json::json!({"jsonrpc": "2.0", "id": "a", "error": {"code": code, "message": "x"}}),
            )
        };
        let result = answer(serde_json::json!({"jsonrpc": "2.0", "id": "a", "result": {}}));
        assert!(check(&h, &error(-32602)).is_empty());
        assert!(check(&h, &error(-32020)).is_empty());
        assert_eq!(check(&h, &error(-32600)).len(), 1);
        assert_eq!(check(&h, &result).len(), 1);
        assert!(check(&not, &error(-32602)).is_empty());
        assert!(check(&not, &result).is_empty());
        let refused = check(&not, &error(-32020));
        assert!(refused[0].contains("-32020"), "{refused:?}");
    }

    /// `sse: [priming, retry]`: a stream whose first event has data, or that the server
    /// closed before the response without a `retry`, breaks the SHOULD; a primed stream
    /// closed after a `retry` keeps both.
    #[test]
    fn sse_shoulds_judge_the_first_event_and_an_early_close() {
        let step = scenario("      expect: { sse: [priming, retry] }\n").unwrap();
        let answer = |sse: SseAcc| HttpReply {
            status: 200,
            headers: reqwest::header::HeaderMap::new(),
            body: vec![],
            sse: Some(sse),
            messages: vec![],
        };
        let good = SseAcc {
            first_event: Some((true, true)),
            retry: Some(Duration::from_millis(200)),
            closed_early: true,
            ..SseAcc::default()
        };
        assert!(check(&step, &answer(good)).is_empty());
        let unprimed = SseAcc {
            first_event: Some((false, false)),
            ..SseAcc::default()
        };
        let problems = check(&step, &answer(unprimed));
        assert_eq!(problems.len(), 1, "{problems:?}");
        assert!(
            problems[0].contains("first event had no id"),
            "{problems:?}"
        );
        let no_retry = SseAcc {
            first_event: Some((true, true)),
            closed_early: true,
            closed_without_retry: true,
            ..SseAcc::default()
        };
        let problems = check(&step, &answer(no_retry));
        assert_eq!(problems.len(), 1, "{problems:?}");
        assert!(problems[0].contains("`retry`"), "{problems:?}");
        // A JSON answer is allowed: the scenario is skipped, not failed.
        let json = HttpReply {
            sse: None,
            ..answer(SseAcc::default())
        };
        assert!(matches!(
            expect::sse_applies(&step, &json),
            Err(HttpStop::Skip(_))
        ));
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
        use crate::transport::http::{HttpOptions, HttpRecord, HttpTransport};

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
        let problems = run(&step, None, None, &mut session).await.unwrap();
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

//! The loopback HTTP endpoint a client under test talks to (`mcpcheck client`).
//!
//! Every HTTP request that reaches it, on any path, is handed over as an [`Arrival`] and
//! waits for the [`Reply`] the session above gives it: a body, or an SSE stream the session
//! keeps writing to. Like every transport it judges nothing; it only carries, and it keeps
//! the request as it came (headers in arrival order, the body as bytes) for the session to
//! judge.

use std::convert::Infallible;
use std::net::SocketAddr;
use std::time::{Duration, Instant};

use axum::body::{Body, Bytes};
use axum::extract::{Request, State};
use axum::http::{HeaderName, HeaderValue, StatusCode};
use axum::response::{IntoResponse, Response};
use tokio::sync::{mpsc, oneshot};

/// The largest request body taken; a longer one is cut and the session told so.
pub const MAX_BODY: usize = 4 * 1024 * 1024;

/// A listening endpoint. Dropping it stops the server and ends every open stream.
#[derive(Debug)]
pub struct Endpoint {
    addr: SocketAddr,
    arrivals: mpsc::Receiver<Arrival>,
    server: tokio::task::JoinHandle<()>,
}

/// One HTTP request from the client, waiting for its reply.
#[derive(Debug)]
pub struct Arrival {
    /// The HTTP method, upper case.
    pub method: String,
    /// The path and query.
    pub target: String,
    /// The headers, names in lower case, in arrival order.
    pub headers: Vec<(String, String)>,
    /// The body, cut at [`MAX_BODY`].
    pub body: Vec<u8>,
    /// Whether the body was longer than [`MAX_BODY`].
    pub truncated: bool,
    /// When it arrived.
    pub at: Instant,
    reply: oneshot::Sender<Reply>,
}

/// How the endpoint answers one request.
#[derive(Debug)]
pub enum Reply {
    /// A complete response.
    Body {
        /// The status code.
        status: u16,
        /// Headers to send.
        headers: Vec<(String, String)>,
        /// The body (empty for none).
        body: Vec<u8>,
    },
    /// `200 text/event-stream`: each event written as it is sent on the channel; the
    /// stream ends when the sender is dropped.
    Stream {
        /// Headers to send besides the content type.
        headers: Vec<(String, String)>,
        /// The events, in order.
        events: mpsc::UnboundedReceiver<SseEvent>,
    },
}

/// One SSE event the endpoint writes.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SseEvent {
    /// The `id` field, if any.
    pub id: Option<String>,
    /// The `retry` field, if any.
    pub retry: Option<Duration>,
    /// The data (one JSON-RPC message), or empty for a priming event (`data:` with nothing).
    pub data: String,
}

impl Arrival {
    /// The value of header `name` (in any case), the first if repeated.
    pub fn header(&self, name: &str) -> Option<&str> {
        self.headers
            .iter()
            .find(|(n, _)| n.eq_ignore_ascii_case(name))
            .map(|(_, v)| v.as_str())
    }

    /// Answers the request. A client that already hung up loses the answer; that is
    /// not an error of ours.
    pub fn reply(self, reply: Reply) {
        let _ = self.reply.send(reply);
    }
}

impl Endpoint {
    /// Listens on a free loopback port.
    pub async fn bind() -> std::io::Result<Self> {
        let listener = tokio::net::TcpListener::bind(("127.0.0.1", 0)).await?;
        let addr = listener.local_addr()?;
        let (tx, arrivals) = mpsc::channel(64);
        let app = axum::Router::new().fallback(handle).with_state(tx);
        let server = tokio::spawn(async move {
            let _ = axum::serve(listener, app).await;
        });
        Ok(Endpoint {
            addr,
            arrivals,
            server,
        })
    }

    /// The server's origin (`http://127.0.0.1:PORT`), for other URLs it serves.
    pub fn origin(&self) -> String {
        format!("http://{}", self.addr)
    }

    /// The MCP endpoint's URL (`http://127.0.0.1:PORT/mcp`).
    pub fn url(&self) -> String {
        format!("http://{}/mcp", self.addr)
    }

    /// The next request, or `None` once `deadline` passes.
    pub async fn next(&mut self, deadline: tokio::time::Instant) -> Option<Arrival> {
        tokio::time::timeout_at(deadline, self.arrivals.recv())
            .await
            .ok()
            .flatten()
    }
}

impl Drop for Endpoint {
    fn drop(&mut self) {
        self.server.abort();
    }
}

async fn handle(State(tx): State<mpsc::Sender<Arrival>>, request: Request) -> Response {
    let at = Instant::now();
    let (parts, body) = request.into_parts();
    let (body, truncated) = match axum::body::to_bytes(body, MAX_BODY + 1).await {
        Ok(b) if b.len() > MAX_BODY => (b[..MAX_BODY].to_vec(), true),
        Ok(b) => (b.to_vec(), false),
        // Longer than the limit (or the client broke off): what came is lost.
        Err(_) => (Vec::new(), true),
    };
    let headers = parts
        .headers
        .iter()
        .map(|(n, v)| {
            (
                n.as_str().to_owned(),
                String::from_utf8_lossy(v.as_bytes()).into_owned(),
            )
        })
        .collect();
    let (reply, answer) = oneshot::channel();
    let arrival = Arrival {
        method: parts.method.as_str().to_owned(),
        target: parts
            .uri
            .path_and_query()
            .map_or_else(|| parts.uri.path().to_owned(), |p| p.as_str().to_owned()),
        headers,
        body,
        truncated,
        at,
        reply,
    };
    if tx.send(arrival).await.is_err() {
        return gone();
    }
    match answer.await {
        Ok(reply) => respond(reply),
        Err(_) => gone(),
    }
}

/// The session ended without answering: the run is over.
fn gone() -> Response {
    (
        StatusCode::SERVICE_UNAVAILABLE,
        "mcpcheck: the scenario has ended",
    )
        .into_response()
}

fn respond(reply: Reply) -> Response {
    match reply {
        Reply::Body {
            status,
            headers,
            body,
        } => {
            let mut response = Response::new(Body::from(Bytes::from(body)));
            *response.status_mut() =
                StatusCode::from_u16(status).unwrap_or(StatusCode::INTERNAL_SERVER_ERROR);
            add_headers(&mut response, headers);
            response
        }
        Reply::Stream { headers, events } => {
            let stream = futures_util::stream::unfold(events, |mut events| async move {
                let e = events.recv().await?;
                Some((Ok::<_, Infallible>(encode(&e)), events))
            });
            let mut response = Response::new(Body::from_stream(stream));
            let h = response.headers_mut();
            h.insert(
                "content-type",
                HeaderValue::from_static("text/event-stream"),
            );
            h.insert("cache-control", HeaderValue::from_static("no-cache"));
            add_headers(&mut response, headers);
            response
        }
    }
}

/// One event in the SSE wire format. Written here rather than with axum's `Sse`, which
/// leaves out the `data` line of an event with empty data: the priming event the spec
/// asks for ("an event ID and an empty data field") must carry `data:` to be dispatched
/// at all (SSE standard: an event with no data line is dropped).
fn encode(e: &SseEvent) -> Bytes {
    let mut out = String::new();
    if let Some(id) = &e.id {
        out.push_str(&format!("id: {}\n", id.replace(['\r', '\n'], "")));
    }
    if let Some(retry) = e.retry {
        out.push_str(&format!("retry: {}\n", retry.as_millis()));
    }
    if e.data.is_empty() {
        out.push_str("data:\n");
    }
    for line in e.data.lines() {
        out.push_str(&format!("data: {line}\n"));
    }
    out.push('\n');
    Bytes::from(out)
}

fn add_headers(response: &mut Response, headers: Vec<(String, String)>) {
    for (name, value) in headers {
        if let (Ok(n), Ok(v)) = (
            HeaderName::try_from(name.as_str()),
            HeaderValue::try_from(value.as_str()),
        ) {
            response.headers_mut().append(n, v);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn soon() -> tokio::time::Instant {
        crate::transport::install_crypto_provider();
        tokio::time::Instant::now() + Duration::from_secs(5)
    }

    #[tokio::test]
    async fn hands_over_each_request_and_sends_the_reply() {
        let mut endpoint = Endpoint::bind().await.unwrap();
        let url = endpoint.url();
        let client = tokio::spawn(async move {
            reqwest::Client::new()
                .post(url)
                .header("accept", "application/json, text/event-stream")
                .body(r#"{"jsonrpc":"2.0","id":1,"method":"ping"}"#)
                .send()
                .await
                .unwrap()
        });
        let arrival = endpoint.next(soon()).await.unwrap();
        assert_eq!(arrival.method, "POST");
        assert_eq!(arrival.target, "/mcp");
        assert_eq!(
            arrival.header("accept"),
            Some("application/json, text/event-stream")
        );
        assert_eq!(arrival.body, br#"{"jsonrpc":"2.0","id":1,"method":"ping"}"#);
        arrival.reply(Reply::Body {
            status: 200,
            headers: vec![("content-type".into(), "application/json".into())],
            body: br#"{"jsonrpc":"2.0","id":1,"result":{}}"#.to_vec(),
        });
        let response = client.await.unwrap();
        assert_eq!(response.status(), 200);
        assert_eq!(
            response.text().await.unwrap(),
            r#"{"jsonrpc":"2.0","id":1,"result":{}}"#
        );
    }

    #[tokio::test]
    async fn a_stream_reply_writes_events_until_the_sender_goes() {
        let mut endpoint = Endpoint::bind().await.unwrap();
        let url = endpoint.url();
        let client = tokio::spawn(async move {
            let r = reqwest::Client::new().get(url).send().await.unwrap();
            let content_type = r.headers()["content-type"].to_str().unwrap().to_owned();
            (content_type, r.text().await.unwrap())
        });
        let arrival = endpoint.next(soon()).await.unwrap();
        let (tx, events) = mpsc::unbounded_channel();
        arrival.reply(Reply::Stream {
            headers: vec![],
            events,
        });
        tx.send(SseEvent {
            id: Some("6".into()),
            retry: None,
            data: String::new(),
        })
        .unwrap();
        tx.send(SseEvent {
            id: Some("7".into()),
            retry: Some(Duration::from_millis(500)),
            data: "{}".into(),
        })
        .unwrap();
        drop(tx);
        let (content_type, text) = client.await.unwrap();
        assert_eq!(content_type, "text/event-stream");
        assert!(
            text.starts_with("id: 6\ndata:\n\n"),
            "a priming event: {text}"
        );
        assert!(text.contains("id: 7\n"), "{text}");
        assert!(text.contains("retry: 500\n"), "{text}");
        assert!(text.contains("data: {}\n"), "{text}");
        assert!(text.ends_with("\n\n"), "{text}");
    }

    #[tokio::test]
    async fn nothing_arrives_by_the_deadline() {
        let mut endpoint = Endpoint::bind().await.unwrap();
        let deadline = soon() - Duration::from_millis(4950);
        assert!(endpoint.next(deadline).await.is_none());
    }
}

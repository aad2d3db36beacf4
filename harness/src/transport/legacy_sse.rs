//! The HTTP+SSE transport of 2024-11-05 (spec 2024-11-05 `basic/transports#http-with-sse`):
//! a GET opens an SSE stream whose first event, `endpoint`, names the URI to POST messages
//! to; every server message, responses included, arrives as a `message` event on that
//! stream. Superseded by Streamable HTTP from 2025-03-26.

use std::time::Duration;

use tokio::sync::{mpsc, oneshot};
use tokio::task::JoinHandle;

use super::http::{
    HttpHandle, HttpOptions, HttpRecord, SendError, client, deliver, error_chain, record_headers,
};
use super::sse_reader::{SseEvent, SseReader};
use super::{
    BoxFuture, Inbound, ShutdownReport, ShutdownStage, StderrLog, Transport, TransportError,
};

const INBOUND_CAPACITY: usize = 4096;

/// A connection to a 2024-11-05 HTTP+SSE server.
#[derive(Debug)]
pub struct SseTransport {
    handle: HttpHandle,
    inbound: mpsc::Receiver<Inbound>,
    tx: Option<mpsc::Sender<Inbound>>,
    /// The POST endpoint, once the stream named it (or why it did not).
    endpoint: Option<Result<reqwest::Url, String>>,
    endpoint_rx: Option<oneshot::Receiver<Result<reqwest::Url, String>>>,
    stream: JoinHandle<()>,
}

impl SseTransport {
    /// Opens the SSE stream at `options.url`; the endpoint event is awaited by the first send.
    pub fn connect(options: HttpOptions) -> Result<Self, TransportError> {
        let client = client(&options).map_err(|e| TransportError::Http(e.to_string()))?;
        let handle = HttpHandle::new(client, options);
        let (tx, inbound) = mpsc::channel(INBOUND_CAPACITY);
        let (ep_tx, ep_rx) = oneshot::channel();
        let stream = tokio::spawn(read_stream(handle.clone(), tx.clone(), ep_tx));
        Ok(SseTransport {
            handle,
            inbound,
            tx: Some(tx),
            endpoint: None,
            endpoint_rx: Some(ep_rx),
            stream,
        })
    }

    async fn endpoint(&mut self) -> Result<reqwest::Url, TransportError> {
        if self.endpoint.is_none() {
            let wait = self.handle.options().timeout;
            let got = match self.endpoint_rx.take() {
                Some(rx) => match tokio::time::timeout(wait, rx).await {
                    Ok(Ok(r)) => r,
                    Ok(Err(_)) => Err("the SSE stream ended before its `endpoint` event".into()),
                    Err(_) => Err(format!("no `endpoint` event within {wait:?}")),
                },
                None => Err("no `endpoint` event".into()),
            };
            self.endpoint = Some(got);
        }
        match self.endpoint.as_ref() {
            Some(Ok(url)) => Ok(url.clone()),
            Some(Err(e)) => Err(TransportError::Http(e.clone())),
            None => Err(TransportError::Http("no endpoint".into())),
        }
    }

    async fn post(&mut self, body: Vec<u8>) -> Result<(), TransportError> {
        let url = self.endpoint().await?;
        let tx = self
            .tx
            .clone()
            .ok_or_else(|| TransportError::InputClosed(std::io::ErrorKind::BrokenPipe.into()))?;
        let options = self.handle.options();
        let mut req = self
            .handle
            .client()
            .post(url.clone())
            .header(reqwest::header::CONTENT_TYPE, "application/json");
        for (k, v) in &options.headers {
            req = req.header(k, v);
        }
        let request = req
            .body(body)
            .build()
            .map_err(|e| TransportError::Http(e.to_string()))?;
        let request_headers = record_headers(request.headers(), options);
        let sent =
            tokio::time::timeout(options.timeout, self.handle.client().execute(request)).await;
        let response = match sent {
            Ok(Ok(r)) => r,
            Ok(Err(e)) => {
                let error = options.redact(&error_chain(&e));
                let _ = tx
                    .send(Inbound::Http(HttpRecord::Failed {
                        method: "POST".into(),
                        url: url.to_string(),
                        error: error.clone(),
                        tls: e.is_tls_failure(),
                    }))
                    .await;
                return Err(TransportError::Http(error));
            }
            Err(_) => {
                let error = format!("no response within {:?}", options.timeout);
                return Err(TransportError::Http(error));
            }
        };
        let status = response.status().as_u16();
        let response_headers = record_headers(response.headers(), options);
        // Responses come on the stream; the POST's own body is only evidence.
        let body = tokio::time::timeout(
            options.timeout,
            super::http::read_body(response, options.max_frame),
        )
        .await
        .ok()
        .and_then(Result::ok)
        .map(|b| String::from_utf8_lossy(&b).into_owned())
        .unwrap_or_default();
        let _ = tx
            .send(Inbound::Http(HttpRecord::Exchange {
                method: "POST".into(),
                url: url.to_string(),
                request_headers,
                status,
                response_headers,
                body: (!body.is_empty()).then(|| options.redact(&body)),
            }))
            .await;
        if status >= 400 {
            return Err(TransportError::Rejected { status });
        }
        Ok(())
    }
}

/// Reads the SSE stream: the `endpoint` event first, then messages.
async fn read_stream(
    handle: HttpHandle,
    tx: mpsc::Sender<Inbound>,
    endpoint: oneshot::Sender<Result<reqwest::Url, String>>,
) {
    let options = handle.options().clone();
    let stream = GetStream {
        handle,
        tx,
        options,
    };
    if let Some(opened) = stream.open(endpoint).await {
        stream.read(opened).await;
    }
}

/// What the endpoint event is awaited on: the POST URI, or why there is none.
type EndpointSender = oneshot::Sender<Result<reqwest::Url, String>>;

/// The GET stream of an HTTP+SSE connection, which carries every server message.
struct GetStream {
    handle: HttpHandle,
    tx: mpsc::Sender<Inbound>,
    options: HttpOptions,
}

impl GetStream {
    /// Sends the GET and records its exchange: the response when it is an SSE stream,
    /// with `endpoint` to await its endpoint event on; else `endpoint` is told why the
    /// URL is no HTTP+SSE endpoint (or dropped when the request cannot even be built).
    async fn open(&self, endpoint: EndpointSender) -> Option<(reqwest::Response, EndpointSender)> {
        let (options, tx) = (&self.options, &self.tx);
        let mut req = self
            .handle
            .client()
            .get(options.url.clone())
            .header(reqwest::header::ACCEPT, "text/event-stream");
        for (k, v) in &options.headers {
            req = req.header(k, v);
        }
        let request = req.build().ok()?;
        let request_headers = record_headers(request.headers(), options);
        let url = options.url.to_string();
        let execute = self.handle.client().execute(request);
        let response = match tokio::time::timeout(options.timeout, execute).await {
            Ok(Ok(r)) => r,
            Ok(Err(e)) => {
                let error = options.redact(&error_chain(&e));
                let _ = tx
                    .send(Inbound::Http(HttpRecord::Failed {
                        method: "GET".into(),
                        url: url.clone(),
                        error: error.clone(),
                        tls: e.is_tls_failure(),
                    }))
                    .await;
                let _ = endpoint.send(Err(format!("cannot reach {url}: {error}")));
                return None;
            }
            Err(_) => {
                let _ = endpoint.send(Err(format!(
                    "{url}: no response within {:?}",
                    options.timeout
                )));
                return None;
            }
        };
        let status = response.status().as_u16();
        let response_headers = record_headers(response.headers(), options);
        let _ = tx
            .send(Inbound::Http(HttpRecord::Exchange {
                method: "GET".into(),
                url: url.clone(),
                request_headers,
                status,
                response_headers: response_headers.clone(),
                body: None,
            }))
            .await;
        let sse = response_headers.iter().any(|(k, v)| {
            k == "content-type" && v.to_ascii_lowercase().starts_with("text/event-stream")
        });
        if status != 200 || !sse {
            let _ = endpoint.send(Err(format!(
                "{url} answered GET with {status}, not an SSE stream: not an HTTP+SSE endpoint"
            )));
            return None;
        }
        Some((response, endpoint))
    }

    /// Reads the stream's events to its end, which is recorded; `endpoint` learns the
    /// first endpoint event, or that the stream ended without one.
    async fn read(&self, (response, endpoint): (reqwest::Response, EndpointSender)) {
        let mut endpoint = Some(endpoint);
        let mut events = SseReader::from_response(response, self.options.max_frame);
        let reason = loop {
            match events.next().await {
                None => break "the server closed the stream".to_owned(),
                Some(Err(e)) => break format!("broken stream: {e}"),
                Some(Ok(ev)) => self.event(ev, &mut endpoint).await,
            }
        };
        if let Some(ep) = endpoint.take() {
            let _ = ep.send(Err(format!(
                "the stream ended without an `endpoint` event ({reason})"
            )));
        }
        let _ = self
            .tx
            .send(Inbound::Http(HttpRecord::StreamEnd {
                stream: "GET".into(),
                reason,
            }))
            .await;
    }

    /// Records one event, then acts on it: the first `endpoint` event names the POST URI,
    /// and a `message` event's data is a server message.
    async fn event(&self, ev: SseEvent, endpoint: &mut Option<EndpointSender>) {
        let tx = &self.tx;
        let _ = tx
            .send(Inbound::Http(HttpRecord::SseEvent {
                stream: "GET".into(),
                id: ev.id.clone(),
                event: ev.event.clone(),
                retry_ms: ev.retry.map(|d| d.as_millis() as u64),
                data_bytes: ev.data.len(),
                data: (ev.event == "endpoint").then(|| ev.data.clone()),
            }))
            .await;
        if ev.event == "endpoint" {
            if let Some(ep) = endpoint.take() {
                let joined = self
                    .options
                    .url
                    .join(ev.data.trim())
                    .map_err(|e| format!("the endpoint event {:?} is not a URI: {e}", ev.data));
                let _ = ep.send(joined);
            }
            return;
        }
        if ev.event != "message" || ev.data.trim().is_empty() {
            return;
        }
        match serde_json::from_str::<serde_json::Value>(&ev.data) {
            Ok(v) => deliver(&self.handle, v, &ev.data, tx).await,
            Err(e) => {
                let _ = tx
                    .send(Inbound::Http(HttpRecord::Invalid {
                        context: "SSE GET".into(),
                        problem: format!("event data is not JSON: {e}"),
                    }))
                    .await;
            }
        }
    }
}

impl Transport for SseTransport {
    fn send(&mut self, message: Vec<u8>) -> BoxFuture<'_, Result<(), TransportError>> {
        Box::pin(self.post(message))
    }

    fn send_raw(&mut self, bytes: Vec<u8>) -> BoxFuture<'_, Result<(), TransportError>> {
        Box::pin(async move {
            // Raw input may be refused with an HTTP error; that is an answer, not a failure.
            let _ = self.post(bytes).await;
            Ok(())
        })
    }

    fn recv(&mut self) -> BoxFuture<'_, Option<Inbound>> {
        Box::pin(self.inbound.recv())
    }

    fn shutdown(&mut self) -> BoxFuture<'_, ShutdownReport> {
        Box::pin(async move {
            // The old transport has no DELETE: closing the stream ends the session.
            self.stream.abort();
            self.tx = None;
            ShutdownReport {
                stage: ShutdownStage::Disconnected,
                exit: None,
                took: Duration::ZERO,
            }
        })
    }

    fn stderr(&self) -> Option<&StderrLog> {
        None
    }

    fn describe(&self) -> String {
        format!("{} (HTTP+SSE)", self.handle.options().url)
    }
}

impl Drop for SseTransport {
    fn drop(&mut self) {
        self.stream.abort();
    }
}

/// `--transport auto`: the spec's backwards-compatibility procedure (2025-03-26 and later,
/// `basic/transports#backwards-compatibility`). POST an `initialize`; a 400, 404 or 405
/// answer means an old server, confirmed by a GET whose first event is `endpoint`. The probe
/// session is ended (DELETE) when the server gave it an id. True when the server speaks
/// only the old HTTP+SSE transport.
pub async fn is_legacy(options: &HttpOptions) -> bool {
    let Ok(client) = client(options) else {
        return false;
    };
    let init = serde_json::json!({
        "jsonrpc": "2.0", "id": "mcpcheck-detect", "method": "initialize",
        "params": {"protocolVersion": crate::protocol::Revision::LATEST_HANDSHAKE.as_str(),
                   "capabilities": {}, "clientInfo": {"name": "mcpcheck", "version": env!("CARGO_PKG_VERSION")}}
    });
    let with_headers = |mut req: reqwest::RequestBuilder| {
        for (k, v) in &options.headers {
            req = req.header(k, v);
        }
        req
    };
    let post = with_headers(client.post(options.url.clone()))
        .header(reqwest::header::ACCEPT, super::http::POST_ACCEPT)
        .header(reqwest::header::CONTENT_TYPE, "application/json")
        .body(init.to_string());
    let send = |req: reqwest::RequestBuilder| async {
        client.execute(req.build().map_err(SendError::from)?).await
    };
    let status = match tokio::time::timeout(options.timeout, send(post)).await {
        Ok(Ok(r)) => {
            if let Some(id) = r.headers().get(super::http::SESSION_HEADER).cloned() {
                drop(r);
                let delete =
                    with_headers(client.request(reqwest::Method::DELETE, options.url.clone()))
                        .header(super::http::SESSION_HEADER, id);
                let _ = tokio::time::timeout(options.timeout, send(delete)).await;
                return false;
            }
            r.status().as_u16()
        }
        // Unreachable: the Streamable HTTP probe reports it clearly.
        _ => return false,
    };
    if !matches!(status, 400 | 404 | 405) {
        return false;
    }
    let get = with_headers(client.get(options.url.clone()))
        .header(reqwest::header::ACCEPT, "text/event-stream");
    let first = async {
        let r = send(get).await.ok()?;
        SseReader::from_response(r, options.max_frame)
            .next()
            .await?
            .ok()
    };
    match tokio::time::timeout(options.timeout, first).await {
        Ok(Some(ev)) => ev.event == "endpoint",
        _ => false,
    }
}

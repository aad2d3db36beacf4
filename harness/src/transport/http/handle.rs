//! The state one HTTP connection shares between the transport's tasks and raw scenario
//! exchanges: the client, the options, the session id and the negotiated revision.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};

use reqwest::header::HeaderMap;
use serde_json::Value;

use super::client::HttpClient;
use super::diagnose::error_chain;
use super::headers::{SESSION_HEADER, VERSION_HEADER, record_headers};
use super::{HttpError, HttpOptions};
use crate::protocol::Revision;

/// Session state shared by the transport's tasks and by raw scenario exchanges.
#[derive(Debug, Default)]
pub(super) struct State {
    pub(super) session_id: Option<String>,
    /// The negotiated revision, once `initialize` was answered.
    pub(super) revision: Option<String>,
    /// Id of the `initialize` request in flight, to spot its response.
    pub(super) initialize_id: Option<Value>,
    /// The standalone GET stream was opened (or refused) already.
    pub(super) get_opened: bool,
    pub(super) streams: u64,
    /// Every SSE event id received in this session, with the stream that carried it first:
    /// ids "MUST be globally unique across all streams within that session".
    pub(super) event_ids: HashMap<String, String>,
    /// An SSE response without `X-Accel-Buffering: no` was reported already (once per
    /// session is evidence enough).
    pub(super) buffering_noted: bool,
}

/// A handle on an HTTP connection for raw exchanges (scenario `http` steps): the client,
/// the endpoint, the headers, and the session's current id and version.
#[derive(Clone, Debug)]
pub struct HttpHandle {
    client: HttpClient,
    pub(super) options: Arc<HttpOptions>,
    state: Arc<Mutex<State>>,
}

impl HttpHandle {
    /// The HTTP client the transport uses (its TLS setup included). Outside the transport,
    /// only `session::RawHttp` sends with it, after the tool-call gate (a test in
    /// `session::gate` keeps it so); others build a `reqwest::Request` and hand it to that.
    pub fn client(&self) -> &HttpClient {
        &self.client
    }
    /// The options the transport was built with.
    pub fn options(&self) -> &HttpOptions {
        &self.options
    }
    /// The session id the server issued, if any.
    pub fn session_id(&self) -> Option<String> {
        self.lock().session_id.clone()
    }
    /// Whether an `initialize` was answered on this connection.
    pub fn initialized(&self) -> bool {
        self.lock().revision.is_some()
    }
    /// The `MCP-Protocol-Version` value the transport sends, if any.
    pub fn protocol_version_header(&self) -> Option<String> {
        version_header(&self.lock())
    }
    /// A handle on a new connection, with no session yet (also the legacy SSE transport's).
    pub(crate) fn new(client: HttpClient, options: HttpOptions) -> Self {
        HttpHandle {
            client,
            options: Arc::new(options),
            state: Arc::new(Mutex::new(State::default())),
        }
    }
    pub(super) fn lock(&self) -> std::sync::MutexGuard<'_, State> {
        self.state.lock().unwrap_or_else(|e| e.into_inner())
    }
    /// Request headers as recorded (secrets redacted).
    pub fn record_headers(&self, headers: &HeaderMap) -> Vec<(String, String)> {
        record_headers(headers, &self.options)
    }
    /// The revision `initialize` negotiated, if it is one mcpcheck knows.
    pub fn negotiated(&self) -> Option<Revision> {
        self.lock().revision.as_deref()?.parse().ok()
    }
    /// Whether streams of this session may be resumed with `Last-Event-ID` (2025-03-26
    /// to 2025-11-25; the stateless revision has no resumption).
    pub fn resumable(&self) -> bool {
        let rev = self.lock().revision.clone();
        self.options.stateless_version.is_none()
            && rev
                .and_then(|r| r.parse::<Revision>().ok())
                .is_none_or(|r| r < Revision::V2026_07_28)
    }
    /// Notes an SSE event id received on `stream`; returns the stream that carried the
    /// same id before, if any.
    pub fn note_event_id(&self, id: &str, stream: &str) -> Option<String> {
        let mut s = self.lock();
        match s.event_ids.get(id) {
            Some(first) => Some(first.clone()),
            None => {
                s.event_ids.insert(id.to_owned(), stream.to_owned());
                None
            }
        }
    }
    /// A request to the endpoint with the common headers, the session id and the version
    /// header.
    pub fn request(&self, method: reqwest::Method, accept: &str) -> reqwest::RequestBuilder {
        let mut req = self
            .client
            .request(method, self.options.url.clone())
            .header(reqwest::header::ACCEPT, accept);
        for (k, v) in &self.options.headers {
            req = req.header(k, v);
        }
        let state = self.lock();
        if let Some(id) = &state.session_id {
            req = req.header(SESSION_HEADER, id);
        }
        if let Some(v) = version_header(&state) {
            req = req.header(VERSION_HEADER, v);
        }
        req
    }
}

/// The version header is sent from 2025-06-18 on (the header does not exist before).
fn version_header(state: &State) -> Option<String> {
    let rev = state.revision.as_deref()?;
    match rev.parse::<Revision>() {
        Ok(r) if r >= Revision::V2025_06_18 => Some(rev.to_owned()),
        Ok(_) => None,
        // An unknown version string: send what was negotiated, verbatim.
        Err(_) => Some(rev.to_owned()),
    }
}

/// The HTTP client every exchange uses: no redirects, no proxies (targets are loopback).
/// The reqwest half is built once per runtime, connect timeout and CA bundle, and shared:
/// building it loads the platform's root certificates, which a run opening a session per
/// scenario would otherwise do a hundred times. (Its pooled connections belong to the
/// runtime that opened them, hence one per runtime.) Plain-HTTP connections stay per
/// client.
pub(crate) fn client(options: &HttpOptions) -> Result<HttpClient, HttpError> {
    type Key = (
        Option<tokio::runtime::Id>,
        std::time::Duration,
        Option<Vec<u8>>,
    );
    static BUILT: Mutex<Vec<(Key, reqwest::Client)>> = Mutex::new(Vec::new());
    let runtime = tokio::runtime::Handle::try_current().ok().map(|h| h.id());
    let key: Key = (runtime, options.timeout, options.ca_pem.clone());
    let mut built = BUILT.lock().unwrap_or_else(|e| e.into_inner());
    let reqwest = match built.iter().find(|(k, _)| *k == key) {
        Some((_, client)) => client.clone(),
        None => {
            let client = build_reqwest(options)?;
            // A client of an earlier runtime (a test's) is not used again.
            built.retain(|((_, timeout, pem), _)| (timeout, pem) != (&key.1, &key.2));
            built.push((key, client.clone()));
            client
        }
    };
    Ok(HttpClient::new(reqwest, options.timeout))
}

fn build_reqwest(options: &HttpOptions) -> Result<reqwest::Client, HttpError> {
    crate::transport::install_crypto_provider();
    let mut builder = reqwest::Client::builder()
        .connect_timeout(options.timeout)
        .redirect(reqwest::redirect::Policy::none())
        .no_proxy();
    if let Some(pem) = &options.ca_pem {
        let certs = reqwest::Certificate::from_pem_bundle(pem)
            .map_err(|e| HttpError::Client(format!("--cacert: {}", error_chain(&e))))?;
        builder = builder.tls_certs_merge(certs);
    }
    builder
        .build()
        .map_err(|e| HttpError::Client(error_chain(&e)))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn version_header_from_2025_06_18() {
        let mut s = State::default();
        assert_eq!(version_header(&s), None);
        s.revision = Some("2025-03-26".into());
        assert_eq!(version_header(&s), None);
        s.revision = Some("2025-06-18".into());
        assert_eq!(version_header(&s).as_deref(), Some("2025-06-18"));
    }
}

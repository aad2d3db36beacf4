//! The Streamable HTTP transport (spec: `basic/transports#streamable-http`, 2025-03-26 on).
//!
//! Every outbound message is its own POST. What comes back (a JSON body, an SSE stream
//! carrying the response and interleaved server messages, or `202 Accepted`) is turned
//! into the same [`Inbound`](crate::transport::Inbound) items the stdio transport yields, plus
//! an `Inbound::Http`
//! record of each exchange for the transcript. The session id from the `initialize`
//! response and the negotiated protocol version are sent on every later request.
//!
//! An SSE stream that ends before the response it carries is resumed (`resume`):
//! GET with `Last-Event-ID`, after the server's `retry`, a bounded number of times within
//! the request timeout (spec 2025-03-26 on: basic/transports#resumability-and-redelivery;
//! 2025-11-25 adds the server-initiated close and the client's polling).
//!
//! 2026-07-28 has no resumption, and a request is cancelled by closing its stream
//! (basic/patterns/cancellation#transport-specific-cancellation): a `notifications/cancelled`
//! for a request whose stream is open closes that stream instead of being POSTed. A
//! `subscriptions/listen` stream carries notifications and no response
//! (basic/patterns/subscriptions): it is read for as long as the session lasts, never
//! resumed, and ends when the client cancels it, the server closes it, or the session ends.
//!
//! The pieces: `exchange` (the transport, and one request's exchange), `sse_stream` (reading
//! one response stream), `resume` (reconnecting with `Last-Event-ID`), `body` (reading a body
//! and delivering a message, which all three use; none of them imports the one above it),
//! `headers` (what is sent and how it is recorded), `handle` (the session state raw exchanges
//! share), `record` (the transcript's view), `diagnose` (why an endpoint cannot be tested at
//! all).

mod auth_tokens;
mod body;
mod client;
mod diagnose;
mod exchange;
mod handle;
mod headers;
mod quickack;
mod record;
mod resume;
mod sse_stream;

use std::time::Duration;

use reqwest::header::{HeaderName, HeaderValue};

pub use auth_tokens::AuthTokens;
pub(crate) use body::{deliver, read_body};
pub use client::{HttpClient, SendError};
pub use diagnose::{error_chain, is_tls_failure, setup_problem};
pub use exchange::HttpTransport;
pub use handle::HttpHandle;
pub(crate) use handle::client;
pub(crate) use headers::record_headers;
pub use headers::{
    METHOD_HEADER, NAME_HEADER, POST_ACCEPT, SESSION_HEADER, VERSION_HEADER, header_value,
    stateless_headers,
};
pub use record::{HttpRecord, StreamAnomaly};
pub use resume::{DEFAULT_RETRY, MAX_RESUMES, Reconnection, reconnect};
pub use sse_stream::read_sse_chunks;

/// Bytes of a non-SSE body kept in the transcript.
const BODY_QUOTE: usize = 64 * 1024;
/// Items the transport's tasks may queue before the session reads them.
const INBOUND_CAPACITY: usize = 4096;

/// Where and how to reach a Streamable HTTP server.
#[derive(Clone, Debug)]
pub struct HttpOptions {
    /// The MCP endpoint, e.g. `http://127.0.0.1:8808/mcp`.
    pub url: reqwest::Url,
    /// Extra headers sent on every request (`--header`, and `Authorization` from
    /// `--bearer-env`).
    pub headers: Vec<(HeaderName, HeaderValue)>,
    /// Values never written to a transcript or report (bearer tokens).
    pub secrets: Vec<String>,
    /// Connect and response-header timeout of one exchange.
    pub timeout: Duration,
    /// Largest body or SSE event mcpcheck reads.
    pub max_frame: usize,
    /// 2026-07-28: the version for `MCP-Protocol-Version` on requests whose `_meta` leaves
    /// it out (a malformed-request scenario); the headers are sent on every request.
    pub stateless_version: Option<String>,
    /// PEM CA certificates trusted beside the system's roots (`--cacert`), checked when read.
    pub ca_pem: Option<Vec<u8>>,
    /// Tokens for the `auth/` scenarios (each also in `secrets`).
    pub auth_tokens: AuthTokens,
    /// Whether the endpoint has answered in this run, shared by all its sessions.
    pub reached: Reached,
}

/// Whether an endpoint has answered an HTTP request (any status) in this run, shared by
/// every session of the run. Before an answer, a refused connection is a setup problem
/// (a wrong URL, a server not started: exit 2); after one, the server went away mid-run,
/// which is the server's failure, judged like a crashed stdio server.
#[derive(Clone, Debug, Default)]
pub struct Reached(std::sync::Arc<std::sync::atomic::AtomicBool>);

impl Reached {
    /// Notes an answer.
    pub fn mark(&self) {
        self.0.store(true, std::sync::atomic::Ordering::Relaxed);
    }

    /// Whether an answer came.
    pub fn get(&self) -> bool {
        self.0.load(std::sync::atomic::Ordering::Relaxed)
    }
}

/// Errors of the HTTP transport.
#[derive(Debug, thiserror::Error)]
pub enum HttpError {
    /// The URL is not http:// or https://.
    #[error("{url}: the URL must start with http:// or https://")]
    Scheme {
        /// The URL given.
        url: String,
    },
    /// The URL's host is not a loopback address.
    #[error("{url}: mcpcheck only connects to loopback addresses (127.0.0.1, ::1, localhost)")]
    NotLoopback {
        /// The URL given.
        url: String,
    },
    /// The HTTP client could not be built (e.g. a bad CA file).
    #[error("cannot build the HTTP client: {0}")]
    Client(String),
    /// An exchange failed.
    #[error("{method} {url}: {reason}")]
    Exchange {
        /// The HTTP method.
        method: String,
        /// The URL.
        url: String,
        /// What went wrong.
        reason: String,
    },
}

impl HttpOptions {
    /// Checks the URL (scheme, loopback host) and builds the options.
    pub fn new(url: &str) -> Result<Self, HttpError> {
        let parsed = reqwest::Url::parse(url).map_err(|_| HttpError::Scheme { url: url.into() })?;
        if !matches!(parsed.scheme(), "http" | "https") {
            return Err(HttpError::Scheme { url: url.into() });
        }
        let host = parsed.host_str().unwrap_or("");
        let bare = host.trim_start_matches('[').trim_end_matches(']');
        let loopback = match bare.parse::<std::net::IpAddr>() {
            Ok(ip) => ip.is_loopback(),
            Err(_) => host.eq_ignore_ascii_case("localhost"),
        };
        if !loopback {
            return Err(HttpError::NotLoopback { url: url.into() });
        }
        Ok(HttpOptions {
            url: parsed,
            headers: Vec::new(),
            secrets: Vec::new(),
            timeout: Duration::from_secs(10),
            max_frame: super::framing::DEFAULT_MAX_FRAME,
            stateless_version: None,
            ca_pem: None,
            auth_tokens: AuthTokens::default(),
            reached: Reached::default(),
        })
    }

    /// Replaces every secret in `text` with `[REDACTED]`.
    pub fn redact(&self, text: &str) -> String {
        redact(text, &self.secrets)
    }
}

/// Replaces every occurrence of each secret with `[REDACTED]`.
pub fn redact(text: &str, secrets: &[String]) -> String {
    redact_owned(text.to_owned(), secrets)
}

/// [`redact`] of a text the caller gives away: without a secret in it, the same text,
/// not a copy (a JSON report of a run is megabytes).
pub fn redact_owned(mut text: String, secrets: &[String]) -> String {
    for s in secrets.iter().filter(|s| !s.is_empty()) {
        if text.contains(s.as_str()) {
            text = text.replace(s.as_str(), "[REDACTED]");
        }
    }
    text
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_loopback_urls() {
        assert!(HttpOptions::new("http://127.0.0.1:1/mcp").is_ok());
        assert!(HttpOptions::new("http://[::1]:1/mcp").is_ok());
        assert!(HttpOptions::new("http://localhost:1/mcp").is_ok());
        assert!(matches!(
            HttpOptions::new("http://example.com/mcp"),
            Err(HttpError::NotLoopback { .. })
        ));
        assert!(matches!(
            HttpOptions::new("http://10.0.0.1/mcp"),
            Err(HttpError::NotLoopback { .. })
        ));
        assert!(matches!(
            HttpOptions::new("ftp://127.0.0.1/x"),
            Err(HttpError::Scheme { .. })
        ));
    }

    #[test]
    fn redacts_every_occurrence() {
        let s = vec!["s3cret".to_owned()];
        assert_eq!(redact("a s3cret b s3cret", &s), "a [REDACTED] b [REDACTED]");
        assert_eq!(redact("nothing", &s), "nothing");
    }
}

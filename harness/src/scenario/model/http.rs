//! The `http` step as the scenario file states it: one raw HTTP exchange (method, body,
//! headers) and what its answer must look like; `scenario::exec::http` runs it.

use std::time::Duration;

use serde_json::Value;

use super::Template;

/// One raw exchange and what its response must look like.
#[derive(Clone, Debug, PartialEq)]
pub struct HttpStep {
    /// `GET`, `POST` or `DELETE`.
    pub method: String,
    /// A JSON body (a string is sent as is, for malformed bodies).
    pub body: Option<Template>,
    /// The `Mcp-Session-Id` header to send.
    pub session: HeaderChoice,
    /// The `MCP-Protocol-Version` header to send.
    pub protocol_version: HeaderChoice,
    /// Headers added or replaced (`Origin`, `Host`, `Accept`, ...).
    pub headers: Vec<(String, String)>,
    /// `headers: "${var}"`: an object of header names and values built at run time, sent
    /// instead of a fixed list (the `Mcp-Param-*` headers of a listed tool).
    pub headers_from: Option<Template>,
    /// How long the exchange may take; an SSE stream is read until then.
    pub within: Duration,
    /// Drop the connection after the first SSE event with an id (before the response) and
    /// resume with GET and `Last-Event-ID`.
    pub resume: bool,
    /// `parallel: N`: send N copies of the request at once (a JSON-RPC id gets the copy's
    /// number), each answer held to `expect` (1: one request).
    pub parallel: usize,
    /// What the answer must look like.
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
    /// This status.
    Exact(u16),
    /// Any status of this hundred (`4` for `4xx`).
    Class(u16),
}

impl Status {
    /// Whether an answer with status `code` is one of these.
    pub fn matches(self, code: u16) -> bool {
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

/// What the answer to an `http` step must look like.
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
    /// Headers that may be absent, but when present must match a regex (a MAY whose form
    /// is a MUST: the `Mcp-Session-Id` a server need not issue).
    pub headers_if_present: Vec<(String, HeaderRegex)>,
    /// A JSON-RPC response with this id must be in the body or the SSE stream;
    /// `error: Some(true)` demands an error response.
    pub response: Option<(Value, Option<bool>)>,
    /// `response: { code: N }` (or a list): that response must be an error with one of
    /// these codes (empty: any code, or a result).
    pub response_codes: Vec<i64>,
    /// `response: { not_code: N }`: that response may be anything but an error with this
    /// code (a header check that must not reject a request, whatever else refuses it).
    pub response_not_code: Option<i64>,
    /// `event_ids: unique`: the answer must be an SSE stream with event ids (else the
    /// scenario is skipped), each new in the session.
    pub unique_event_ids: bool,
    /// `sse: [priming, retry]`: the SSE SHOULDs of a POST's stream to hold (the answer
    /// must be an SSE stream, else the scenario is skipped).
    pub sse: Vec<SseShould>,
}

impl HttpExpect {
    /// Whether judging the answer needs what an SSE stream carries (its messages, event
    /// ids, events), not only the response head.
    pub fn reads_stream(&self) -> bool {
        self.response.is_some() || self.empty_body || self.unique_event_ids || !self.sse.is_empty()
    }
}

/// A SHOULD of an SSE answer to a POST (2025-11-25 basic/transports#sending-messages-to-the-server).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum SseShould {
    /// `priming`: the stream starts with an event that has an id and empty data, so the
    /// client can reconnect with `Last-Event-ID`.
    Priming,
    /// `retry`: a connection the server closes before the response is preceded by an
    /// event with a `retry` field.
    RetryBeforeClose,
}

/// A regex, compared by its text (the model derives `PartialEq`).
#[derive(Clone, Debug)]
pub struct HeaderRegex(pub regex::Regex);

impl PartialEq for HeaderRegex {
    fn eq(&self, other: &Self) -> bool {
        self.0.as_str() == other.0.as_str()
    }
}

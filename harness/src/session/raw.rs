//! Raw writes (framing tests, the fuzzer): bytes sent as given, scanned for the requests
//! inside them so that their responses and progress are still matched.

use serde_json::Value;

use super::{Session, SessionError};
use crate::outcome::Direction;
use crate::protocol::{RequestId, raw_id};
use crate::transport::TransportError;

impl Session {
    /// Sends one message's bytes as given, framed by the transport like a request (the
    /// fuzzer over HTTP): a POST refused with an HTTP error status and no JSON-RPC
    /// response fails with [`TransportError::Rejected`], where `send_raw` takes it silently.
    pub async fn send_frame(&mut self, bytes: Vec<u8>) -> Result<(), SessionError> {
        self.admit(&bytes)?;
        self.transcript
            .push(Direction::Sent, String::from_utf8_lossy(&bytes));
        self.note_raw_progress_tokens(&bytes);
        match self.transport.send(bytes).await {
            Ok(()) => Ok(()),
            Err(source @ TransportError::Rejected { .. }) => Err(SessionError::Send {
                method: "(fuzz input)".into(),
                source,
            }),
            Err(source) => Err(self.send_failed("(raw bytes)", source).await),
        }
    }

    /// Sends bytes exactly as given (framing tests).
    pub async fn send_raw(&mut self, bytes: Vec<u8>) -> Result<(), SessionError> {
        // The server reads lines: a line begun by an earlier write is judged whole-so-far.
        let mut line = self.raw_partial_line.clone();
        line.extend_from_slice(&bytes);
        self.admit(&line)?;
        self.transcript
            .push(Direction::Sent, String::from_utf8_lossy(&bytes));
        self.note_raw_line_progress_tokens(&bytes);
        match self.transport.send_raw(bytes).await {
            Ok(()) => Ok(()),
            Err(source) => Err(self.send_failed("(raw bytes)", source).await),
        }
    }

    /// [`Self::note_raw_progress_tokens`] for bytes that continue the raw line stream (stdio):
    /// only complete lines are read, the rest waits for the write that ends it.
    fn note_raw_line_progress_tokens(&mut self, bytes: &[u8]) {
        /// A longer unterminated line is no request any server reads (frame limits).
        const MAX_PARTIAL: usize = 64 << 20;
        let Some(last_newline) = bytes.iter().rposition(|b| *b == b'\n') else {
            if self.raw_partial_line.len() + bytes.len() <= MAX_PARTIAL {
                self.raw_partial_line.extend_from_slice(bytes);
            } else {
                self.raw_partial_line.clear();
            }
            return;
        };
        let mut complete = std::mem::take(&mut self.raw_partial_line);
        complete.extend_from_slice(&bytes[..=last_newline]);
        self.note_raw_progress_tokens(&complete);
        let rest = &bytes[last_newline + 1..];
        if rest.len() <= MAX_PARTIAL {
            self.raw_partial_line.extend_from_slice(rest);
        }
    }

    /// Notes the progress tokens of requests inside raw bytes, so that progress for them
    /// counts as progress of a request in progress (`progress.active-token`), and a raw
    /// `subscriptions/listen`, after which change notifications may come (2026-07-28).
    fn note_raw_progress_tokens(&mut self, bytes: &[u8]) {
        for line in bytes.split(|b| *b == b'\n') {
            for request in raw_requests(line) {
                if request.method == "subscriptions/listen" {
                    self.sent.listens.push(request.id.to_value());
                }
                let Some(token) = request.progress_token else {
                    continue;
                };
                self.requests.note_raw_token(request.id, token);
            }
        }
    }
}

/// A request found in raw bytes: anything with an id that is not itself a response,
/// deliberately invalid requests (a method that is not a string) included.
#[derive(Clone, Debug, PartialEq)]
pub struct RawRequest {
    /// Its id, exactly as written.
    pub id: RequestId,
    /// The method, or `(invalid request)` when it is missing or not a string.
    pub method: String,
    /// `params._meta.progressToken`, when it carries one.
    pub progress_token: Option<Value>,
}

/// The requests in one line of raw JSON (one message or a batch). A line serde_json
/// refuses (a number beyond `f64`, such as `1e309`) is scanned as text: a server whose
/// parser takes it answers, and its answer must match the request, not be "unsolicited".
pub fn raw_requests(line: &[u8]) -> Vec<RawRequest> {
    if let Ok(value) = serde_json::from_slice::<Value>(line) {
        let items = match value {
            Value::Array(items) => items,
            one => vec![one],
        };
        return items.iter().filter_map(parsed_request).collect();
    }
    match raw_id::elements(line) {
        Some(items) => items.into_iter().filter_map(scanned_request).collect(),
        None => scanned_request(line).into_iter().collect(),
    }
}

fn parsed_request(item: &Value) -> Option<RawRequest> {
    Some(RawRequest {
        id: crate::protocol::request_id(item)?,
        method: item
            .get("method")
            .and_then(Value::as_str)
            .unwrap_or(INVALID)
            .to_owned(),
        progress_token: item.pointer("/params/_meta/progressToken").cloned(),
    })
}

fn scanned_request(item: &[u8]) -> Option<RawRequest> {
    let members = raw_id::members(item)?;
    if members
        .iter()
        .any(|(k, _)| matches!(k.as_deref(), Some("result" | "error")))
    {
        return None;
    }
    let progress_token = raw_id::member(item, "params")
        .and_then(|p| raw_id::member(p, "_meta"))
        .and_then(|m| raw_id::member(m, "progressToken"))
        .and_then(|t| serde_json::from_slice(t).ok());
    Some(RawRequest {
        id: raw_id::request_id(item)?,
        method: raw_id::string_member(item, "method").unwrap_or_else(|| INVALID.into()),
        progress_token,
    })
}

/// The method named for a raw request without a string `method`.
const INVALID: &str = "(invalid request)";

#[cfg(test)]
mod tests {
    use std::collections::VecDeque;
    use std::sync::Arc;
    use std::time::{Duration, Instant};

    use super::*;
    use crate::check::rules;
    use crate::schema::{SchemaStore, SearchPath};
    use crate::session::SessionConfig;
    use crate::session::scripted::Scripted;

    /// Found by `mcpcheck fuzz` against the reference: a split-frame mutation sent a
    /// `tools/call` in two writes, its progress token was looked for in each write alone
    /// and never registered, and the server's (correct) progress was reported as
    /// `progress.active-token`. The replay, which sends the line whole, did not reproduce it.
    #[tokio::test]
    async fn a_request_split_across_raw_writes_keeps_its_progress_token() {
        let server = Scripted(VecDeque::from([
            r#"{"jsonrpc":"2.0","method":"notifications/progress","params":{"progressToken":"tok-7","progress":1}}"#,
            r#"{"jsonrpc":"2.0","id":7,"result":{"content":[]}}"#,
        ]));
        // The fuzzer that found it may call every tool (the gate would keep a call of an
        // unlisted tool back under the default `readonly`).
        let config = SessionConfig {
            calls: crate::outcome::CallGrant::of(crate::outcome::ToolPolicy::All),
            ..SessionConfig::default()
        };
        let mut session = Session::new(
            Box::new(server),
            Arc::new(SchemaStore::new(SearchPath::default())),
            config,
            Instant::now(),
        );
        let id = RequestId::Number("7".into());
        session.expect_reply(id.clone(), "tools/call");
        let first = br#"{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"slow","#;
        let second = b"\"_meta\":{\"progressToken\":\"tok-7\"}}}\n{\"jsonrpc\":\"2.0\",";
        let third = b"\"id\":8,\"method\":\"ping\"}\n";
        for part in [&first[..], second, third] {
            session.send_raw(part.to_vec()).await.expect("sent");
        }
        let reply = session.poll_reply(&id, Duration::from_secs(10)).await;
        assert!(reply.is_some(), "the response arrives");
        let stray: Vec<_> = session
            .findings()
            .iter()
            .filter(|f| f.rule == rules::PROGRESS_ACTIVE_TOKEN.id)
            .collect();
        assert!(stray.is_empty(), "{stray:#?}");
    }

    /// A scenario's own ids are never allocated by the session, whichever comes first: a
    /// shared session may have allocated up to just below them.
    #[test]
    fn reserved_ids_are_never_allocated_until_the_next_window() {
        let mut session = Session::new(
            Box::new(Scripted(VecDeque::new())),
            Arc::new(SchemaStore::new(SearchPath::default())),
            SessionConfig::default(),
            Instant::now(),
        );
        session.reserve_ids([RequestId::int(1), RequestId::int(2), RequestId::int(4)]);
        assert_eq!(session.allocate_id(), RequestId::int(3));
        assert_eq!(session.allocate_id(), RequestId::int(5));
        session.begin_window(Instant::now());
        session.reserve_ids([RequestId::int(6)]);
        assert_eq!(session.allocate_id(), RequestId::int(7));
    }
}

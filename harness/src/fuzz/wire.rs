//! What the fuzzer writes: byte strings, and the requests they carry once the stream is
//! cut into lines the way the server will cut it.

use serde_json::Value;

use crate::protocol::{RequestId, raw_id};

/// One write to the server: bytes exactly as sent, and where they came from.
#[derive(Clone, Debug, PartialEq)]
pub struct Wire {
    /// The bytes, exactly as written.
    pub bytes: Vec<u8>,
    /// The method it carries, for coverage and signatures (`(raw)` when it has none).
    pub method: String,
    /// The tool a `tools/call` names.
    pub tool: Option<String>,
    /// How it was made: `valid`, `wrong-type`, `mutated:truncate`, ...
    pub origin: String,
}

impl Wire {
    /// A message as one newline-terminated line.
    pub fn line(value: &Value, origin: impl Into<String>) -> Self {
        let mut bytes = serde_json::to_vec(value).unwrap_or_default();
        bytes.push(b'\n');
        let method = value
            .get("method")
            .and_then(Value::as_str)
            .unwrap_or("(raw)")
            .to_owned();
        let tool = (method == "tools/call")
            .then(|| value.pointer("/params/name").and_then(Value::as_str))
            .flatten()
            .map(str::to_owned);
        Wire {
            bytes: sanitize(bytes),
            method,
            tool,
            origin: origin.into(),
        }
    }

    /// Bytes as given (framing damage), labelled with the method they started from.
    pub fn raw(bytes: Vec<u8>, method: &str, origin: impl Into<String>) -> Self {
        Wire {
            bytes: sanitize(bytes),
            method: method.to_owned(),
            tool: None,
            origin: origin.into(),
        }
    }
}

/// Scenario files interpolate `${name}` in `send_raw`, so a reproducer could not carry
/// those two bytes literally; the fuzzer never sends them.
fn sanitize(mut bytes: Vec<u8>) -> Vec<u8> {
    let mut i = 0;
    while i + 1 < bytes.len() {
        if bytes[i] == b'$' && bytes[i + 1] == b'{' {
            bytes[i] = b'_';
        }
        i += 1;
    }
    bytes
}

/// How the server cuts writes into messages.
#[derive(Clone, Debug)]
pub enum Framing {
    /// stdio: one byte stream, cut into lines across writes.
    Lines(Lines),
    /// HTTP: every write is one POST body, a message (or batch) of its own.
    Bodies,
}

impl Framing {
    /// How writes are framed for `target`'s transport.
    pub fn for_target(target: &crate::transport::target::Target) -> Self {
        match target.kind() {
            crate::transport::target::TransportKind::Stdio => Framing::Lines(Lines::default()),
            crate::transport::target::TransportKind::Http => Framing::Bodies,
        }
    }

    /// Whether a line is open (stdio only: a body is always complete).
    pub fn is_open(&self) -> bool {
        matches!(self, Framing::Lines(l) if l.is_open())
    }

    /// Feeds one write; returns the requests it completed.
    pub fn feed(&mut self, bytes: &[u8]) -> Vec<Expected> {
        match self {
            Framing::Lines(l) => l.feed(bytes),
            Framing::Bodies => requests_in(bytes),
        }
    }

    /// What `feed` would return, without feeding.
    pub fn peek(&self, bytes: &[u8]) -> Vec<Expected> {
        self.clone().feed(bytes)
    }

    /// Feeds one write whose requests were already read with `peek`.
    pub fn advance(&mut self, bytes: &[u8]) {
        if let Framing::Lines(l) = self {
            l.advance(bytes);
        }
    }

    /// A write as this framing sends it: over HTTP the line's newline is stdio framing,
    /// not part of the body, so one trailing newline is dropped.
    pub fn adapt(&self, bytes: &[u8]) -> Vec<u8> {
        match self {
            Framing::Lines(_) => bytes.to_vec(),
            Framing::Bodies => bytes.strip_suffix(b"\n").unwrap_or(bytes).to_vec(),
        }
    }
}

/// A request found in a complete line.
#[derive(Clone, Debug, PartialEq)]
pub struct Expected {
    /// Its id, which a response must echo.
    pub id: RequestId,
    /// Its method, or `(invalid request)`.
    pub method: String,
    /// A well-formed request (JSON-RPC 2.0, integer or string id, string method, params
    /// an object if present): the server must answer it. Others are only correlated.
    pub must_answer: bool,
}

/// Cuts the written stream into lines as the server will, across writes.
#[derive(Clone, Debug, Default)]
pub struct Lines {
    tail: Vec<u8>,
}

impl Lines {
    /// Whether a line is open (the last write did not end with a newline).
    pub fn is_open(&self) -> bool {
        !self.tail.is_empty()
    }

    /// Feeds one write; returns the requests of the lines it completed.
    pub fn feed(&mut self, bytes: &[u8]) -> Vec<Expected> {
        let mut out = Vec::new();
        let mut rest = bytes;
        while let Some(nl) = rest.iter().position(|&b| b == b'\n') {
            self.tail.extend_from_slice(&rest[..nl]);
            let line = std::mem::take(&mut self.tail);
            out.extend(requests_in(&line));
            rest = &rest[nl + 1..];
        }
        self.tail.extend_from_slice(rest);
        out
    }

    /// What `feed` would return, without feeding.
    pub fn peek(&self, bytes: &[u8]) -> Vec<Expected> {
        self.clone().feed(bytes)
    }

    /// Feeds one write whose requests were already read with `peek` (no parsing).
    pub fn advance(&mut self, bytes: &[u8]) {
        match bytes.iter().rposition(|&b| b == b'\n') {
            Some(nl) => {
                self.tail.clear();
                self.tail.extend_from_slice(&bytes[nl + 1..]);
            }
            None => self.tail.extend_from_slice(bytes),
        }
    }
}

/// The requests one line carries: one object, or the elements of a batch (never required
/// to be answered one by one: most revisions have no batches).
pub fn requests_in(line: &[u8]) -> Vec<Expected> {
    let Ok(value) = serde_json::from_slice::<Value>(line) else {
        return scanned(line);
    };
    match &value {
        Value::Array(items) => items.iter().filter_map(|i| expected(i, false)).collect(),
        v => expected(v, true).into_iter().collect(),
    }
}

/// The requests of a line serde_json cannot read (a number beyond `f64`, say) that is
/// still an object or batch: a server whose parser takes it answers, so the ids are
/// scanned from the text and correlated. Never required to be answered: JSON parsers may
/// refuse such numbers (RFC 8259 section 6), and then the answer is a parse error.
fn scanned(line: &[u8]) -> Vec<Expected> {
    let one = |item: &[u8]| {
        let members = raw_id::members(item)?;
        if members
            .iter()
            .any(|(k, _)| matches!(k.as_deref(), Some("result" | "error")))
        {
            return None;
        }
        Some(Expected {
            id: raw_id::request_id(item)?,
            method: raw_id::string_member(item, "method")
                .unwrap_or_else(|| "(invalid request)".into()),
            must_answer: false,
        })
    };
    match raw_id::elements(line) {
        Some(items) => items.into_iter().filter_map(one).collect(),
        None => one(line).into_iter().collect(),
    }
}

fn expected(item: &Value, top_level: bool) -> Option<Expected> {
    let id = crate::protocol::request_id(item)?;
    let method = item.get("method").and_then(Value::as_str);
    let well_formed = item.get("jsonrpc").and_then(Value::as_str) == Some("2.0")
        && method.is_some()
        && item.get("params").is_none_or(Value::is_object)
        && match item.get("id") {
            Some(Value::Number(n)) => n.is_i64(),
            _ => true,
        };
    Some(Expected {
        id,
        method: method.unwrap_or("(invalid request)").to_owned(),
        must_answer: top_level && well_formed,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn requests_are_found_across_split_writes() {
        let mut lines = Lines::default();
        assert!(lines.feed(br#"{"jsonrpc":"2.0","id":7,"#).is_empty());
        assert!(lines.is_open());
        let got = lines.feed(b"\"method\":\"ping\"}\n{\"jsonrpc\":\"2.0\",\"method\":\"x\"}\n");
        assert_eq!(got.len(), 1);
        assert_eq!(got[0].id, RequestId::int(7));
        assert!(got[0].must_answer);
        assert!(!lines.is_open());
    }

    #[test]
    fn malformed_requests_are_correlated_but_not_required() {
        let got = requests_in(br#"{"jsonrpc":"1.0","id":"a","method":"ping"}"#);
        assert!(!got[0].must_answer);
        let got = requests_in(br#"{"jsonrpc":"2.0","id":1.5,"method":"ping"}"#);
        assert!(!got[0].must_answer);
        let got = requests_in(br#"[{"jsonrpc":"2.0","id":3,"method":"ping"}]"#);
        assert!(!got[0].must_answer);
        assert!(requests_in(br#"{"jsonrpc":"2.0","id":3,"result":{}}"#).is_empty());
        assert!(requests_in(b"not json").is_empty());
    }

    #[test]
    fn requests_beyond_serde_json_are_correlated_by_their_scanned_id() {
        // Issue 12: a correct server answered these, and the answers matched nothing.
        let line =
            br#"{"jsonrpc":"2.0","id":"fz-12","method":"tools/call","params":{"name":1e309}}"#;
        let got = requests_in(line);
        assert_eq!(got.len(), 1);
        assert_eq!(got[0].id, RequestId::String("fz-12".into()));
        assert_eq!(got[0].method, "tools/call");
        assert!(!got[0].must_answer, "a parser may refuse the number");
        let batch = br#"[{"jsonrpc":"2.0","id":4,"method":"ping","params":{"n":-1e400}},{"id":5,"result":{}}]"#;
        let got = requests_in(batch);
        assert_eq!(got.len(), 1);
        assert_eq!(got[0].id, RequestId::int(4));
        assert!(requests_in(br#"{"jsonrpc":"2.0","id":4,"result":1e309}"#).is_empty());
        assert!(requests_in(br#"{"jsonrpc":"2.0","id":4,"params":{"n":1e309}"#).is_empty());
    }

    #[test]
    fn bodies_are_whole_messages() {
        let mut f = Framing::Bodies;
        assert!(f.feed(br#"{"jsonrpc":"2.0","id":7,"#).is_empty());
        assert!(!f.is_open());
        let got = f.feed(b"{\"jsonrpc\":\"2.0\",\"id\":8,\"method\":\"ping\"}\n");
        assert_eq!(got.len(), 1);
        assert_eq!(got[0].id, RequestId::int(8));
        assert_eq!(f.adapt(b"{}\n"), b"{}");
        assert_eq!(Framing::Lines(Lines::default()).adapt(b"{}\n"), b"{}\n");
    }

    #[test]
    fn template_markers_never_go_out() {
        let w = Wire::line(&serde_json::json!({"a": "${x}"}), "valid");
        assert!(!w.bytes.windows(2).any(|p| p == b"${"));
    }
}

//! NDJSON framing for the stdio transport: bytes in, frames and framing issues out.
//!
//! The stdio transport says each message is one line of JSON, delimited by `\n`, with no
//! embedded newlines, and that the server writes nothing else to stdout
//! (spec: `basic/transports#stdio`). Real servers break all of these, so the decoder
//! recovers where it can and reports each break as a [`FramingIssue`] instead of failing.
//!
//! The decoder is pure (no I/O) and is fuzzed (`fuzz/fuzz_targets/jsonrpc_framing.rs`).
//! Invariants: it never panics; it buffers at most `max_frame` bytes of one line; its
//! output does not depend on how the input was chunked; every [`Decoded::Frame`] is a
//! single line of at most `max_frame` bytes.

use serde_json::Value;

/// Default cap on one line: 4 MiB.
pub const DEFAULT_MAX_FRAME: usize = 4 * 1024 * 1024;

/// How many bytes of an over-long or undecodable line are kept to quote in a report.
pub const QUOTE_PREFIX: usize = 256;

/// One complete JSON value read from one line.
#[derive(Clone, Debug, PartialEq)]
pub struct RawFrame {
    /// Byte offset of the line's first byte in the stream.
    pub offset: u64,
    /// The line, without its `\n` and without a trailing `\r`.
    pub bytes: Vec<u8>,
    /// The parsed JSON value.
    pub value: Value,
}

impl RawFrame {
    /// The frame's text (frames are valid UTF-8 by construction).
    pub fn text(&self) -> &str {
        std::str::from_utf8(&self.bytes).unwrap_or("")
    }
}

/// Output of the decoder.
#[derive(Clone, Debug, PartialEq)]
pub enum Decoded {
    /// A complete JSON value.
    Frame(RawFrame),
    /// A line that breaks the framing rules.
    Issue(FramingIssue),
}

/// A break of the stdio framing rules, found while decoding.
#[derive(Clone, Debug, PartialEq)]
pub enum FramingIssue {
    /// A line longer than the configured limit. It was skipped up to the next newline.
    Oversize {
        /// Byte offset of the line in the stream.
        offset: u64,
        /// The line's length, in bytes.
        len: u64,
        /// The configured limit (`--max-frame-size`).
        limit: usize,
        /// The line's first bytes, to quote.
        prefix: Vec<u8>,
    },
    /// A line that is not valid UTF-8; JSON text must be UTF-8.
    InvalidUtf8 {
        /// Byte offset of the line in the stream.
        offset: u64,
        /// Bytes of the line that are valid UTF-8.
        valid_up_to: usize,
        /// The line's first bytes, to quote.
        prefix: Vec<u8>,
    },
    /// A line that is not JSON: a log line or banner on stdout.
    NotJson {
        /// Byte offset of the line in the stream.
        offset: u64,
        /// The line (lossily decoded).
        line: String,
        /// The JSON parser's error.
        error: String,
    },
    /// One JSON message written across several lines (pretty-printed). It is recovered
    /// so the session can go on, but the framing rule is broken.
    MultiLine {
        /// How many lines the message took.
        lines: usize,
        /// The message, recovered.
        frame: RawFrame,
    },
    /// The stream ended inside a line that had no terminating newline. The line's
    /// content, if it was a message, was still delivered as a frame.
    Unterminated {
        /// Byte offset of the line in the stream.
        offset: u64,
        /// The line's length, in bytes.
        len: u64,
    },
}

impl FramingIssue {
    /// Stream offset the issue starts at.
    pub fn offset(&self) -> u64 {
        match self {
            FramingIssue::Oversize { offset, .. }
            | FramingIssue::InvalidUtf8 { offset, .. }
            | FramingIssue::NotJson { offset, .. }
            | FramingIssue::Unterminated { offset, .. } => *offset,
            FramingIssue::MultiLine { frame, .. } => frame.offset,
        }
    }
}

/// A line kept back because it may be the start of a pretty-printed message.
#[derive(Debug)]
struct PendingLine {
    offset: u64,
    text: String,
}

/// Streaming NDJSON decoder. Feed it with [`push`](Self::push), close it with
/// [`finish`](Self::finish).
#[derive(Debug)]
pub struct NdjsonDecoder {
    max_frame: usize,
    /// Offset in the stream of the first byte of `line`.
    line_start: u64,
    line: Vec<u8>,
    /// Set while skipping the rest of an over-long line: (bytes seen so far, prefix).
    oversize: Option<(u64, Vec<u8>)>,
    /// Lines that may form one pretty-printed message; their total is kept under `max_frame`.
    pending: Vec<PendingLine>,
    pending_bytes: usize,
    /// Bracket nesting of the pending lines, so they are parsed only once the structure
    /// closes: re-parsing on every line would make recovery quadratic.
    nesting: Nesting,
    /// JSON parses run so far: linear in the input, and tested to stay so.
    parses: u64,
    out: Vec<Decoded>,
}

/// Tracks `{`/`[` nesting across lines, outside strings.
#[derive(Debug, Default, Clone, Copy)]
struct Nesting {
    depth: i64,
    in_string: bool,
    escaped: bool,
}

impl Nesting {
    fn feed(&mut self, text: &str) {
        for b in text.bytes() {
            if self.in_string {
                match (self.escaped, b) {
                    (true, _) => self.escaped = false,
                    (false, b'\\') => self.escaped = true,
                    (false, b'"') => self.in_string = false,
                    _ => {}
                }
            } else {
                match b {
                    b'"' => self.in_string = true,
                    b'{' | b'[' => self.depth += 1,
                    b'}' | b']' => self.depth -= 1,
                    _ => {}
                }
            }
        }
    }
}

impl Default for NdjsonDecoder {
    fn default() -> Self {
        Self::new(DEFAULT_MAX_FRAME)
    }
}

impl NdjsonDecoder {
    /// A decoder that skips lines longer than `max_frame` bytes.
    pub fn new(max_frame: usize) -> Self {
        NdjsonDecoder {
            max_frame: max_frame.max(1),
            line_start: 0,
            line: Vec::new(),
            oversize: None,
            pending: Vec::new(),
            pending_bytes: 0,
            nesting: Nesting::default(),
            parses: 0,
            out: Vec::new(),
        }
    }

    /// The line length limit, in bytes.
    pub fn max_frame(&self) -> usize {
        self.max_frame
    }

    /// How many JSON parses the decoder has run (each over at most one line, or one
    /// recovered multi-line message). Tests use it to pin the cost as linear.
    pub fn parse_attempts(&self) -> u64 {
        self.parses
    }

    /// The bytes of the line read so far but not yet terminated by a newline, and the
    /// line's length (which exceeds the bytes kept when the line is over the limit).
    pub fn partial(&self) -> (u64, &[u8]) {
        match &self.oversize {
            Some((len, prefix)) => (*len, prefix),
            None => (self.line.len() as u64, &self.line),
        }
    }

    /// Feeds a chunk of bytes; returns what became complete.
    pub fn push(&mut self, mut chunk: &[u8]) -> Vec<Decoded> {
        while !chunk.is_empty() {
            let (head, rest, newline) = match memchr(b'\n', chunk) {
                Some(i) => (&chunk[..i], &chunk[i + 1..], true),
                None => (chunk, &[][..], false),
            };
            self.extend_line(head);
            if newline {
                self.end_line(true);
            }
            chunk = rest;
        }
        std::mem::take(&mut self.out)
    }

    /// Ends the stream: flushes an unterminated last line and any pending lines.
    pub fn finish(&mut self) -> Vec<Decoded> {
        if !self.line.is_empty() || self.oversize.is_some() {
            self.end_line(false);
        }
        self.flush_pending();
        std::mem::take(&mut self.out)
    }

    fn extend_line(&mut self, bytes: &[u8]) {
        if let Some((seen, prefix)) = &mut self.oversize {
            // Keep filling the quote up to its size, whatever the read boundaries were.
            let room = QUOTE_PREFIX.saturating_sub(prefix.len());
            prefix.extend_from_slice(&bytes[..room.min(bytes.len())]);
            *seen += bytes.len() as u64;
            return;
        }
        if self.line.len() + bytes.len() > self.max_frame {
            let mut prefix = std::mem::take(&mut self.line);
            let seen = (prefix.len() + bytes.len()) as u64;
            prefix.truncate(QUOTE_PREFIX);
            let room = QUOTE_PREFIX - prefix.len();
            prefix.extend_from_slice(&bytes[..room.min(bytes.len())]);
            self.oversize = Some((seen, prefix));
            return;
        }
        self.line.extend_from_slice(bytes);
    }

    /// Ends the current line; `terminated` is false only at end of stream.
    fn end_line(&mut self, terminated: bool) {
        let offset = self.line_start;
        if let Some((len, prefix)) = self.oversize.take() {
            self.line_start += len + u64::from(terminated);
            self.flush_pending();
            self.out.push(Decoded::Issue(FramingIssue::Oversize {
                offset,
                len,
                limit: self.max_frame,
                prefix,
            }));
            return;
        }
        let mut line = std::mem::take(&mut self.line);
        self.line_start += line.len() as u64 + u64::from(terminated);
        if !terminated {
            self.out.push(Decoded::Issue(FramingIssue::Unterminated {
                offset,
                len: line.len() as u64,
            }));
        }
        if line.last() == Some(&b'\r') {
            line.pop();
        }
        self.take_line(offset, line);
    }

    fn take_line(&mut self, offset: u64, line: Vec<u8>) {
        let text = match String::from_utf8(line) {
            Ok(text) => text,
            Err(e) => {
                self.flush_pending();
                let valid_up_to = e.utf8_error().valid_up_to();
                let mut prefix = e.into_bytes();
                prefix.truncate(QUOTE_PREFIX);
                self.out.push(Decoded::Issue(FramingIssue::InvalidUtf8 {
                    offset,
                    valid_up_to,
                    prefix,
                }));
                return;
            }
        };
        if text.trim_matches(JSON_WHITESPACE).is_empty() {
            // Blank lines carry nothing; JSON allows the whitespace, so they are not an
            // issue. Only JSON's whitespace counts: a form feed or no-break space is noise.
            return;
        }
        if !self.pending.is_empty() {
            // A line that is a whole message by itself is never swallowed into a pending one.
            if let Ok(value) = self.parse(&text)
                && looks_like_message(&value)
            {
                self.flush_pending();
                self.out.push(Decoded::Frame(RawFrame {
                    offset,
                    bytes: text.into_bytes(),
                    value,
                }));
                return;
            }
            if self.pending_bytes + text.len() < self.max_frame {
                self.pending_bytes += text.len() + 1;
                self.nesting.feed(&text);
                self.pending.push(PendingLine { offset, text });
                let state = if self.nesting.depth > 0 {
                    PendingState::NeedMore
                } else {
                    self.try_pending()
                };
                match state {
                    PendingState::Complete(frame) => {
                        let lines = self.pending.len();
                        self.pending.clear();
                        self.pending_bytes = 0;
                        self.nesting = Nesting::default();
                        self.out
                            .push(Decoded::Issue(FramingIssue::MultiLine { lines, frame }));
                    }
                    PendingState::NeedMore => {}
                    PendingState::Broken => {
                        // The new line does not continue the message: report the lines kept
                        // so far as noise and read the new line on its own.
                        let last = self.pending.pop().expect("just pushed");
                        self.flush_pending();
                        self.take_line(last.offset, last.text.into_bytes());
                    }
                }
                return;
            }
            self.flush_pending();
        }
        match self.parse(&text) {
            Ok(value) => self.out.push(Decoded::Frame(RawFrame {
                offset,
                bytes: text.into_bytes(),
                value,
            })),
            Err(e) if e.is_eof() && starts_structure(&text) && text.len() < self.max_frame => {
                self.pending_bytes = text.len() + 1;
                self.nesting = Nesting::default();
                self.nesting.feed(&text);
                self.pending.push(PendingLine { offset, text });
            }
            Err(e) => self.out.push(Decoded::Issue(FramingIssue::NotJson {
                offset,
                line: text,
                error: e.to_string(),
            })),
        }
    }

    fn parse(&mut self, text: &str) -> serde_json::Result<Value> {
        self.parses += 1;
        serde_json::from_str(text).or_else(|e| {
            // Valid JSON with a number beyond a float's range is still a message.
            match super::huge_numbers::is_out_of_range(&e) {
                true => super::huge_numbers::parse(text).ok_or(e),
                false => Err(e),
            }
        })
    }

    fn try_pending(&mut self) -> PendingState {
        let joined = self
            .pending
            .iter()
            .map(|l| l.text.as_str())
            .collect::<Vec<_>>()
            .join("\n");
        match self.parse(&joined) {
            Ok(value) => PendingState::Complete(RawFrame {
                offset: self.pending[0].offset,
                bytes: joined.into_bytes(),
                value,
            }),
            Err(e) if e.is_eof() => PendingState::NeedMore,
            Err(_) => PendingState::Broken,
        }
    }

    /// Reports every pending line as a non-JSON line.
    fn flush_pending(&mut self) {
        for PendingLine { offset, text } in self.pending.drain(..) {
            let error = serde_json::from_str::<Value>(&text)
                .err()
                .map(|e| e.to_string())
                .unwrap_or_default();
            self.out.push(Decoded::Issue(FramingIssue::NotJson {
                offset,
                line: text,
                error,
            }));
        }
        self.pending_bytes = 0;
        self.nesting = Nesting::default();
    }
}

enum PendingState {
    Complete(RawFrame),
    NeedMore,
    Broken,
}

/// JSON's whitespace (RFC 8259, section 2); `\n` never reaches a line.
const JSON_WHITESPACE: [char; 3] = [' ', '\t', '\r'];

/// Whether a complete value on one line is a message in its own right, rather than a
/// line of a pretty-printed one (`{}` or `[]` alone inside an array).
fn looks_like_message(value: &Value) -> bool {
    match value {
        Value::Object(o) => o.contains_key("jsonrpc"),
        Value::Array(a) => a.iter().any(|v| v.get("jsonrpc").is_some()),
        _ => false,
    }
}

fn starts_structure(text: &str) -> bool {
    matches!(text.trim_start().as_bytes().first(), Some(b'{' | b'['))
}

fn memchr(needle: u8, haystack: &[u8]) -> Option<usize> {
    haystack.iter().position(|&b| b == needle)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn decode_all(input: &[u8], max: usize) -> Vec<Decoded> {
        let mut d = NdjsonDecoder::new(max);
        let mut out = d.push(input);
        out.extend(d.finish());
        out
    }

    fn frames(out: &[Decoded]) -> Vec<&str> {
        out.iter()
            .filter_map(|d| match d {
                Decoded::Frame(f) => Some(f.text()),
                _ => None,
            })
            .collect()
    }

    #[test]
    fn splits_lines_and_tolerates_crlf_and_blank_lines() {
        let out = decode_all(b"{\"a\":1}\r\n\n  \n{\"b\":2}\n", 1024);
        assert_eq!(frames(&out), vec!["{\"a\":1}", "{\"b\":2}"]);
        assert_eq!(out.len(), 2);
    }

    #[test]
    fn byte_at_a_time_matches_whole() {
        let input = b"{\"a\":1}\nnoise here\n{\n  \"x\": [1,\n 2]\n}\n\xff\xfe\n{\"b\":2}";
        let whole = decode_all(input, 1024);
        let mut d = NdjsonDecoder::new(1024);
        let mut split = Vec::new();
        for b in input {
            split.extend(d.push(std::slice::from_ref(b)));
        }
        split.extend(d.finish());
        assert_eq!(whole, split);
    }

    #[test]
    fn reports_noise_with_the_line() {
        let out = decode_all(b"Server started on stdio\n{\"a\":1}\n", 1024);
        assert!(
            matches!(&out[0], Decoded::Issue(FramingIssue::NotJson { line, offset: 0, .. }) if line == "Server started on stdio")
        );
        assert!(matches!(&out[1], Decoded::Frame(f) if f.offset == 24));
    }

    #[test]
    fn recovers_pretty_printed_messages() {
        let out = decode_all(
            b"{\n  \"jsonrpc\": \"2.0\",\n  \"id\": 1,\n  \"result\": {}\n}\n{\"b\":2}\n",
            1024,
        );
        let Decoded::Issue(FramingIssue::MultiLine { lines, frame }) = &out[0] else {
            panic!("{out:?}")
        };
        assert_eq!(*lines, 5);
        assert_eq!(frame.value["id"], 1);
        assert_eq!(frames(&out), vec!["{\"b\":2}"]);
    }

    #[test]
    fn a_complete_message_is_never_swallowed_by_a_pending_one() {
        let out = decode_all(
            b"{\"x\":\n{\"jsonrpc\":\"2.0\",\"id\":1,\"result\":{}}\n",
            1024,
        );
        assert!(matches!(
            &out[0],
            Decoded::Issue(FramingIssue::NotJson { .. })
        ));
        assert_eq!(frames(&out).len(), 1);
    }

    #[test]
    fn oversize_lines_are_skipped_and_decoding_resyncs() {
        let mut input = vec![b'{'; 100];
        input.extend_from_slice(b"\n{\"ok\":true}\n");
        let out = decode_all(&input, 50);
        let Decoded::Issue(FramingIssue::Oversize {
            len,
            limit,
            prefix,
            offset,
        }) = &out[0]
        else {
            panic!("{out:?}")
        };
        assert_eq!((*len, *limit, *offset), (100, 50, 0));
        assert_eq!(prefix.len(), 100.min(QUOTE_PREFIX));
        assert!(matches!(&out[1], Decoded::Frame(f) if f.offset == 101));
    }

    #[test]
    fn invalid_utf8_is_reported_not_parsed() {
        let out = decode_all(b"{\"a\":\"\xc3\x28\"}\n", 1024);
        assert!(matches!(
            &out[0],
            Decoded::Issue(FramingIssue::InvalidUtf8 { valid_up_to: 6, .. })
        ));
    }

    #[test]
    fn unterminated_last_line_is_delivered_and_reported() {
        let out = decode_all(b"{\"a\":1}", 1024);
        assert!(matches!(
            &out[0],
            Decoded::Issue(FramingIssue::Unterminated { len: 7, .. })
        ));
        assert_eq!(frames(&out), vec!["{\"a\":1}"]);
    }
}

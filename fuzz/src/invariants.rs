//! The NDJSON framing invariants, checked by the libFuzzer target
//! (`fuzz/fuzz_targets/jsonrpc_framing.rs`) and by its proptest twin on stable
//! (`harness/tests/it/framing_props.rs`, which includes this file with `#[path]`).
//!
//! This file must only use `std`, `mcpcheck` and `serde_json`, so that it compiles in both
//! crates. Every check panics with a message that names the broken invariant.

use mcpcheck::protocol::jsonrpc::classify;
use mcpcheck::transport::framing::{Decoded, FramingIssue, NdjsonDecoder, QUOTE_PREFIX, RawFrame};
use mcpcheck::transport::huge_numbers;
use serde_json::Value;

/// Decodes a stream fed in the given chunks, then finishes it.
pub fn decode<'a>(max_frame: usize, chunks: impl IntoIterator<Item = &'a [u8]>) -> Vec<Decoded> {
    let mut decoder = NdjsonDecoder::new(max_frame);
    let mut out = Vec::new();
    for chunk in chunks {
        out.extend(decoder.push(chunk));
    }
    out.extend(decoder.finish());
    out
}

/// Checks every invariant for a stream fed as `chunks`; returns the decoder's output.
pub fn check(max_frame: usize, chunks: &[Vec<u8>]) -> Vec<Decoded> {
    let input = chunks.concat();
    let whole = decode(max_frame, [input.as_slice()]);
    let chunked = decode(max_frame, chunks.iter().map(Vec::as_slice));
    let bytewise = decode(max_frame, input.chunks(1));
    assert_same_output(&whole, &chunked, "the given chunks");
    assert_same_output(&whole, &bytewise, "one byte at a time");
    check_output(max_frame, &input, &whole);
    whole
}

/// Chunking independence: the output for `other` chunking equals the output for the
/// whole input pushed at once.
pub fn assert_same_output(whole: &[Decoded], other: &[Decoded], how: &str) {
    if let Some(i) = (0..whole.len().max(other.len())).find(|&i| whole.get(i) != other.get(i)) {
        panic!(
            "chunking changed the output: item {i} is {:?} when the input is pushed whole, \
             {:?} when it is pushed as {how} ({} vs {} items)",
            whole.get(i),
            other.get(i),
            whole.len(),
            other.len()
        );
    }
}

/// One line of the input, as the stdio framing rule splits it.
#[derive(Debug)]
struct Line<'a> {
    offset: u64,
    /// Without its `\n`, with its `\r` if any.
    raw: &'a [u8],
    terminated: bool,
}

fn lines(input: &[u8]) -> Vec<Line<'_>> {
    let mut out = Vec::new();
    let mut start = 0;
    for (i, &b) in input.iter().enumerate() {
        if b == b'\n' {
            out.push(Line {
                offset: start as u64,
                raw: &input[start..i],
                terminated: true,
            });
            start = i + 1;
        }
    }
    if start < input.len() {
        out.push(Line {
            offset: start as u64,
            raw: &input[start..],
            terminated: false,
        });
    }
    out
}

/// What the decoder must do with one line, judged from the line alone.
#[derive(Debug, PartialEq)]
enum Expect {
    Oversize,
    InvalidUtf8,
    Blank,
    /// A frame, a non-JSON line, or one line of a multi-line message.
    Content,
}

fn expect(max_frame: usize, line: &Line<'_>) -> Expect {
    if line.raw.len() > max_frame {
        return Expect::Oversize;
    }
    let text = line.raw.strip_suffix(b"\r").unwrap_or(line.raw);
    let Ok(text) = std::str::from_utf8(text) else {
        return Expect::InvalidUtf8;
    };
    // JSON whitespace is space, tab, CR and LF (RFC 8259 section 2); a line of anything
    // else is not blank (regressions::unicode_whitespace_lines_vanish).
    let blank = text.trim_matches([' ', '\t', '\r']).is_empty();
    if blank {
        Expect::Blank
    } else {
        Expect::Content
    }
}

/// A frame, single-line or recovered: bounded, parses to its value, classifiable.
fn check_frame(max_frame: usize, frame: &RawFrame, what: &str) {
    assert!(
        frame.bytes.len() <= max_frame,
        "{what} at {} is {} bytes, over max_frame {max_frame}",
        frame.offset,
        frame.bytes.len()
    );
    let text = std::str::from_utf8(&frame.bytes)
        .unwrap_or_else(|e| panic!("{what} at {} is not UTF-8: {e}", frame.offset));
    assert_eq!(
        frame.text(),
        text,
        "{what} at {}: text() differs from its bytes",
        frame.offset
    );
    // Numbers beyond a float (`1e309`) are valid JSON that serde_json refuses; the decoder
    // reads them as written (transport::huge_numbers), and so does this check.
    let reparsed: Value = serde_json::from_slice(&frame.bytes)
        .or_else(|e| match huge_numbers::is_out_of_range(&e) {
            true => huge_numbers::parse(text).ok_or(e),
            false => Err(e),
        })
        .unwrap_or_else(|e| panic!("{what} at {} does not parse: {e}", frame.offset));
    assert_eq!(
        reparsed, frame.value,
        "{what} at {}: bytes parse to another value",
        frame.offset
    );
    // Totality: classification never panics, whatever the value.
    let _ = classify(&frame.value, text);
}

/// Invariants of one decoded output against its input.
pub fn check_output(max_frame: usize, input: &[u8], out: &[Decoded]) {
    let lines = lines(input);
    let mut books = Books {
        max_frame,
        covered: vec![None; lines.len()],
        lines,
        last_frame: None,
        unterminated: 0,
    };
    for item in out {
        match item {
            Decoded::Frame(f) => books.frame(f),
            Decoded::Issue(FramingIssue::MultiLine { lines: n, frame }) => {
                books.multi_line(*n, frame)
            }
            Decoded::Issue(FramingIssue::Oversize {
                offset,
                len,
                limit,
                prefix,
            }) => books.oversize(*offset, *len, *limit, prefix),
            Decoded::Issue(FramingIssue::InvalidUtf8 {
                offset,
                valid_up_to,
                prefix,
            }) => books.invalid_utf8(*offset, *valid_up_to, prefix),
            Decoded::Issue(FramingIssue::NotJson {
                offset,
                line,
                error: _,
            }) => books.not_json(*offset, line),
            Decoded::Issue(FramingIssue::Unterminated { offset, len }) => {
                books.unterminated(*offset, *len)
            }
        }
    }
    books.balance();
}

/// The input's lines and how the decoder's output accounted for each: every non-blank
/// line exactly once, as what it is.
struct Books<'a> {
    max_frame: usize,
    lines: Vec<Line<'a>>,
    /// How each line was accounted for.
    covered: Vec<Option<&'static str>>,
    /// The offset of the last single-line frame, which must come in order.
    last_frame: Option<u64>,
    /// How many unterminated-line reports came.
    unterminated: usize,
}

impl Books<'_> {
    /// Accounts for the line at `offset` as `kind`; gives its index.
    fn cover(&mut self, offset: u64, kind: &'static str) -> usize {
        let i = self
            .lines
            .binary_search_by_key(&offset, |l| l.offset)
            .ok()
            .unwrap_or_else(|| panic!("{kind} at {offset} does not start a line"));
        if let Some(prev) = self.covered[i] {
            panic!("line at {offset} is reported twice: as {prev} and as {kind}");
        }
        self.covered[i] = Some(kind);
        i
    }

    /// A frame is its line with the line ending removed, in order.
    fn frame(&mut self, f: &RawFrame) {
        check_frame(self.max_frame, f, "frame");
        assert!(
            !f.bytes.contains(&b'\n'),
            "frame at {} contains a newline",
            f.offset
        );
        assert!(
            self.last_frame.is_none_or(|p| p < f.offset),
            "frames out of order: {:?} then {}",
            self.last_frame,
            f.offset
        );
        self.last_frame = Some(f.offset);
        let i = self.cover(f.offset, "frame");
        let raw = self.lines[i].raw;
        assert!(
            raw == f.bytes.as_slice() || raw.strip_suffix(b"\r") == Some(f.bytes.as_slice()),
            "frame at {} is not its line with the line ending removed",
            f.offset
        );
    }

    /// A message recovered from `n` lines: an object or array whose lines are the next
    /// `n` content lines from its offset, as on the wire.
    fn multi_line(&mut self, n: usize, frame: &RawFrame) {
        check_frame(self.max_frame, frame, "multi-line frame");
        assert!(
            n >= 2,
            "multi-line message at {} of {n} line(s)",
            frame.offset
        );
        let newlines = frame.bytes.iter().filter(|&&b| b == b'\n').count();
        assert_eq!(
            newlines + 1,
            n,
            "multi-line message at {}: {n} lines but {newlines} newlines",
            frame.offset
        );
        assert!(
            matches!(frame.value, Value::Object(_) | Value::Array(_)),
            "multi-line message at {} is not an object or array",
            frame.offset
        );
        let first = self.cover(frame.offset, "multi-line message");
        let mut parts = frame.bytes.split(|&b| b == b'\n');
        let mut taken = 0;
        for j in first..self.lines.len() {
            if taken == n {
                break;
            }
            let (offset, raw) = (self.lines[j].offset, self.lines[j].raw);
            match expect(self.max_frame, &self.lines[j]) {
                Expect::Blank => continue,
                Expect::Content => {}
                other => panic!(
                    "multi-line message at {} spans a line at {offset} that is {other:?}",
                    frame.offset
                ),
            }
            if j != first {
                self.cover(offset, "multi-line member");
            }
            let part = parts.next().unwrap_or_default();
            assert!(
                raw == part || raw.strip_suffix(b"\r") == Some(part),
                "multi-line message at {}: line {taken} differs from the wire at {offset}",
                frame.offset
            );
            taken += 1;
        }
        assert_eq!(
            taken, n,
            "multi-line message at {} runs past the end of the input",
            frame.offset
        );
    }

    /// A line over the limit: reported with its length and a bounded prefix.
    fn oversize(&mut self, offset: u64, len: u64, limit: usize, prefix: &[u8]) {
        let max_frame = self.max_frame;
        assert_eq!(
            limit, max_frame,
            "oversize at {offset} names limit {limit}, not {max_frame}"
        );
        let i = self.cover(offset, "oversize line");
        assert_eq!(
            len,
            self.lines[i].raw.len() as u64,
            "oversize at {offset}: wrong length"
        );
        assert!(
            len > max_frame as u64,
            "oversize at {offset}: {len} bytes is within {max_frame}"
        );
        assert!(
            prefix.len() <= QUOTE_PREFIX,
            "oversize at {offset}: prefix of {} bytes",
            prefix.len()
        );
        assert!(
            self.lines[i].raw.starts_with(prefix),
            "oversize at {offset}: prefix is not the line's start"
        );
    }

    /// A line that is not UTF-8: reported with a bounded prefix and where it breaks.
    fn invalid_utf8(&mut self, offset: u64, valid_up_to: usize, prefix: &[u8]) {
        let i = self.cover(offset, "invalid UTF-8 line");
        let raw = self.lines[i].raw;
        assert!(
            prefix.len() <= QUOTE_PREFIX,
            "invalid UTF-8 at {offset}: prefix of {} bytes",
            prefix.len()
        );
        assert!(
            raw.starts_with(prefix),
            "invalid UTF-8 at {offset}: prefix is not the line's start"
        );
        assert!(
            valid_up_to < raw.len(),
            "invalid UTF-8 at {offset}: valid_up_to {valid_up_to} past the line"
        );
        assert!(
            std::str::from_utf8(&raw[..valid_up_to]).is_ok(),
            "invalid UTF-8 at {offset}: valid_up_to is wrong"
        );
    }

    /// A line that is not JSON: reported as it is on the wire.
    fn not_json(&mut self, offset: u64, line: &str) {
        let i = self.cover(offset, "non-JSON line");
        let raw = self.lines[i].raw;
        assert!(
            raw == line.as_bytes() || raw.strip_suffix(b"\r") == Some(line.as_bytes()),
            "non-JSON line at {offset} is not the line on the wire"
        );
    }

    /// The input's last line, when it has no newline.
    fn unterminated(&mut self, offset: u64, len: u64) {
        self.unterminated += 1;
        let last = self
            .lines
            .last()
            .unwrap_or_else(|| panic!("unterminated line at {offset} in an empty input"));
        assert!(
            !last.terminated,
            "unterminated line at {offset}, but the input ends with a newline"
        );
        assert_eq!(
            (offset, len),
            (last.offset, last.raw.len() as u64),
            "unterminated line: wrong place"
        );
    }

    /// Nothing vanishes: every line is reported as what it is, blank lines are not
    /// reported, and an unterminated last line is reported once.
    fn balance(&self) {
        for (line, how) in self.lines.iter().zip(&self.covered) {
            let want = expect(self.max_frame, line);
            let ok = match (&want, how) {
                (Expect::Blank, None) => true,
                (Expect::Oversize, Some(k)) => *k == "oversize line",
                (Expect::InvalidUtf8, Some(k)) => *k == "invalid UTF-8 line",
                (Expect::Content, Some(k)) => !matches!(*k, "oversize line" | "invalid UTF-8 line"),
                _ => false,
            };
            assert!(
                ok,
                "line at {} ({:?}) should be {want:?} but was reported as {how:?}",
                line.offset,
                String::from_utf8_lossy(&line.raw[..line.raw.len().min(64)])
            );
        }
        let want_unterminated = self
            .lines
            .last()
            .is_some_and(|l| !l.terminated && l.raw.len() <= self.max_frame);
        assert_eq!(
            self.unterminated,
            usize::from(want_unterminated),
            "wrong number of unterminated-line reports"
        );
    }
}

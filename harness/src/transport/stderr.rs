//! A bounded record of a server's stderr.
//!
//! Servers log to stderr, some enormously. The drain must keep reading so the server never
//! blocks on a full pipe, yet keep memory bounded: it keeps the first lines (for context),
//! a ring of the last bytes (for crash reports) and a count of everything.

use std::collections::VecDeque;
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::{Duration, Instant};

use crate::protocol::text::clip;

/// Lines kept from the start of the stream.
const HEAD_LINES: usize = 200;
/// Bytes kept from the start of the stream.
const HEAD_BYTES: usize = 64 * 1024;
/// Bytes kept from the end of the stream.
const TAIL_BYTES: usize = 64 * 1024;
/// Longest line kept verbatim; longer ones are cut with a marker.
const MAX_LINE: usize = 4096;

/// Shared, cloneable handle on one server's stderr record.
#[derive(Clone, Debug, Default)]
pub struct StderrLog {
    inner: Arc<Mutex<Inner>>,
}

#[derive(Debug, Default)]
struct Inner {
    started: Option<Instant>,
    head: Vec<StderrLine>,
    head_bytes: usize,
    /// Stream offset just past each head line: where the head and the tail ring overlap.
    head_ends: Vec<u64>,
    tail: VecDeque<u8>,
    total: u64,
    partial: Vec<u8>,
}

/// One line of stderr with the time it arrived, relative to the start of the session.
#[derive(Clone, Debug, PartialEq, Eq, serde::Serialize)]
pub struct StderrLine {
    /// When it arrived, since the session started.
    pub at: Duration,
    /// The line, lossily decoded.
    pub text: String,
}

impl StderrLog {
    /// An empty log for a session started at `started`.
    pub fn new(started: Instant) -> Self {
        StderrLog {
            inner: Arc::new(Mutex::new(Inner {
                started: Some(started),
                ..Inner::default()
            })),
        }
    }

    fn lock(&self) -> MutexGuard<'_, Inner> {
        // A poisoned lock only means another drain panicked mid-append; the data is still usable.
        self.inner.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Appends a chunk as read from the pipe.
    pub fn append(&self, chunk: &[u8]) {
        let mut g = self.lock();
        let chunk_start = g.total;
        g.total += chunk.len() as u64;
        if chunk.len() >= TAIL_BYTES {
            g.tail.clear();
            g.tail.extend(&chunk[chunk.len() - TAIL_BYTES..]);
        } else {
            let overflow = (g.tail.len() + chunk.len()).saturating_sub(TAIL_BYTES);
            g.tail.drain(..overflow);
            g.tail.extend(chunk);
        }
        if g.head.len() >= HEAD_LINES || g.head_bytes >= HEAD_BYTES {
            return;
        }
        let at = g.started.map(|s| s.elapsed()).unwrap_or_default();
        let mut offset = chunk_start;
        for piece in chunk.split_inclusive(|&b| b == b'\n') {
            if g.head.len() >= HEAD_LINES || g.head_bytes >= HEAD_BYTES {
                break;
            }
            offset += piece.len() as u64;
            if g.partial.len() < MAX_LINE {
                let room = MAX_LINE - g.partial.len();
                g.partial.extend_from_slice(&piece[..room.min(piece.len())]);
            }
            if piece.ends_with(b"\n") {
                let line = std::mem::take(&mut g.partial);
                g.head_bytes += line.len();
                let text = String::from_utf8_lossy(&line)
                    .trim_end_matches(['\n', '\r'])
                    .to_owned();
                g.head.push(StderrLine { at, text });
                g.head_ends.push(offset);
            }
        }
    }

    /// Total bytes the server wrote to stderr.
    pub fn total_bytes(&self) -> u64 {
        self.lock().total
    }

    /// The first lines, with arrival times.
    pub fn head(&self) -> Vec<StderrLine> {
        self.lock().head.clone()
    }

    /// The last `n` lines of the stream (from the tail ring), lossily decoded.
    pub fn last_lines(&self, n: usize) -> Vec<String> {
        let g = self.lock();
        let bytes: Vec<u8> = g.tail.iter().copied().collect();
        let text = String::from_utf8_lossy(&bytes);
        let mut lines: Vec<String> = text
            .lines()
            .rev()
            .filter(|l| !l.trim().is_empty())
            .take(n)
            .map(|l| clip(l, MAX_LINE))
            .collect();
        lines.reverse();
        lines
    }

    /// The lines to quote after a crash: from the last panic or traceback marker on (up to
    /// `n` lines, plus the final lines if they fall beyond), else simply the last `n` lines.
    /// A backtrace can push the panic message far above the last lines.
    pub fn crash_excerpt(&self, n: usize) -> Vec<String> {
        let lines = self.last_lines(400);
        let Some(start) = lines
            .iter()
            .rposition(|l| CRASH_MARKERS.iter().any(|m| l.contains(m)))
        else {
            return lines[lines.len().saturating_sub(n)..].to_vec();
        };
        let end = (start + n).min(lines.len());
        let mut out = lines[start..end].to_vec();
        if end < lines.len() {
            out.push(format!("… ({} lines)", lines.len() - end));
            let tail_from = lines.len().saturating_sub(2).max(end);
            out.extend_from_slice(&lines[tail_from..]);
        }
        out
    }

    /// The whole tail as text (for panic and traceback detection).
    pub fn tail_text(&self) -> String {
        let g = self.lock();
        let bytes: Vec<u8> = g.tail.iter().copied().collect();
        String::from_utf8_lossy(&bytes).into_owned()
    }
}

/// A bounded excerpt of one server's stderr, for the reports of one scenario.
#[derive(Clone, Debug, PartialEq, Eq, serde::Serialize)]
#[serde(tag = "status", rename_all = "snake_case")]
pub enum StderrExcerpt {
    /// The first and last lines (a marker line stands for what was left out between).
    Captured {
        /// Everything the server wrote to stderr.
        bytes: u64,
        /// The lines kept (head and tail, with a marker between if any were left out).
        lines: Vec<String>,
        /// Whether lines were left out (the marker says how much).
        truncated: bool,
    },
    /// The server is not a process mcpcheck started (HTTP), or never started.
    NotCaptured {
        /// Why not.
        reason: String,
    },
}

/// Lines of an excerpt from the start and from the end of the stream.
pub const EXCERPT_HEAD: usize = 20;
/// Lines of an excerpt from the end of the stream.
pub const EXCERPT_TAIL: usize = 20;
/// Longest excerpt line; a server logging megabyte lines must not bloat every report.
const EXCERPT_LINE: usize = 500;

impl StderrLog {
    /// The first `head` and last `tail` lines; everything when it fits.
    pub fn excerpt(&self, head: usize, tail: usize) -> StderrExcerpt {
        let g = self.lock();
        let bytes = g.total;
        let ring: Vec<u8> = g.tail.iter().copied().collect();
        let text = String::from_utf8_lossy(&ring);
        let mut ring_lines: Vec<&str> = text.lines().map(|l| l.trim_end_matches('\r')).collect();
        let (lines, truncated) = if bytes as usize <= TAIL_BYTES {
            // The ring holds the whole stream.
            if ring_lines.len() <= head + tail {
                (
                    ring_lines.iter().map(|l| clip(l, EXCERPT_LINE)).collect(),
                    false,
                )
            } else {
                let left_out = ring_lines.len() - head - tail;
                let mut out: Vec<String> = ring_lines[..head]
                    .iter()
                    .map(|l| clip(l, EXCERPT_LINE))
                    .collect();
                out.push(format!("… ({left_out} lines left out)"));
                out.extend(
                    ring_lines[ring_lines.len() - tail..]
                        .iter()
                        .map(|l| clip(l, EXCERPT_LINE)),
                );
                (out, true)
            }
        } else {
            // The ring starts mid-line: its first line is a fragment.
            if !ring_lines.is_empty() {
                ring_lines.remove(0);
            }
            // Head lines the ring also holds are shown from the ring.
            let ring_start = bytes - ring.len() as u64;
            let mut out: Vec<String> = g
                .head
                .iter()
                .zip(&g.head_ends)
                .take_while(|(_, end)| **end <= ring_start)
                .take(head)
                .map(|(l, _)| clip(&l.text, EXCERPT_LINE))
                .collect();
            let from = ring_lines.len().saturating_sub(tail);
            let shown: usize = out.iter().map(|l| l.len() + 1).sum::<usize>()
                + ring_lines[from..]
                    .iter()
                    .map(|l| l.len() + 1)
                    .sum::<usize>();
            out.push(format!(
                "… (about {} bytes left out)",
                (bytes as usize).saturating_sub(shown)
            ));
            out.extend(ring_lines[from..].iter().map(|l| clip(l, EXCERPT_LINE)));
            (out, true)
        };
        StderrExcerpt::Captured {
            bytes,
            lines,
            truncated,
        }
    }
}

impl StderrLog {
    /// Total bytes written so far: where a window of a shared session starts.
    pub fn mark(&self) -> u64 {
        self.lock().total
    }

    /// The first `head` and last `tail` lines written since `mark` (a window of a session
    /// several scenarios shared); everything since the start when `mark` is 0.
    pub fn excerpt_since(&self, mark: u64, head: usize, tail: usize) -> StderrExcerpt {
        if mark == 0 {
            return self.excerpt(head, tail);
        }
        let g = self.lock();
        let bytes = g.total.saturating_sub(mark);
        let ring_start = g.total - g.tail.len() as u64;
        let skip = mark.saturating_sub(ring_start) as usize;
        let window: Vec<u8> = g.tail.iter().skip(skip).copied().collect();
        drop(g);
        let text = String::from_utf8_lossy(&window);
        let all: Vec<&str> = text.lines().map(|l| l.trim_end_matches('\r')).collect();
        let mut lines = Vec::new();
        let lost = mark < ring_start;
        if lost {
            lines.push(format!(
                "… ({} earlier bytes of this scenario not kept)",
                ring_start - mark
            ));
        }
        let truncated = lost || all.len() > head + tail;
        if all.len() <= head + tail {
            lines.extend(all.iter().map(|l| clip(l, EXCERPT_LINE)));
        } else {
            lines.extend(all[..head].iter().map(|l| clip(l, EXCERPT_LINE)));
            lines.push(format!("… ({} lines left out)", all.len() - head - tail));
            lines.extend(
                all[all.len() - tail..]
                    .iter()
                    .map(|l| clip(l, EXCERPT_LINE)),
            );
        }
        StderrExcerpt::Captured {
            bytes,
            lines,
            truncated,
        }
    }
}

/// Text that marks the start of a crash report in common runtimes.
pub const CRASH_MARKERS: &[&str] = &[
    "panicked at",
    "Traceback (most recent call last)",
    "Uncaught",
    "uncaught exception",
    "Unhandled",
    "Segmentation fault",
    "fatal error:",
    "FATAL",
    "Exception in thread",
];

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_excerpt_since_a_mark_holds_only_what_came_after_it() {
        let log = StderrLog::new(Instant::now());
        log.append(b"first scenario\n");
        let mark = log.mark();
        log.append(b"second one\nand more\n");
        match log.excerpt_since(mark, 20, 20) {
            StderrExcerpt::Captured {
                bytes,
                lines,
                truncated,
            } => {
                assert_eq!(bytes, 20);
                assert_eq!(lines, ["second one", "and more"]);
                assert!(!truncated);
            }
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn memory_stays_bounded_under_a_flood() {
        let log = StderrLog::new(Instant::now());
        let chunk = vec![b'x'; 1 << 20];
        for _ in 0..20 {
            log.append(&chunk);
            log.append(b"\n");
        }
        assert_eq!(log.total_bytes(), 20 * ((1 << 20) + 1));
        let g = log.lock();
        assert!(g.tail.len() <= TAIL_BYTES);
        assert!(g.head.iter().all(|l| l.text.len() <= MAX_LINE));
    }

    #[test]
    fn an_excerpt_is_everything_when_small_and_head_and_tail_when_large() {
        let log = StderrLog::new(Instant::now());
        log.append(b"one\ntwo\r\nthree");
        assert_eq!(
            log.excerpt(2, 2),
            StderrExcerpt::Captured {
                bytes: 14,
                lines: vec!["one".into(), "two".into(), "three".into()],
                truncated: false
            }
        );
        let many = StderrLog::new(Instant::now());
        for i in 0..10 {
            many.append(format!("line {i}\n").as_bytes());
        }
        let StderrExcerpt::Captured {
            lines, truncated, ..
        } = many.excerpt(2, 2)
        else {
            panic!("captured")
        };
        assert!(truncated);
        assert_eq!(
            lines,
            [
                "line 0",
                "line 1",
                "… (6 lines left out)",
                "line 8",
                "line 9"
            ]
        );

        // Past the ring: the head record gives the start, the ring the end, and no line
        // is longer than the excerpt's limit.
        let flood = StderrLog::new(Instant::now());
        flood.append(b"booting\n");
        flood.append(&vec![b'x'; 200 * 1024]);
        flood.append(b"\npanicked at the end\n");
        let StderrExcerpt::Captured {
            lines,
            truncated,
            bytes,
        } = flood.excerpt(3, 3)
        else {
            panic!("captured")
        };
        assert!(truncated);
        assert_eq!(bytes, 8 + 200 * 1024 + 21);
        assert_eq!(lines[0], "booting");
        assert!(lines[1].starts_with("… (about "), "{lines:?}");
        assert_eq!(lines.len(), 3, "no line twice: {lines:?}");
        assert_eq!(lines.last().unwrap(), "panicked at the end");
        assert!(lines.iter().all(|l| l.len() < 600), "{lines:?}");
    }

    #[test]
    fn keeps_head_and_last_lines() {
        let log = StderrLog::new(Instant::now());
        log.append(b"starting\nlistening on stdio\n");
        log.append(b"thread 'main' panicked at src/main.rs:1:1\n");
        assert_eq!(log.head().len(), 3);
        assert_eq!(
            log.last_lines(1),
            vec!["thread 'main' panicked at src/main.rs:1:1"]
        );
    }

    #[test]
    fn crash_excerpt_starts_at_the_panic_not_the_backtrace_end() {
        let log = StderrLog::new(Instant::now());
        log.append(
            b"booting
thread 'main' panicked at src/server.rs:9:5:
boom
stack backtrace:
",
        );
        for i in 0..50 {
            log.append(format!("  {i}: frame\n").as_bytes());
        }
        let excerpt = log.crash_excerpt(5);
        assert_eq!(excerpt[0], "thread 'main' panicked at src/server.rs:9:5:");
        assert_eq!(excerpt[1], "boom");
        assert!(excerpt.last().unwrap().contains("49: frame"), "{excerpt:?}");

        let plain = StderrLog::new(Instant::now());
        plain.append(b"a\nb\nc\n");
        assert_eq!(plain.crash_excerpt(2), vec!["b", "c"]);
    }
}

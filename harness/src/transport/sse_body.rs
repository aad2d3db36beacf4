//! What eventsource-stream is given to parse: an SSE body with its byte order mark
//! handled here, because the crate cannot. Only [`super::sse_reader::SseReader`] uses it.
//!
//! The SSE spec (WHATWG HTML, "event stream interpretation") ignores one leading U+FEFF.
//! eventsource-stream 0.2.3 strips it with `&string[1..]`, a slice inside the three-byte
//! UTF-8 sequence: it panics on every stream that starts with a BOM (found by the
//! `sse_events` proptest twin; regression test `bom_at_the_start_of_a_stream` in
//! `harness/tests/it/sse_events_props.rs`). So the BOM is stripped here, even when split across
//! reads, and the parser's first line is a comment (`:`), which the spec ignores and whose
//! first character is never a BOM, so its faulty branch is never taken.
//!
//! The crate also buffers an event until the blank line that ends it, without limit: a
//! hostile server that never sends one would grow mcpcheck's memory for as long as the
//! connection lasts. So the body is cut off, with [`BodyError::EventTooLarge`], once one
//! event's bytes pass a limit ([`event_limit`]).

use futures_util::{Stream, StreamExt};

const BOM: &[u8] = b"\xef\xbb\xbf";

/// Why an SSE body ended before the server closed it.
#[derive(Debug)]
pub enum BodyError<E> {
    /// Reading the body failed.
    Read(E),
    /// One event grew past the limit without the blank line that ends it.
    EventTooLarge {
        /// The limit, in bytes.
        limit: usize,
    },
}

impl<E: std::fmt::Display> std::fmt::Display for BodyError<E> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            BodyError::Read(e) => e.fmt(f),
            BodyError::EventTooLarge { limit } => write!(
                f,
                "an SSE event passed {limit} bytes without the blank line that ends it; \
                 the stream was cut off (the frame limit is --max-frame-size)"
            ),
        }
    }
}

/// The most bytes one event may take on the wire for a given frame limit: its data plus
/// the field names and line breaks around it (generously: twice the data, plus 64 KiB).
pub fn event_limit(max_frame: usize) -> usize {
    max_frame.saturating_mul(2).saturating_add(64 << 10)
}

/// Counts the bytes of the event being read; an empty line (after `\n`, `\r` or `\r\n`)
/// ends it.
#[derive(Debug)]
struct EventBytes {
    pending: usize,
    at_line_start: bool,
    after_cr: bool,
}

impl EventBytes {
    fn new() -> Self {
        EventBytes {
            pending: 0,
            at_line_start: true,
            after_cr: false,
        }
    }

    /// Feeds a chunk; returns how many of its bytes fit before the current event passed
    /// `limit`, or `None` when all of them did.
    fn feed(&mut self, chunk: &[u8], limit: usize) -> Option<usize> {
        for (i, &b) in chunk.iter().enumerate() {
            match b {
                b'\n' if self.after_cr => self.after_cr = false,
                b'\n' | b'\r' => {
                    if self.at_line_start {
                        self.pending = 0;
                    }
                    self.at_line_start = true;
                    self.after_cr = b == b'\r';
                }
                _ => {
                    self.at_line_start = false;
                    self.after_cr = false;
                }
            }
            self.pending += 1;
            if self.pending > limit {
                return Some(i);
            }
        }
        None
    }
}

/// `body` without a leading BOM, after a comment line; each read as an owned chunk. Ends
/// with [`BodyError::EventTooLarge`] once an event passes `limit` bytes.
pub fn sse_body<B, E>(
    body: impl Stream<Item = Result<B, E>> + Unpin + Send + 'static,
    limit: usize,
) -> impl Stream<Item = Result<Vec<u8>, BodyError<E>>> + Unpin + Send + 'static
where
    B: AsRef<[u8]> + Send + 'static,
    E: Send + 'static,
{
    let body = bounded(body, limit);
    let rest =
        futures_util::stream::unfold((body, Some(Vec::new())), |(mut body, head)| async move {
            let Some(mut head) = head else {
                let item = body.next().await?;
                return Some((item, (body, None)));
            };
            // Undecided: fewer than three bytes so far, all a prefix of the BOM.
            loop {
                match body.next().await {
                    Some(Ok(chunk)) => {
                        head.extend_from_slice(&chunk);
                        if head.len() < BOM.len() && BOM.starts_with(&head) {
                            continue;
                        }
                        if head.starts_with(BOM) {
                            head.drain(..BOM.len());
                        }
                        return Some((Ok(head), (body, None)));
                    }
                    Some(Err(e)) => return Some((Err(e), (body, None))),
                    // Ended inside a would-be BOM: those bytes are data.
                    None if head.is_empty() => return None,
                    None => return Some((Ok(head), (body, None))),
                }
            }
        });
    Box::pin(futures_util::stream::once(async { Ok(b":\n".to_vec()) }).chain(rest))
}

/// `body` with its errors wrapped, cut off after the first event that passes `limit`.
fn bounded<B, E>(
    body: impl Stream<Item = Result<B, E>> + Unpin + Send + 'static,
    limit: usize,
) -> impl Stream<Item = Result<Vec<u8>, BodyError<E>>> + Unpin + Send + 'static
where
    B: AsRef<[u8]> + Send + 'static,
    E: Send + 'static,
{
    /// Reading, or cut off (the error is still to be given), or done.
    enum State<S> {
        Reading(S, EventBytes),
        CutOff,
        Done,
    }
    Box::pin(
        futures_util::stream::unfold(
            State::Reading(body, EventBytes::new()),
            move |state| async move {
                let (mut body, mut count) = match state {
                    State::Reading(body, count) => (body, count),
                    State::CutOff => {
                        return Some((Err(BodyError::EventTooLarge { limit }), State::Done));
                    }
                    State::Done => return None,
                };
                match body.next().await? {
                    Err(e) => Some((Err(BodyError::Read(e)), State::Done)),
                    Ok(chunk) => {
                        let chunk = chunk.as_ref();
                        match count.feed(chunk, limit) {
                            None => Some((Ok(chunk.to_vec()), State::Reading(body, count))),
                            // The bytes before the one that passed the limit still go to the
                            // parser, so what it sees does not depend on how reads were split.
                            Some(fit) => Some((Ok(chunk[..fit].to_vec()), State::CutOff)),
                        }
                    }
                }
            },
        )
        // Fused: the BOM stage above may poll again after the end.
        .fuse(),
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    fn collect(chunks: Vec<&'static [u8]>, limit: usize) -> Vec<Result<Vec<u8>, String>> {
        let body =
            futures_util::stream::iter(chunks.into_iter().map(Ok::<_, std::convert::Infallible>));
        let rt = tokio::runtime::Builder::new_current_thread()
            .build()
            .expect("a runtime");
        let out = rt.block_on(sse_body(body, limit).collect::<Vec<_>>());
        out.into_iter()
            .map(|r| r.map_err(|e| e.to_string()))
            .collect()
    }

    #[test]
    fn events_that_end_in_time_pass_whatever_the_total() {
        // Three 30-byte events against a 40-byte limit, in every line-ending style.
        for sep in [&b"\n\n"[..], b"\r\r", b"\r\n\r\n"] {
            let event = [&b"data: 0123456789012345678901"[..], sep].concat();
            let body = event.repeat(3).leak();
            let out = collect(vec![body], 40);
            assert!(out.iter().all(Result::is_ok), "{sep:?}: {out:?}");
        }
    }

    #[test]
    fn an_event_without_its_blank_line_is_cut_off() {
        let out = collect(
            vec![b"data: 01234567890\n", b"data: 0123456789\n", b"data: 0"],
            30,
        );
        // The comment line, the first read, the 12 bytes of the second that fit, the error.
        assert_eq!(out.len(), 4, "{out:?}");
        assert_eq!(out[2].as_deref(), Ok(&b"data: 012345"[..]));
        let err = out[3].as_ref().unwrap_err();
        assert!(err.contains("passed 30 bytes"), "{err}");
    }
}

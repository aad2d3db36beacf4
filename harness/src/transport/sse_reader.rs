//! The one SSE reader: every stream mcpcheck reads (Streamable HTTP responses, the 2024-11-05
//! HTTP+SSE stream and its detection, raw scenario `http` steps) is parsed here, behind the
//! `sse_body` guard (BOM skipped, an event that never ends cut off), so a fix reaches them all.

use std::pin::Pin;

use eventsource_stream::Eventsource;
use futures_util::{Stream, StreamExt};

use super::sse_body::{event_limit, sse_body};

/// One parsed SSE event: `event` (`message` when absent), `id` (the last-event-id buffer,
/// which an event without an `id` field keeps), `data`, and `retry`.
pub type SseEvent = eventsource_stream::Event;

/// Why a stream could not be read further: the body broke, an event passed the size limit,
/// or the bytes were not an event stream. The text is for the transcript.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("{0}")]
pub struct SseError(String);

type Events = Pin<Box<dyn Stream<Item = Result<SseEvent, SseError>> + Send>>;

/// Events parsed from an SSE body, in order.
pub struct SseReader {
    events: Events,
}

impl std::fmt::Debug for SseReader {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("SseReader")
    }
}

impl SseReader {
    /// Reads `body`, whose events may each take up to [`event_limit`]`(max_frame)` bytes.
    pub fn new<B, E>(
        body: impl Stream<Item = Result<B, E>> + Unpin + Send + 'static,
        max_frame: usize,
    ) -> Self
    where
        B: AsRef<[u8]> + Send + 'static,
        E: std::fmt::Display + Send + 'static,
    {
        let events = sse_body(body, event_limit(max_frame))
            .eventsource()
            .map(|r| r.map_err(|e| SseError(e.to_string())));
        SseReader {
            events: Box::pin(events),
        }
    }

    /// Reads an HTTP response's body.
    pub fn from_response(response: reqwest::Response, max_frame: usize) -> Self {
        SseReader::new(response.bytes_stream(), max_frame)
    }

    /// The next event; `None` once the server closed the stream (an error ends it too).
    pub async fn next(&mut self) -> Option<Result<SseEvent, SseError>> {
        self.events.next().await
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn read(body: &'static [u8], max_frame: usize) -> Vec<Result<SseEvent, SseError>> {
        let rt = tokio::runtime::Builder::new_current_thread()
            .build()
            .expect("a runtime");
        rt.block_on(async {
            let chunks = futures_util::stream::iter([Ok::<_, std::convert::Infallible>(body)]);
            let mut reader = SseReader::new(chunks, max_frame);
            let mut out = Vec::new();
            while let Some(ev) = reader.next().await {
                out.push(ev);
            }
            out
        })
    }

    #[test]
    fn a_leading_bom_is_skipped() {
        let out = read(b"\xef\xbb\xbfid: 1\ndata: x\n\n", 1024);
        assert_eq!(out.len(), 1, "{out:?}");
        let ev = out[0].as_ref().unwrap();
        assert_eq!((ev.id.as_str(), ev.data.as_str()), ("1", "x"));
    }

    #[test]
    fn an_event_without_its_blank_line_ends_the_stream_with_an_error() {
        let body: &'static [u8] = [&b"data: "[..], &vec![b'x'; 70_000]].concat().leak();
        let out = read(body, 100);
        let err = out.last().unwrap().as_ref().unwrap_err();
        assert!(err.to_string().contains("without the blank line"), "{err}");
    }
}

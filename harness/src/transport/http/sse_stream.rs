//! Reading one Streamable HTTP response stream: each SSE event recorded, each `message`
//! event's data delivered as a frame, and what resumption must not do noted as it happens.

use std::collections::HashSet;
use std::time::Duration;

use serde_json::Value;
use tokio::sync::{mpsc, oneshot};

use super::body::{deliver, note_error_status};
use super::handle::{HttpHandle, client};
use super::record::{HttpRecord, StreamAnomaly};
use super::{HttpOptions, INBOUND_CAPACITY};
use crate::transport::Inbound;
use crate::transport::sse_reader::SseReader;

/// Why a stream's reader stopped on mcpcheck's side.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum ClientClose {
    /// The session cancelled the request.
    Cancelled,
    /// The transport shut down (or was dropped) with the stream still open.
    Shutdown,
}

/// What mcpcheck knows of one logical SSE stream across its connections.
#[derive(Debug)]
pub(super) struct StreamTrack {
    /// Id of the request whose response the stream carries; `None` once it arrived (or
    /// for a stream that answers no request).
    pub(super) awaited: Option<Value>,
    /// The last event id received (the `Last-Event-ID` to resume with).
    pub(super) last_id: Option<String>,
    /// The server's latest `retry`.
    pub(super) retry: Option<Duration>,
    /// Event ids received on this stream, to spot a replay of one.
    pub(super) ids: HashSet<String>,
    /// Reconnections so far (0: the first connection).
    pub(super) resumes: u32,
    /// The server closed the last connection (rather than it breaking).
    pub(super) closed: bool,
    /// A 2026-07-28 `subscriptions/listen` stream: notifications only, no response due.
    pub(super) listen: bool,
    /// Fires (or is dropped) when mcpcheck closes the stream; only 2026-07-28 requests.
    pub(super) close: Option<oneshot::Receiver<()>>,
    /// Set once mcpcheck closed the stream.
    pub(super) client_close: Option<ClientClose>,
    /// The HTTP status the stream came under.
    pub(super) status: u16,
}

impl StreamTrack {
    pub(super) fn new(awaited: Option<Value>) -> Self {
        StreamTrack {
            awaited,
            last_id: None,
            retry: None,
            ids: HashSet::new(),
            resumes: 0,
            closed: false,
            listen: false,
            close: None,
            client_close: None,
            status: 200,
        }
    }
}

/// Reads an SSE stream: each event is recorded, each `message` event's data delivered as
/// a frame. On a resumed connection (`track.resumes > 0`), an event id already received or a
/// response to another request is reported as a [`StreamAnomaly`] for the session to judge.
/// Generic over the body's chunks, so it can be fed from memory ([`read_sse_chunks`]).
pub(super) async fn read_sse<B, E>(
    handle: &HttpHandle,
    body: impl futures_util::Stream<Item = Result<B, E>> + Unpin + Send + 'static,
    stream: &str,
    tx: &mpsc::Sender<Inbound>,
    track: &mut StreamTrack,
) where
    B: AsRef<[u8]> + Send + 'static,
    E: std::fmt::Display + Send + 'static,
{
    let max = handle.options.max_frame;
    let mut events = SseReader::new(body, max);
    // The SSE last-event-id buffer persists: an event without an `id` field repeats the
    // previous one, which is no new id.
    let mut previous = String::new();
    let reason = loop {
        let next = match track.close.as_mut() {
            Some(close) => tokio::select! {
                ev = events.next() => ev,
                signal = close => {
                    let why = if signal.is_ok() { ClientClose::Cancelled } else { ClientClose::Shutdown };
                    track.client_close = Some(why);
                    track.close = None;
                    break client_close_reason(why, track);
                }
            },
            None => events.next().await,
        };
        match next {
            None if track.listen && track.awaited.is_some() => {
                track.closed = true;
                break "the server closed the listen stream without a subscriptions/listen response (2026-07-28 basic/patterns/subscriptions#graceful-closure: an abrupt end, not a graceful one)".to_owned();
            }
            None => {
                track.closed = true;
                break "the server closed the stream".to_owned();
            }
            Some(Err(e)) => break format!("broken stream: {e}"),
            Some(Ok(ev)) => {
                let record = HttpRecord::SseEvent {
                    stream: stream.to_owned(),
                    id: ev.id.clone(),
                    event: ev.event.clone(),
                    retry_ms: ev.retry.map(|d| d.as_millis() as u64),
                    data_bytes: ev.data.len(),
                    data: None,
                };
                if tx.send(Inbound::Http(record)).await.is_err() {
                    return;
                }
                if ev.retry.is_some() {
                    track.retry = ev.retry;
                }
                if !ev.id.is_empty() && ev.id != previous {
                    note_event_id(handle, stream, &ev.id, track, tx).await;
                    track.last_id = Some(ev.id.clone());
                }
                previous = ev.id.clone();
                // Only `message` events carry messages; an empty one primes resumption
                // (spec 2025-11-25: "an event ID and an empty data field").
                if ev.event != "message" || ev.data.trim().is_empty() {
                    continue;
                }
                if ev.data.len() > max {
                    let _ = tx
                        .send(Inbound::Http(HttpRecord::Invalid {
                            context: format!("SSE {stream}"),
                            problem: format!(
                                "an event of {} bytes exceeds the frame limit",
                                ev.data.len()
                            ),
                        }))
                        .await;
                    continue;
                }
                match serde_json::from_str::<Value>(&ev.data) {
                    Ok(value) => {
                        note_response(&value, stream, track, tx).await;
                        note_error_status(&value, track.status, true, tx).await;
                        deliver(handle, value, &ev.data, tx).await
                    }
                    Err(e) => {
                        let _ = tx
                            .send(Inbound::Http(HttpRecord::Invalid {
                                context: format!("SSE {stream}"),
                                problem: format!(
                                    "event data is not a JSON-RPC message ({e}): {}",
                                    crate::protocol::text::quote(&ev.data, 200)
                                ),
                            }))
                            .await;
                    }
                }
            }
        }
    };
    let _ = tx
        .send(Inbound::Http(HttpRecord::StreamEnd {
            stream: stream.to_owned(),
            reason,
        }))
        .await;
}

/// The transcript's reason when mcpcheck closes a stream (dropping the response closes the
/// connection, which is what the server sees).
fn client_close_reason(why: ClientClose, track: &StreamTrack) -> String {
    let what = if track.listen {
        "the subscription"
    } else {
        "the request"
    };
    match why {
        ClientClose::Cancelled => format!(
            "mcpcheck closed the stream to cancel {what} (2026-07-28 basic/patterns/cancellation#transport-specific-cancellation)"
        ),
        ClientClose::Shutdown => {
            format!("mcpcheck closed the stream at the end of the session, ending {what}")
        }
    }
}

/// Notes an event id in the session's set; on a resumed stream, an id the stream carried
/// before is an event delivered twice ([`StreamAnomaly::DuplicateEventId`]). Ids shared
/// between streams are judged by the `http/sse-event-ids-unique` scenario, not here, so each
/// rule fails in one place.
async fn note_event_id(
    handle: &HttpHandle,
    stream: &str,
    id: &str,
    track: &mut StreamTrack,
    tx: &mpsc::Sender<Inbound>,
) {
    handle.note_event_id(id, stream);
    let fresh = track.ids.insert(id.to_owned());
    if track.resumes > 0 && !fresh {
        let anomaly = StreamAnomaly::DuplicateEventId {
            stream: stream.to_owned(),
            id: id.to_owned(),
        };
        report(tx, anomaly).await;
    }
}

/// Hands the session something the server did that it may judge.
pub(super) async fn report(tx: &mpsc::Sender<Inbound>, anomaly: StreamAnomaly) {
    let _ = tx.send(Inbound::Http(HttpRecord::Anomaly(anomaly))).await;
}

/// Notes the awaited response; on a resumed stream, a response to another request came from
/// another stream ([`StreamAnomaly::ReplayFromOtherStream`]).
async fn note_response(
    value: &Value,
    stream: &str,
    track: &mut StreamTrack,
    tx: &mpsc::Sender<Inbound>,
) {
    let Some(id) = crate::protocol::response_id(value) else {
        return;
    };
    if track.awaited.as_ref() == Some(id) {
        track.awaited = None;
    } else if track.resumes > 0 {
        let anomaly = StreamAnomaly::ReplayFromOtherStream {
            stream: stream.to_owned(),
            request_id: id.clone(),
        };
        report(tx, anomaly).await;
    }
}

/// Runs the SSE reader over a body that arrived in `chunks` and returns what the session
/// would receive, in order (event records, frames, problems, the stream's end). The entry
/// point of the `sse_events` cargo-fuzz target and its proptest twin: the same code as a
/// live stream, without a server.
pub async fn read_sse_chunks(chunks: Vec<Vec<u8>>, max_frame: usize) -> Vec<Inbound> {
    static CLIENT: std::sync::OnceLock<Option<super::HttpClient>> = std::sync::OnceLock::new();
    let Ok(mut options) = HttpOptions::new("http://127.0.0.1:9/mcp") else {
        return Vec::new();
    };
    options.max_frame = max_frame;
    // Never used to connect: building one per call would dominate a fuzzing run.
    let Some(client) = CLIENT.get_or_init(|| client(&options).ok()).clone() else {
        return Vec::new();
    };
    let handle = HttpHandle::new(client, options);
    let (tx, mut rx) = mpsc::channel(INBOUND_CAPACITY);
    let body =
        futures_util::stream::iter(chunks.into_iter().map(Ok::<_, std::convert::Infallible>));
    let read = async move {
        let mut track = StreamTrack::new(None);
        read_sse(&handle, body, "#1 (POST)", &tx, &mut track).await;
    };
    let collect = async {
        let mut out = Vec::new();
        while let Some(item) = rx.recv().await {
            out.push(item);
        }
        out
    };
    let ((), out) = tokio::join!(read, collect);
    out
}

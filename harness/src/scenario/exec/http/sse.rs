//! Reading one SSE connection of an `http` step: each event goes to the transcript, its
//! id is checked for uniqueness in the session and, after a resumption, its message for
//! replays of what was delivered before or of another stream.

use serde_json::Value;

use super::{SseAcc, SseEnd};
use crate::session::RawHttp;
use crate::session::Session;
use crate::transport::http::HttpRecord;
use crate::transport::sse_reader::SseReader;

/// Reads one SSE connection until the awaited response, its end, `deadline`, or (with
/// `drop_at_id`) the first new event id that is not the response. Checks each id against
/// the session's (basic/transports#resumability-and-redelivery: "globally unique across all
/// streams within that session") and, after a resumption, each message against what the
/// stream delivered before.
#[allow(clippy::too_many_arguments)]
pub(super) async fn read_events(
    session: &mut Session,
    handle: &RawHttp,
    response: reqwest::Response,
    stream: &str,
    deadline: tokio::time::Instant,
    wanted: Option<&Value>,
    drop_at_id: bool,
    messages: &mut Vec<Value>,
    acc: &mut SseAcc,
) -> SseEnd {
    let max = handle.options().max_frame;
    let resumed = acc.resumes > 0;
    let unique_ids = acc.check_unique;
    let mut events = SseReader::from_response(response, max);
    // The SSE last-event-id buffer persists: an event without an `id` field repeats the
    // previous id, which is no new id.
    let mut previous = String::new();
    let (end, reason) = loop {
        match tokio::time::timeout_at(deadline, events.next()).await {
            Err(_) => {
                break (
                    SseEnd::Stopped,
                    "mcpcheck stopped reading at the step's `within`".to_owned(),
                );
            }
            Ok(None) => break (SseEnd::Closed, "the server closed the stream".to_owned()),
            Ok(Some(Err(e))) => break (SseEnd::Stopped, format!("broken stream: {e}")),
            Ok(Some(Ok(ev))) => {
                session.record_http(HttpRecord::SseEvent {
                    stream: stream.to_owned(),
                    id: ev.id.clone(),
                    event: ev.event.clone(),
                    retry_ms: ev.retry.map(|d| d.as_millis() as u64),
                    data_bytes: ev.data.len(),
                    data: Some(handle.options().redact(&ev.data)),
                });
                if ev.retry.is_some() {
                    acc.retry = ev.retry;
                }
                if acc.first_event.is_none() {
                    acc.first_event = Some((!ev.id.is_empty(), ev.data.trim().is_empty()));
                }
                let new_id = !ev.id.is_empty() && ev.id != previous;
                previous = ev.id.clone();
                if new_id {
                    if acc.ids.contains(&ev.id) {
                        acc.problems.push(format!(
                            "after resuming with Last-Event-ID, event {:?} was delivered again; a replay carries only the events after that id",
                            ev.id
                        ));
                    } else if let Some(first) = handle.note_event_id(&ev.id, stream)
                        && first != stream
                        && unique_ids
                    {
                        acc.problems.push(format!(
                            "event id {:?} was already used on another stream of this session ({first}); ids MUST be unique across the session's streams",
                            ev.id
                        ));
                    }
                    if !acc.ids.contains(&ev.id) {
                        acc.ids.push(ev.id.clone());
                    }
                    acc.last_id = Some(ev.id.clone());
                }
                let mut answered = false;
                if ev.event == "message"
                    && ev.data.len() <= max
                    && let Ok(v) = serde_json::from_str::<Value>(&ev.data)
                {
                    let id = crate::protocol::response_id(&v);
                    answered = id.is_some() && id == wanted;
                    if resumed && messages.contains(&v) {
                        acc.problems.push(format!(
                            "after resuming with Last-Event-ID, a message the stream had delivered was sent again: {}",
                            crate::protocol::text::quote(&ev.data, 200)
                        ));
                    } else if resumed && let Some(id) = id.filter(|_| !answered) {
                        acc.problems.push(format!(
                            "after resuming with Last-Event-ID, the server sent the response to request {id}, which was not sent on this stream; it MUST NOT replay messages of another stream"
                        ));
                    }
                    messages.push(v);
                }
                if answered {
                    break (
                        SseEnd::Answered,
                        "mcpcheck had what it waited for".to_owned(),
                    );
                }
                if drop_at_id && new_id && !acc.disconnected {
                    acc.disconnected = true;
                    break (
                        SseEnd::Dropped,
                        format!(
                            "mcpcheck dropped the connection after event {:?}, to resume",
                            ev.id
                        ),
                    );
                }
            }
        }
    };
    session.record_http(HttpRecord::StreamEnd {
        stream: stream.to_owned(),
        reason,
    });
    end
}

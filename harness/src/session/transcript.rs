//! The wire transcript of a session: everything sent and received, with times, so that
//! every finding can point at the frame behind it and reports can show the exchange.

use std::time::{Duration, Instant};

use serde::Serialize;

/// Entries kept per session; a server flooding valid frames past this is counted, not kept.
const MAX_ENTRIES: usize = 100_000;

#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
/// Which way an entry went.
pub enum Direction {
    /// From mcpcheck to the server.
    Sent,
    /// From the server to mcpcheck.
    Received,
    /// Something observed about the connection (exit, framing).
    Event,
}

/// One transcript entry.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Entry {
    /// Time since the session started.
    #[serde(serialize_with = "ser_duration_ms")]
    pub at: Duration,
    /// Which way it went.
    pub direction: Direction,
    /// The message text as on the wire (lossy UTF-8 for raw bytes), or an event description.
    pub text: String,
    /// The HTTP exchange or SSE event behind an entry (HTTP transports only).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub http: Option<crate::transport::http::HttpRecord>,
}

fn ser_duration_ms<S: serde::Serializer>(d: &Duration, s: S) -> Result<S::Ok, S::Error> {
    s.serialize_f64((d.as_secs_f64() * 1000.0 * 1000.0).round() / 1000.0)
}

/// Every entry of a session, in order, up to a bound (the rest counted as dropped).
#[derive(Clone, Debug)]
pub struct Transcript {
    started: Instant,
    entries: Vec<Entry>,
    dropped: u64,
    observer: Option<Observer>,
}

/// What an [`Observer`] calls: the entry's index and the entry.
pub type ObserveFn = dyn Fn(usize, &Entry) + Send + Sync;

/// Called with each entry as it is recorded: live reporting of frames.
#[derive(Clone)]
pub struct Observer(pub std::sync::Arc<ObserveFn>);

impl std::fmt::Debug for Observer {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("Observer")
    }
}

impl Transcript {
    /// An empty transcript whose times count from `started`.
    pub fn new(started: Instant) -> Self {
        Transcript {
            started,
            entries: Vec::new(),
            dropped: 0,
            observer: None,
        }
    }

    /// Calls `observer` with every entry recorded from now on.
    pub fn observe(&mut self, observer: Observer) {
        self.observer = Some(observer);
    }

    /// Records an entry and returns its index (stable: entries are never removed).
    pub fn push(&mut self, direction: Direction, text: impl Into<String>) -> Option<usize> {
        if self.entries.len() >= MAX_ENTRIES {
            self.dropped += 1;
            return None;
        }
        self.entries.push(Entry {
            at: self.started.elapsed(),
            direction,
            text: text.into(),
            http: None,
        });
        let index = self.entries.len() - 1;
        if let Some(o) = &self.observer {
            (o.0)(index, &self.entries[index]);
        }
        Some(index)
    }

    /// Records an HTTP exchange or SSE event.
    pub fn push_http(&mut self, record: crate::transport::http::HttpRecord) -> Option<usize> {
        let index = self.push(Direction::Event, record.summary())?;
        self.entries[index].http = Some(record);
        Some(index)
    }

    /// The entries kept, oldest first.
    pub fn entries(&self) -> &[Entry] {
        &self.entries
    }

    /// The entry at `index` (a finding's `frame`).
    pub fn get(&self, index: usize) -> Option<&Entry> {
        self.entries.get(index)
    }

    /// Entries past the bound, counted but not kept.
    pub fn dropped(&self) -> u64 {
        self.dropped
    }

    /// When the session started.
    pub fn started(&self) -> Instant {
        self.started
    }
}

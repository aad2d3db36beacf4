//! The wire transcript of a session: everything sent and received, with times, so that
//! every finding can point at the frame behind it and reports can show the exchange.

use std::time::Instant;

/// Entries kept per session; a server flooding valid frames past this is counted, not kept.
const MAX_ENTRIES: usize = 100_000;

pub use crate::outcome::{Direction, Entry};

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

//! The wire transcript of a session: everything sent and received, with times, so that
//! every finding can point at the frame behind it and reports can show the exchange.
//!
//! A hostile server can send millions of frames, so the transcript keeps a bounded
//! window: the first [`HEAD`] entries, the last [`TAIL`], and up to [`PINNED`] entries in
//! between that findings point at; the rest is counted. Every entry still gets its index
//! (the run's events tell them all, as they are recorded); [`Transcript::window`] turns the kept entries into the
//! report's list, with a marker where entries were left out.

use std::collections::{BTreeMap, BTreeSet, VecDeque};
use std::time::Instant;

use crate::outcome::Finding;
use crate::outcome::events::{Emitter, Event};
use crate::outcome::{Direction, Entry};
use crate::protocol::text::{Mark, clip_marked};

/// Entries kept from the start of a session.
pub const HEAD: usize = 2_000;
/// Entries kept from the end of a session.
pub const TAIL: usize = 1_000;
/// Entries between head and tail kept because a finding points at them.
pub const PINNED: usize = 1_000;
/// Bytes of an entry's text kept: a 1 MiB request (or a server's 64 MiB line) would
/// otherwise be held whole in every report and every event that carries it.
pub const ENTRY_TEXT: usize = 64 * 1024;

/// The entries of a session, in order, within bounds (the rest counted as dropped).
#[derive(Clone, Debug)]
pub struct Transcript {
    started: Instant,
    /// Entries `0..head.len()`.
    head: Vec<Entry>,
    /// The latest entries after the head, with their indices (ascending).
    tail: VecDeque<(usize, Entry)>,
    /// Entries findings point at, kept after they left the tail.
    pinned: BTreeMap<usize, Entry>,
    /// Indices in the tail that findings point at (kept when they leave it).
    pins: BTreeSet<usize>,
    /// Entries recorded so far: the next index.
    recorded: usize,
    dropped: u64,
    /// Where each entry is told as it is recorded (a frame event of this scenario).
    told: Option<(Emitter, String)>,
}

impl Transcript {
    /// An empty transcript whose times count from `started`.
    pub fn new(started: Instant) -> Self {
        Transcript {
            started,
            head: Vec::new(),
            tail: VecDeque::new(),
            pinned: BTreeMap::new(),
            pins: BTreeSet::new(),
            recorded: 0,
            dropped: 0,
            told: None,
        }
    }

    /// Tells `events` every entry recorded from now on, as a frame of `scenario`.
    pub fn tell(&mut self, events: Emitter, scenario: String) {
        self.told = Some((events, scenario));
    }

    /// Records an entry and returns its index (stable; the entry itself may later leave
    /// the window, see [`Transcript::get`]).
    pub fn push(&mut self, direction: Direction, text: impl Into<String>) -> Option<usize> {
        let entry = Entry {
            at: self.started.elapsed(),
            direction,
            text: clip_marked(text.into(), ENTRY_TEXT, Mark::LeftOut),
            http: None,
        };
        let index = self.recorded;
        self.recorded += 1;
        if let Some((events, scenario)) = &self.told {
            events.emit(Event::frame(scenario, index, &entry));
        }
        if self.head.len() < HEAD {
            self.head.push(entry);
            return Some(index);
        }
        self.tail.push_back((index, entry));
        if self.tail.len() > TAIL
            && let Some((old, entry)) = self.tail.pop_front()
        {
            if self.pins.remove(&old) && self.pinned.len() < PINNED {
                self.pinned.insert(old, entry);
            } else {
                self.dropped += 1;
            }
        }
        Some(index)
    }

    /// Records an HTTP exchange or SSE event.
    pub fn push_http(&mut self, record: crate::transport::http::HttpRecord) -> Option<usize> {
        let index = self.push(Direction::Event, record.summary())?;
        if let Some(entry) = self.get_mut(index) {
            entry.http = Some(record);
        }
        Some(index)
    }

    /// Keeps entry `index` when it leaves the tail: a finding points at it.
    pub fn pin(&mut self, index: usize) {
        if index >= self.head.len() && index < self.recorded {
            self.pins.insert(index);
        }
    }

    /// The entries kept, oldest first.
    pub fn entries(&self) -> Vec<&Entry> {
        self.kept().map(|(_, e)| e).collect()
    }

    /// Kept entries with their indices, in order.
    fn kept(&self) -> impl Iterator<Item = (usize, &Entry)> {
        let mut rest: Vec<(usize, &Entry)> = self
            .pinned
            .iter()
            .map(|(i, e)| (*i, e))
            .chain(self.tail.iter().map(|(i, e)| (*i, e)))
            .collect();
        rest.sort_by_key(|(i, _)| *i);
        self.head.iter().enumerate().chain(rest)
    }

    /// The entry at `index` (a finding's `frame`), if it is still kept.
    pub fn get(&self, index: usize) -> Option<&Entry> {
        if index < self.head.len() {
            return self.head.get(index);
        }
        self.tail
            .binary_search_by_key(&index, |(i, _)| *i)
            .ok()
            .map(|at| &self.tail[at].1)
            .or_else(|| self.pinned.get(&index))
    }

    fn get_mut(&mut self, index: usize) -> Option<&mut Entry> {
        if index < self.head.len() {
            return self.head.get_mut(index);
        }
        match self.tail.binary_search_by_key(&index, |(i, _)| *i) {
            Ok(at) => Some(&mut self.tail[at].1),
            Err(_) => self.pinned.get_mut(&index),
        }
    }

    /// Entries recorded but no longer kept.
    pub fn dropped(&self) -> u64 {
        self.dropped
    }

    /// Entries recorded in all.
    pub fn len(&self) -> usize {
        self.recorded
    }

    /// Nothing recorded yet.
    pub fn is_empty(&self) -> bool {
        self.recorded == 0
    }

    /// When the session started.
    pub fn started(&self) -> Instant {
        self.started
    }

    /// The kept entries as the report's list, with one marker entry per run of entries
    /// left out, and each finding's `frame` moved to its entry's place in that list (or
    /// cleared, when its entry was left out). With nothing left out, the list is the
    /// transcript and no frame moves.
    pub fn window<'a>(&self, findings: impl IntoIterator<Item = &'a mut Finding>) -> Vec<Entry> {
        let mut list = Vec::new();
        let mut place = BTreeMap::new();
        let mut expected = 0;
        for (index, entry) in self.kept() {
            if index > expected {
                list.push(Entry {
                    at: entry.at,
                    direction: Direction::Event,
                    text: format!(
                        "{} entries not kept (mcpcheck keeps the first {HEAD}, the last {TAIL} and those findings point at)",
                        index - expected
                    ),
                    http: None,
                });
            }
            place.insert(index, list.len());
            list.push(entry.clone());
            expected = index + 1;
        }
        if self.dropped > 0 {
            for f in findings {
                f.frame = f.frame.and_then(|i| place.get(&i).copied());
            }
        }
        list
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::check::rules;
    use crate::protocol::Revision;

    #[test]
    fn a_huge_entry_keeps_its_start_and_says_how_much_is_left_out() {
        let mut t = Transcript::new(Instant::now());
        let big = format!("{{\"pad\":\"{}\"}}", "é".repeat(ENTRY_TEXT));
        let i = t.push(Direction::Sent, big.clone()).unwrap();
        let kept = &t.get(i).unwrap().text;
        assert!(kept.starts_with("{\"pad\":\"éé"), "{}", &kept[..20]);
        let (start, note) = kept.split_once('…').expect("a note");
        assert!(start.len() <= ENTRY_TEXT);
        assert_eq!(
            note,
            format!(" ({} more bytes not kept)", big.len() - start.len())
        );
        let small = t.push(Direction::Sent, "{}").unwrap();
        assert_eq!(t.get(small).unwrap().text, "{}");
    }

    #[test]
    fn keeps_head_tail_and_pinned_and_moves_frames() {
        let mut t = Transcript::new(Instant::now());
        let total = HEAD + TAIL + 5_000;
        let pinned = HEAD + 10;
        for n in 0..total {
            let i = t.push(Direction::Received, format!("frame {n}")).unwrap();
            if i == pinned {
                t.pin(i);
            }
        }
        assert_eq!(t.len(), total);
        assert_eq!(t.entries().len(), HEAD + TAIL + 1);
        assert_eq!(t.dropped(), 5_000 - 1);
        assert_eq!(t.get(pinned).unwrap().text, format!("frame {pinned}"));
        assert!(t.get(HEAD + 11).is_none());
        assert_eq!(
            t.get(total - 1).unwrap().text,
            format!("frame {}", total - 1)
        );

        let mut findings = [
            Finding::new(&rules::SESSION_TIMEOUT, Revision::DEFAULT, "a").at_frame(pinned),
            Finding::new(&rules::SESSION_TIMEOUT, Revision::DEFAULT, "b").at_frame(HEAD + 11),
            Finding::new(&rules::SESSION_TIMEOUT, Revision::DEFAULT, "c").at_frame(total - 1),
        ];
        let list = t.window(findings.iter_mut());
        let at = |f: &Finding| list[f.frame.unwrap()].text.clone();
        assert_eq!(at(&findings[0]), format!("frame {pinned}"));
        assert_eq!(findings[1].frame, None);
        assert_eq!(at(&findings[2]), format!("frame {}", total - 1));
        assert!(list[HEAD].text.starts_with("10 entries not kept"));
    }

    #[test]
    fn a_short_session_is_kept_whole() {
        let mut t = Transcript::new(Instant::now());
        for n in 0..10 {
            t.push(Direction::Sent, format!("{n}"));
        }
        let mut f = [Finding::new(&rules::SESSION_TIMEOUT, Revision::DEFAULT, "x").at_frame(3)];
        let list = t.window(f.iter_mut());
        assert_eq!(list.len(), 10);
        assert_eq!(f[0].frame, Some(3));
    }
}

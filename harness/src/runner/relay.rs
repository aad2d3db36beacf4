//! Revision legs run at once, but each leg is told whole and in order: a later leg's
//! events wait in its [`Relay`] until every earlier leg has been told, so the terminal and
//! the event log read as if the legs had run one after another.

use std::sync::{Arc, Mutex};

use crate::outcome::events::{Event, EventSink};

/// A sink that holds events until it is opened, then passes them (and every later one)
/// on to its sinks, in arrival order.
pub struct Relay {
    sinks: Vec<Arc<dyn EventSink>>,
    /// `Some`: held events, not yet passed on; `None`: open.
    held: Mutex<Option<Vec<Event>>>,
}

impl std::fmt::Debug for Relay {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Relay")
            .field("sinks", &self.sinks.len())
            .field("open", &self.lock().is_none())
            .finish()
    }
}

impl Relay {
    /// A relay into `sinks`, passing events on at once when `open`, else holding them
    /// until [`Relay::open`].
    pub fn new(sinks: Vec<Arc<dyn EventSink>>, open: bool) -> Self {
        Relay {
            sinks,
            held: Mutex::new((!open).then(Vec::new)),
        }
    }

    /// Passes on what was held, then everything that comes. The lock is kept while the
    /// held events go out, so an event arriving meanwhile still comes after them.
    pub fn open(&self) {
        let mut held = self.lock();
        for event in held.take().unwrap_or_default() {
            self.pass(&event);
        }
    }

    fn pass(&self, event: &Event) {
        for s in &self.sinks {
            s.event(event);
        }
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, Option<Vec<Event>>> {
        self.held.lock().unwrap_or_else(|e| e.into_inner())
    }
}

impl EventSink for Relay {
    fn event(&self, event: &Event) {
        let mut held = self.lock();
        match held.as_mut() {
            Some(held) => held.push(event.clone()),
            // Passed on under the lock: `open` cannot slip held events in after it.
            None => self.pass(event),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::outcome::events::Collect;

    fn ping(n: usize) -> Event {
        Event::ScenarioSkipped {
            scenario: format!("s{n}"),
            reason: String::new(),
        }
    }

    fn names(events: Vec<Event>) -> Vec<String> {
        events
            .iter()
            .map(|e| e.scenario().unwrap_or_default().to_owned())
            .collect()
    }

    #[test]
    fn held_events_come_out_in_order_when_opened() {
        let out = Arc::new(Collect::default());
        let relay = Relay::new(vec![out.clone()], false);
        relay.event(&ping(1));
        relay.event(&ping(2));
        assert!(out.take().is_empty(), "nothing passes while held");
        relay.open();
        relay.event(&ping(3));
        assert_eq!(names(out.take()), ["s1", "s2", "s3"]);
        let open = Relay::new(vec![out.clone()], true);
        open.event(&ping(4));
        assert_eq!(names(out.take()), ["s4"]);
    }
}

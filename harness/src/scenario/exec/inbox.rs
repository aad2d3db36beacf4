//! What the server sent on its own during a scenario (notifications, requests, responses
//! to raw bytes), kept until an expectation takes it.

use std::collections::VecDeque;

use crate::session::Unsolicited;

/// Messages the server sent on its own, not yet matched by an expectation.
#[derive(Debug, Default)]
pub(super) struct Inbox {
    /// In arrival order.
    pub(super) queue: VecDeque<Unsolicited>,
    /// Queue length when the last raw bytes were sent: a null-id response older than that
    /// cannot answer them.
    mark: usize,
    /// Whether the session was settled before the scenario's first notification or raw
    /// bytes (`Executor::settle`).
    settled: bool,
}

impl Inbox {
    /// Marks everything queued so far as older than the bytes about to be sent.
    pub(super) fn mark(&mut self) {
        self.mark = self.queue.len();
    }

    /// Where messages newer than the last [`mark`](Self::mark) start.
    pub(super) fn marked(&self) -> usize {
        self.mark.min(self.queue.len())
    }

    /// True the first time only: the session is settled once per scenario.
    pub(super) fn settle_once(&mut self) -> bool {
        !std::mem::replace(&mut self.settled, true)
    }
}

//! A session kept for more than one scenario: each scenario sees a window of it (its own
//! transcript, findings and unsolicited messages), and the session is handed on only when
//! nothing in the window may have left it in a state the next scenario would notice.

use std::time::Instant;

use super::{Session, SessionRecord};
use crate::check::progress::ProgressHistory;
use crate::outcome::Severity;
use crate::protocol::RequestId;
use crate::session::transcript::Transcript;

impl Session {
    /// Starts a new window on a session an earlier scenario left healthy: from here on
    /// the transcript, findings and unsolicited messages are the new window's, with times
    /// counted from `started`. The handshake, the revision spoken and the request ids
    /// already used carry over.
    pub fn begin_window(&mut self, started: Instant) {
        self.requests.begin_window();
        self.transcript = Transcript::new(started);
        self.findings.clear();
        self.watchers.new_window();
        self.unsolicited.clear();
        // Progress tokens are the scenario's (`mcpcheck-1`, ...): a new scenario's token
        // is a new token, not a continuation of the last one with that name.
        self.progress = ProgressHistory::default();
        // 2026-07-28 carries nothing from one request to the next: the log levels and
        // client capabilities that count are those of the new scenario's own requests.
        self.sent.new_window();
    }

    /// Keeps the session from allocating `ids`, which the scenario will choose itself
    /// (until the next window begins).
    pub fn reserve_ids(&mut self, ids: impl IntoIterator<Item = RequestId>) {
        self.requests.reserve(ids);
    }

    /// Keeps the session from ever allocating `ids` (the ids every scenario that may
    /// share it chooses itself).
    pub fn never_allocate(&mut self, ids: impl IntoIterator<Item = RequestId>) {
        self.requests.never_allocate(ids);
    }

    /// Whether the session can serve another scenario: handshake done, the server still
    /// there, nothing awaited or given up on, no partial raw line, and no MUST-level rule
    /// of the session broken in this window (a broken rule may mean a confused server; a
    /// SHOULD-level one, such as a missing optional field, does not).
    pub fn reusable(&self) -> bool {
        self.profile.is_some() && self.sent.initialized && self.clean()
    }

    /// Whether a session a scenario opened itself can serve the shared ones after it
    /// (`Lease::Donor`): reusable, with the handshake they would have done (the default
    /// one, whose answer is kept for their expectations); or healthy with no handshake
    /// begun (nothing but requests before `initialize`, which the next scenario then
    /// sends, as it would on a new server).
    pub fn donatable(&self) -> bool {
        let opened = self.reusable() && self.opening.is_some();
        let unopened = self.profile.is_none() && !self.sent.initialized && self.clean();
        opened || unopened
    }

    /// The server still there, nothing awaited or given up on, no partial raw line, and
    /// no MUST-level rule broken in this window, but for those the server already broke
    /// answering the handshake (`handshake::OpeningReply::broke`: what it does on every frame).
    fn clean(&self) -> bool {
        let known = |rule: &str| self.broke_on_opening(rule);
        self.peer.alive()
            && self.requests.settled()
            && self.raw_partial_line.is_empty()
            && !(self.findings.iter()).any(|f| f.severity == Severity::Failure && !known(&f.rule))
            && self.findings.suppressed_rules().all(known)
    }

    /// Whether a request of this session already used `id` (a request may not reuse one
    /// within a session): a scenario choosing `id` itself then needs another session.
    pub fn used_id(&self, id: &RequestId) -> bool {
        self.requests.used(id)
    }

    /// Ends the current window without ending the session: what it recorded, as
    /// [`Session::finish`] would return it, but with no shutdown (the server lives on).
    pub fn take_window(&mut self) -> SessionRecord {
        let schema = self.schema_status();
        let started = self.transcript.started();
        SessionRecord {
            transcript: std::mem::replace(&mut self.transcript, Transcript::new(started)),
            findings: self.findings.take(),
            schema,
            shutdown: None,
            stderr_bytes: self.stderr().map_or(0, |log| log.total_bytes()),
            stderr_tail: self
                .stderr()
                .map(|log| log.last_lines(20))
                .unwrap_or_default(),
        }
    }
}

//! Waiting for a server to settle: barriers (a cheap request whose answer shows that
//! everything the earlier messages caused has arrived), forgiving requests the server read
//! and chose not to answer, and pumping what arrives for a window.

use std::time::Duration;

use super::Session;

impl Session {
    /// Waits until the server has sent everything that what came before causes, at most
    /// `window`: a barrier request (`ping`, or `server/discover` at 2026-07-28, which has
    /// no ping; a stdio server handles its input in order, so what it sent before the
    /// answer is what the earlier messages caused), then `grace` for a server that answers
    /// asynchronously. Where that cannot be relied on (HTTP, whose answers travel on
    /// separate streams) or the server does not answer, the whole window is waited.
    /// Returns whether the barrier held.
    pub async fn barrier(&mut self, window: Duration, grace: Duration) -> bool {
        let deadline = tokio::time::Instant::now() + window;
        let stdio = self.transport.pid().is_some();
        if !stdio {
            self.pump(window).await;
            return false;
        }
        let held = self.probe_answered(deadline).await;
        let left = deadline.saturating_duration_since(tokio::time::Instant::now());
        // Past the pong, the grace; without one, what is left of the window.
        self.pump(if held { grace.min(left) } else { left }).await;
        held
    }

    /// The revision's cheapest request: `ping`, or `server/discover` where there is none.
    fn probe_method(&self) -> &'static str {
        match self.config.revision.has_handshake() {
            true => "ping",
            false => "server/discover",
        }
    }

    /// Sends the revision's cheapest request (`ping`, or `server/discover` where there is
    /// no ping) and waits until `deadline` for its answer. Without one in time, a late
    /// answer is a response to an expired request, not an unsolicited one.
    async fn probe_answered(&mut self, deadline: tokio::time::Instant) -> bool {
        let id = self.allocate_id();
        let method = self.probe_method();
        if self.send_request(id.clone(), method, None).await.is_err() {
            return false;
        }
        let window = deadline.saturating_duration_since(tokio::time::Instant::now());
        if self.poll_reply(&id, window).await.is_some() {
            return true;
        }
        self.expire(&id);
        false
    }

    /// Whether the requests still unanswered (or given up on) were ones the server read
    /// and chose not to answer (invalid JSON-RPC it ignores, a batch it does not take)
    /// rather than a sign of a stuck server: over stdio a request sent after them is
    /// answered within `window`. Those requests
    /// then no longer keep the session from serving another scenario, and an answer that
    /// comes for one later is a late answer, not a held one ([`Session::finish`]).
    pub async fn forgive_unanswered(&mut self, window: Duration) -> bool {
        if self.requests.settled() {
            return true;
        }
        if self.transport.pid().is_none() || self.peer.stdout_closed {
            return false;
        }
        let probe = self.probe_method();
        let window = self
            .config
            .pace
            .bound(probe, window)
            .map_or(window, |b| b.after);
        let deadline = tokio::time::Instant::now() + window;
        if !self.probe_answered(deadline).await {
            return false;
        }
        // Still unanswered (raw requests nobody awaited, say): given up on now.
        self.requests.forgive_all();
        true
    }

    /// Lets everything the server sends for the messages so far arrive, where a `ping`
    /// barrier can show it (stdio, a revision with `ping`, after `notifications/initialized`);
    /// elsewhere it waits for nothing.
    pub async fn settle(&mut self, window: Duration) {
        let stdio = self.transport.pid().is_some();
        if stdio && self.config.revision.has_handshake() && self.sent.initialized {
            self.barrier(window, Duration::ZERO).await;
        }
    }

    /// Processes whatever arrives for `window`: used to see that nothing (or something)
    /// comes, and to collect notifications.
    pub async fn pump(&mut self, window: Duration) {
        let deadline = tokio::time::Instant::now() + window;
        while !self.peer.stdout_closed && self.receive_one(deadline).await {}
    }
}

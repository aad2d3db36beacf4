//! Waiting for a server to settle: barriers (a cheap request whose answer shows that
//! everything the earlier messages caused has arrived), forgiving requests the server read
//! and chose not to answer, and pumping what arrives for a window.

use std::time::Duration;

use super::Session;
use crate::transport::Quiet;

/// How often a wait for the transport's evidence looks again, taking in what arrived.
const QUIET_POLL: Duration = Duration::from_millis(5);

impl Session {
    /// Waits until the server has sent everything that what came before causes, at most
    /// `window`: a barrier request (`ping`, or `server/discover` at 2026-07-28, which has
    /// no ping; a stdio server handles its input in order, so what it sent before the
    /// answer is what the earlier messages caused), then `grace` for a server that answers
    /// asynchronously. Over HTTP, whose answers travel on separate streams, the evidence is
    /// the transport's instead (`quiet_until`). Where neither holds, the whole
    /// window is waited. Returns whether the barrier held.
    pub async fn barrier(&mut self, window: Duration, grace: Duration) -> bool {
        let deadline = tokio::time::Instant::now() + window;
        let stdio = self.transport.pid().is_some();
        if !stdio {
            return self.quiet_until(deadline, false).await;
        }
        let held = self.probe_answered(deadline).await;
        let left = deadline.saturating_duration_since(tokio::time::Instant::now());
        // Past the pong, the grace; without one, what is left of the window.
        self.pump(if held { grace.min(left) } else { left }).await;
        held
    }

    /// [`Session::barrier`] for a wait on responses alone (an answer that must not come,
    /// or an error a server may also leave out). Over HTTP a response travels only on the
    /// stream of its own POST (basic/transports: the server "MUST NOT send a JSON-RPC
    /// response on the stream unless resuming a stream associated with a previous client
    /// request"), so an open GET stream or listen does not keep the wait going.
    pub async fn response_barrier(&mut self, window: Duration, grace: Duration) -> bool {
        match self.transport.pid() {
            Some(_) => self.barrier(window, grace).await,
            None => {
                let deadline = tokio::time::Instant::now() + window;
                self.quiet_until(deadline, true).await
            }
        }
    }

    /// Waits, up to `deadline`, until the transport shows that nothing more can arrive for
    /// the messages so far ([`Quiet::Closed`]; with `responses_only`, no response more:
    /// [`Quiet::Listening`] too), taking in what arrives meanwhile; true then. A stream the
    /// server may send on at any time (an open GET stream, a listen) otherwise leaves only
    /// the timer, and the transcript says so.
    async fn quiet_until(&mut self, deadline: tokio::time::Instant, responses_only: bool) -> bool {
        loop {
            match self.transport.quiet() {
                Quiet::Closed => return self.drain().await,
                Quiet::Listening if responses_only => return self.drain().await,
                Quiet::Listening => {
                    self.record_event(format!(
                        "waiting the rest of the window ({} ms): the server holds a stream open on which it may still send",
                        deadline
                            .saturating_duration_since(tokio::time::Instant::now())
                            .as_millis()
                    ));
                    self.pump_until(deadline).await;
                    return false;
                }
                Quiet::Unknown if tokio::time::Instant::now() >= deadline => return false,
                Quiet::Unknown => {
                    let slice = (tokio::time::Instant::now() + QUIET_POLL).min(deadline);
                    self.pump_until(slice).await;
                }
            }
        }
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

    /// Takes in what the ended exchanges delivered (all of it is queued already); true.
    async fn drain(&mut self) -> bool {
        self.pump(Duration::ZERO).await;
        true
    }

    /// Whether nothing more can arrive for the messages so far, as the transport shows it
    /// ([`Quiet::Closed`]; never over stdio, whose server may write at any time), after
    /// taking in what is queued.
    pub async fn drained(&mut self) -> bool {
        self.transport.quiet() == Quiet::Closed && self.drain().await
    }

    /// Whether the server may send without being asked, on a stream it holds open (over
    /// HTTP the GET stream, or a listen), so that a wait for silence can end only on a
    /// timer. Exchanges still running (the GET stream's answer not in yet) are waited for
    /// up to `within`; true when the transport still cannot tell (always, over stdio).
    pub async fn may_send_unasked(&mut self, within: Duration) -> bool {
        let deadline = tokio::time::Instant::now() + within;
        loop {
            match self.transport.quiet() {
                Quiet::Closed => return false,
                Quiet::Listening => return true,
                Quiet::Unknown if tokio::time::Instant::now() >= deadline => return true,
                Quiet::Unknown => tokio::time::sleep(Duration::from_millis(2)).await,
            }
        }
    }

    /// Takes in what the server sends for the messages so far, for at most `window` (a
    /// scenario's `sleep`): it ends as soon as the transport shows nothing more can arrive
    /// (`quiet_until`), which over stdio it never does: a stdio server may always write
    /// again, so there the whole window passes.
    pub async fn idle(&mut self, window: Duration) {
        self.quiet_until(tokio::time::Instant::now() + window, false)
            .await;
    }

    /// Processes whatever arrives for `window`: used to see that nothing (or something)
    /// comes, and to collect notifications.
    pub async fn pump(&mut self, window: Duration) {
        self.pump_until(tokio::time::Instant::now() + window).await;
    }

    async fn pump_until(&mut self, deadline: tokio::time::Instant) {
        while !self.peer.stdout_closed && self.receive_one(deadline).await {}
    }
}

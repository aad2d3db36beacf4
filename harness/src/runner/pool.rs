//! The sessions the suite's workers share: a scenario that `scenario::share` allows takes
//! an idle one (or opens one), and a healthy one comes back for the next scenario. The
//! last scenario that may want a session shuts it down inside its own window, so the
//! shutdown's findings (a server that ignores the end of its input, say) are reported.
//!
//! A scenario that needs a server of its own only to be first on it (`share::donates`)
//! hands its session to the pool afterwards when it left it as a shared one would be, and
//! the pool keeps places for such donations instead of starting servers of its own. The
//! scenarios that end their session (`share::ends_session`) lease one only after every
//! other shared scenario has got its own, so the sessions they end are ones no one wants.
//!
//! At most `limit` shared sessions live at once. Shared scenarios are short (a few
//! requests on a warm server), so a scenario that finds every session busy waits for one
//! rather than starting another server: against a server that spends a second of CPU
//! starting (Python, Node), each extra session costs more than the wait.

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};

use tokio::sync::Notify;

use crate::protocol::RequestId;
use crate::scenario::exec::Lease;
use crate::session::Session;

/// How many scenarios of each kind a pool serves.
#[derive(Clone, Copy, Debug, Default)]
pub struct Demand {
    /// Shared scenarios, those that end their session included.
    pub shared: usize,
    /// Of those, the ones that end their session.
    pub ending: usize,
    /// Scenarios of a fresh server that may hand it over afterwards.
    pub donors: usize,
}

/// Idle shared sessions, how many live, and how many scenarios may still ask for one.
#[derive(Debug)]
pub struct Pool {
    state: Mutex<State>,
    /// Rung when a session comes back or a seat is given up.
    freed: Notify,
    /// Rung when every shared scenario that does not end its session has its lease.
    early_done: Notify,
    /// Shared scenarios that have not got their session yet.
    waiting: Arc<AtomicUsize>,
    /// Of those, the ones that do not end their session.
    early: AtomicUsize,
    /// Most sessions alive at once.
    limit: usize,
    /// Ids the shared scenarios choose themselves: no shared session allocates them, so
    /// every session can serve every scenario.
    chosen: Arc<[RequestId]>,
}

#[derive(Debug, Default)]
struct State {
    idle: Vec<Session>,
    /// Sessions alive: idle, in use, being opened, or awaited from a donor.
    live: usize,
    /// Places kept for donations (counted in `live`), never more than `donors_left`.
    reserved: usize,
    /// Donors that have not ended yet.
    donors_left: usize,
    /// Sessions held by scenarios that end them (counted in `live`): they never come back.
    ending: usize,
}

/// One live session's place in the pool, held by the scenario using it. Dropped without
/// [`Seat::give_back`] (the session was shut down, or the scenario died), it frees the
/// place for a new session.
#[derive(Debug)]
pub struct Seat {
    pool: Arc<Pool>,
    /// Whether the session came back (its place stays taken).
    kept: bool,
    /// Whether its scenario ends the session (it is counted in `State::ending`).
    ends: bool,
}

impl Pool {
    /// A pool for `demand`, at most `limit` sessions at once (at least one) besides
    /// donated ones, whose scenarios choose the ids `chosen` themselves.
    pub fn new(demand: Demand, limit: usize, chosen: Vec<RequestId>) -> Self {
        let limit = limit.max(1);
        let reserved = demand.donors.min(limit);
        Pool {
            state: Mutex::new(State {
                idle: Vec::new(),
                live: reserved,
                reserved,
                donors_left: demand.donors,
                ending: 0,
            }),
            freed: Notify::new(),
            early_done: Notify::new(),
            waiting: Arc::new(AtomicUsize::new(demand.shared)),
            early: AtomicUsize::new(demand.shared.saturating_sub(demand.ending)),
            limit,
            chosen: chosen.into(),
        }
    }

    /// The ids the shared scenarios choose themselves (a donor's session must not
    /// allocate them either).
    pub fn chosen(&self) -> Arc<[RequestId]> {
        self.chosen.clone()
    }

    /// The lease of a shared scenario about to start: the most recently returned idle
    /// session that `fits` it, or room to open one, waiting while all `limit` are busy;
    /// and the question whether any shared scenario is still to come. A scenario that
    /// `ends` its session first waits until every other shared scenario has its lease,
    /// and is told that no one wants the session after it.
    pub async fn lease(
        self: &Arc<Self>,
        fits: impl Fn(&Session) -> bool,
        ends: bool,
    ) -> (Lease, Seat) {
        if ends {
            loop {
                let done = self.early_done.notified();
                tokio::pin!(done);
                done.as_mut().enable();
                if self.early.load(Ordering::SeqCst) == 0 {
                    break;
                }
                done.await;
            }
        }
        let session = loop {
            let freed = self.freed.notified();
            tokio::pin!(freed);
            // Registered before looking, so a session handed back meanwhile wakes us.
            freed.as_mut().enable();
            let unfit = {
                let mut state = self.lock();
                if let Some(at) = state.idle.iter().rposition(&fits) {
                    state.ending += usize::from(ends);
                    break Some(Box::new(state.idle.remove(at)));
                }
                // A scenario that ends its session waits for one that may still come back
                // (in use by a scenario that hands it back, or a donor's); with none, it
                // opens one as it would a server of its own: no later scenario waits for
                // the place.
                if ends {
                    let coming = state.live.saturating_sub(state.idle.len() + state.ending);
                    if coming == 0 {
                        state.live += 1;
                        state.ending += 1;
                        break None;
                    }
                } else if state.live < self.limit {
                    state.live += 1;
                    break None;
                }
                // Every place taken. While some session is busy, wait: it may come back
                // fit. When all are idle and each used an id this scenario chooses, one
                // of them makes way for a new session.
                match !ends && state.idle.len() == state.live {
                    true => state.idle.pop(),
                    false => None,
                }
            };
            match unfit {
                Some(unfit) => {
                    unfit.finish().await;
                    break None;
                }
                None => freed.await,
            }
        };
        self.got_one(ends);
        let waiting = self.waiting.clone();
        let lease = Lease::Shared {
            session,
            wanted: Box::new(move || !ends && waiting.load(Ordering::SeqCst) > 0),
            chosen: self.chosen.clone(),
        };
        let seat = Seat {
            pool: self.clone(),
            kept: false,
            ends,
        };
        (lease, seat)
    }

    /// A shared scenario that will not run after all (blocked): one fewer to wait for.
    pub fn pass(&self, ends: bool) {
        self.got_one(ends);
    }

    fn got_one(&self, ends: bool) {
        // Saturating: a miscount must never wrap into "wanted forever".
        let less = |n: usize| Some(n.saturating_sub(1));
        let _ = self
            .waiting
            .fetch_update(Ordering::SeqCst, Ordering::SeqCst, less);
        if !ends {
            let before = self
                .early
                .fetch_update(Ordering::SeqCst, Ordering::SeqCst, less);
            if before.is_ok_and(|n| n <= 1) {
                self.early_done.notify_waiters();
            }
        }
    }

    /// A donor's ticket: it must say, once, whether it hands its session over.
    pub fn donor(self: &Arc<Self>) -> Donation {
        Donation {
            pool: Some(self.clone()),
        }
    }

    /// What a donor left: a session for the shared scenarios, or nothing (its place,
    /// if one was kept and no later donor can fill it, goes to a new session).
    fn donated(&self, session: Option<Session>) {
        let mut state = self.lock();
        state.donors_left = state.donors_left.saturating_sub(1);
        match session {
            Some(session) => {
                // Over the limit if need be: the server is already running.
                match state.reserved > 0 {
                    true => state.reserved -= 1,
                    false => state.live += 1,
                }
                state.idle.push(session);
            }
            None if state.reserved > state.donors_left => {
                state.reserved -= 1;
                state.live = state.live.saturating_sub(1);
            }
            None => return,
        }
        drop(state);
        self.freed.notify_one();
    }

    /// Shuts down the sessions nobody took (a scenario handed its session back just as
    /// the last one started on another): their servers must not outlive the run.
    pub async fn close(&self) {
        let idle = std::mem::take(&mut self.lock().idle);
        for session in idle {
            session.finish().await;
        }
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, State> {
        self.state.lock().unwrap_or_else(|e| e.into_inner())
    }
}

/// A donor's promise to the pool (see [`Pool::donor`]). Dropped unkept (the scenario
/// did not run, or its task died), it counts as no donation.
#[derive(Debug)]
pub struct Donation {
    pool: Option<Arc<Pool>>,
}

impl Donation {
    /// Hands the donor's session over, if it left one.
    pub fn deliver(mut self, session: Option<Session>) {
        if let Some(pool) = self.pool.take() {
            pool.donated(session);
        }
    }
}

impl Drop for Donation {
    fn drop(&mut self) {
        if let Some(pool) = self.pool.take() {
            pool.donated(None);
        }
    }
}

impl Seat {
    /// Hands a healthy session back for the next scenario.
    pub fn give_back(mut self, session: Session) {
        let mut state = self.pool.lock();
        state.idle.push(session);
        if self.ends {
            // One that ended up not using it (it was blocked).
            state.ending = state.ending.saturating_sub(1);
        }
        drop(state);
        self.kept = true;
        self.pool.freed.notify_one();
    }
}

impl Drop for Seat {
    fn drop(&mut self) {
        if !self.kept {
            let mut state = self.pool.lock();
            state.live = state.live.saturating_sub(1);
            if self.ends {
                state.ending = state.ending.saturating_sub(1);
            }
            drop(state);
            self.pool.freed.notify_one();
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn shared(n: usize) -> Demand {
        Demand {
            shared: n,
            ..Demand::default()
        }
    }

    fn wanted(lease: Lease) -> bool {
        match lease {
            Lease::Shared {
                session, wanted, ..
            } => {
                assert!(session.is_none(), "nothing was handed back");
                wanted()
            }
            Lease::Fresh | Lease::Donor { .. } => panic!("a pool lease is shared"),
        }
    }

    /// The last shared scenario to start shuts its session down (so the shutdown is in
    /// a window); a blocked one counts as started.
    #[tokio::test]
    async fn only_the_last_shared_scenario_lets_its_session_go() {
        let pool = Arc::new(Pool::new(shared(3), 3, vec![]));
        let (first, _a) = pool.lease(|_| true, false).await;
        pool.pass(false);
        let (third, _b) = pool.lease(|_| true, false).await;
        assert!(!wanted(third), "the third and last");
        assert!(!wanted(first), "asked after the last one started");
        // A miscount never wraps around into "wanted forever".
        pool.pass(false);
        let (again, _c) = pool.lease(|_| true, false).await;
        assert!(!wanted(again));
    }

    /// With every place taken, a scenario waits until a seat is given up, and a waiting
    /// scenario still counts as one that wants a session.
    #[tokio::test]
    async fn a_full_pool_makes_the_next_scenario_wait() {
        let pool = Arc::new(Pool::new(shared(2), 1, vec![]));
        let (first, seat) = pool.lease(|_| true, false).await;
        let later = {
            let pool = pool.clone();
            tokio::spawn(async move { pool.lease(|_| true, false).await })
        };
        tokio::time::sleep(std::time::Duration::from_millis(50)).await;
        assert!(!later.is_finished(), "one place, and it is taken");
        assert!(wanted(first), "the waiting scenario still wants a session");
        drop(seat);
        let (second, _seat) = tokio::time::timeout(std::time::Duration::from_secs(5), later)
            .await
            .expect("a freed place lets it go on")
            .expect("the task ran");
        assert!(!wanted(second));
    }

    /// A place kept for a donor makes a shared scenario wait for the donor rather than
    /// start a server; a donor that leaves nothing gives the place back.
    #[tokio::test]
    async fn a_kept_place_waits_for_its_donor() {
        let demand = Demand {
            shared: 1,
            donors: 1,
            ..Demand::default()
        };
        let pool = Arc::new(Pool::new(demand, 1, vec![]));
        let donation = pool.donor();
        let later = {
            let pool = pool.clone();
            tokio::spawn(async move { pool.lease(|_| true, false).await })
        };
        tokio::time::sleep(std::time::Duration::from_millis(50)).await;
        assert!(!later.is_finished(), "the one place is the donor's");
        drop(donation);
        let (lease, _seat) = tokio::time::timeout(std::time::Duration::from_secs(5), later)
            .await
            .expect("an unkept donation frees the place")
            .expect("the task ran");
        assert!(
            !wanted(lease),
            "it opens a session of its own, the last one"
        );
    }

    /// A scenario that ends its session waits until every other shared scenario has its
    /// lease and no session in use may come back, and is told no one wants the session
    /// after it.
    #[tokio::test]
    async fn an_ending_scenario_leases_last() {
        let demand = Demand {
            shared: 2,
            ending: 1,
            ..Demand::default()
        };
        let pool = Arc::new(Pool::new(demand, 2, vec![]));
        let ending = {
            let pool = pool.clone();
            tokio::spawn(async move { pool.lease(|_| true, true).await })
        };
        tokio::time::sleep(std::time::Duration::from_millis(50)).await;
        assert!(
            !ending.is_finished(),
            "another shared scenario has not started"
        );
        let (early, seat) = pool.lease(|_| true, false).await;
        assert!(wanted(early), "the ending one still wants a session");
        // The early scenario's session may come back: the ending one waits for it
        // rather than start a server.
        tokio::time::sleep(std::time::Duration::from_millis(50)).await;
        assert!(
            !ending.is_finished(),
            "a session in use may still come back"
        );
        drop(seat);
        let (last, _seat) = tokio::time::timeout(std::time::Duration::from_secs(5), ending)
            .await
            .expect("with none to come back, it opens one")
            .expect("the task ran");
        assert!(!wanted(last));
    }
}

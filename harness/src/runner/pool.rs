//! The sessions the suite's workers share: a scenario that `scenario::share` allows takes
//! an idle one (or opens one), and a healthy one comes back for the next scenario. The
//! last scenario that may want a session shuts it down inside its own window, so the
//! shutdown's findings (a server that ignores the end of its input, say) are reported.
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

/// Idle shared sessions, how many live, and how many scenarios may still ask for one.
#[derive(Debug)]
pub struct Pool {
    state: Mutex<State>,
    /// Rung when a session comes back or a seat is given up.
    freed: Notify,
    /// Shared scenarios that have not got their session yet.
    waiting: Arc<AtomicUsize>,
    /// Most sessions alive at once.
    limit: usize,
    /// Ids the shared scenarios choose themselves: no shared session allocates them, so
    /// every session can serve every scenario.
    chosen: Arc<[RequestId]>,
}

#[derive(Debug, Default)]
struct State {
    idle: Vec<Session>,
    /// Sessions alive: idle, in use, or being opened.
    live: usize,
}

/// One live session's place in the pool, held by the scenario using it. Dropped without
/// [`Seat::give_back`] (the session was shut down, or the scenario died), it frees the
/// place for a new session.
#[derive(Debug)]
pub struct Seat {
    pool: Arc<Pool>,
    /// Whether the session came back (its place stays taken).
    kept: bool,
}

impl Pool {
    /// A pool for `scenarios` shared scenarios, at most `limit` sessions at once (at
    /// least one), whose scenarios choose the ids `chosen` themselves.
    pub fn new(scenarios: usize, limit: usize, chosen: Vec<RequestId>) -> Self {
        Pool {
            state: Mutex::new(State::default()),
            freed: Notify::new(),
            waiting: Arc::new(AtomicUsize::new(scenarios)),
            limit: limit.max(1),
            chosen: chosen.into(),
        }
    }

    /// The lease of a shared scenario about to start: the most recently returned idle
    /// session that `fits` it, or room to open one, waiting while all `limit` are busy;
    /// and the question whether any shared scenario is still to come.
    pub async fn lease(self: &Arc<Self>, fits: impl Fn(&Session) -> bool) -> (Lease, Seat) {
        let session = loop {
            let freed = self.freed.notified();
            tokio::pin!(freed);
            // Registered before looking, so a session handed back meanwhile wakes us.
            freed.as_mut().enable();
            let unfit = {
                let mut state = self.lock();
                if let Some(at) = state.idle.iter().rposition(&fits) {
                    break Some(Box::new(state.idle.remove(at)));
                }
                if state.live < self.limit {
                    state.live += 1;
                    break None;
                }
                // Every place taken. While some session is busy, wait: it may come back
                // fit. When all are idle and each used an id this scenario chooses, one
                // of them makes way for a new session.
                match state.idle.len() == state.live {
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
        self.got_one();
        let waiting = self.waiting.clone();
        let lease = Lease::Shared {
            session,
            wanted: Box::new(move || waiting.load(Ordering::SeqCst) > 0),
            chosen: self.chosen.clone(),
        };
        let seat = Seat {
            pool: self.clone(),
            kept: false,
        };
        (lease, seat)
    }

    /// A shared scenario that will not run after all (blocked): one fewer to wait for.
    pub fn pass(&self) {
        self.got_one();
    }

    fn got_one(&self) {
        // Saturating: a miscount must never wrap into "wanted forever".
        let _ = self
            .waiting
            .fetch_update(Ordering::SeqCst, Ordering::SeqCst, |n| {
                Some(n.saturating_sub(1))
            });
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

impl Seat {
    /// Hands a healthy session back for the next scenario.
    pub fn give_back(mut self, session: Session) {
        self.pool.lock().idle.push(session);
        self.kept = true;
        self.pool.freed.notify_one();
    }
}

impl Drop for Seat {
    fn drop(&mut self) {
        if !self.kept {
            let mut state = self.pool.lock();
            state.live = state.live.saturating_sub(1);
            drop(state);
            self.pool.freed.notify_one();
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn wanted(lease: Lease) -> bool {
        match lease {
            Lease::Shared {
                session, wanted, ..
            } => {
                assert!(session.is_none(), "nothing was handed back");
                wanted()
            }
            Lease::Fresh => panic!("a pool lease is shared"),
        }
    }

    /// The last shared scenario to start shuts its session down (so the shutdown is in
    /// a window); a blocked one counts as started.
    #[tokio::test]
    async fn only_the_last_shared_scenario_lets_its_session_go() {
        let pool = Arc::new(Pool::new(3, 3, vec![]));
        let (first, _a) = pool.lease(|_| true).await;
        pool.pass();
        let (third, _b) = pool.lease(|_| true).await;
        assert!(!wanted(third), "the third and last");
        assert!(!wanted(first), "asked after the last one started");
        // A miscount never wraps around into "wanted forever".
        pool.pass();
        let (again, _c) = pool.lease(|_| true).await;
        assert!(!wanted(again));
    }

    /// With every place taken, a scenario waits until a seat is given up, and a waiting
    /// scenario still counts as one that wants a session.
    #[tokio::test]
    async fn a_full_pool_makes_the_next_scenario_wait() {
        let pool = Arc::new(Pool::new(2, 1, vec![]));
        let (first, seat) = pool.lease(|_| true).await;
        let later = {
            let pool = pool.clone();
            tokio::spawn(async move { pool.lease(|_| true).await })
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
}

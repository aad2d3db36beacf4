//! The sessions the suite's workers share: a scenario that `scenario::share` allows takes
//! an idle one (or opens one), and a healthy one comes back for the next scenario. The
//! last scenario that may want a session shuts it down inside its own window, so the
//! shutdown's findings (a server that ignores the end of its input, say) are reported.

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};

use crate::scenario::exec::Lease;
use crate::session::Session;

/// Idle shared sessions, and how many scenarios may still ask for one.
#[derive(Debug)]
pub struct Pool {
    idle: Mutex<Vec<Session>>,
    /// Shared scenarios not yet started.
    waiting: Arc<AtomicUsize>,
}

impl Pool {
    /// A pool for `scenarios` shared scenarios.
    pub fn new(scenarios: usize) -> Self {
        Pool {
            idle: Mutex::new(Vec::new()),
            waiting: Arc::new(AtomicUsize::new(scenarios)),
        }
    }

    /// The lease of a shared scenario about to start: the most recently returned idle
    /// session that `fits` it, if any, and the question whether any shared scenario is
    /// still to come.
    pub fn lease(&self, fits: impl Fn(&Session) -> bool) -> Lease {
        self.lease_count();
        let session = {
            let mut idle = self.lock();
            let found = idle.iter().rposition(fits);
            found.map(|at| Box::new(idle.remove(at)))
        };
        let waiting = self.waiting.clone();
        Lease::Shared {
            session,
            wanted: Box::new(move || waiting.load(Ordering::SeqCst) > 0),
        }
    }

    /// A shared scenario that will not run after all (blocked): one fewer to wait for.
    pub fn pass(&self) {
        let _ = self.lease_count();
    }

    fn lease_count(&self) -> usize {
        // Saturating: a miscount must never wrap into "wanted forever".
        self.waiting
            .fetch_update(Ordering::SeqCst, Ordering::SeqCst, |n| {
                Some(n.saturating_sub(1))
            })
            .unwrap_or(0)
    }

    /// Hands a healthy session back.
    pub fn give_back(&self, session: Session) {
        self.lock().push(session);
    }

    /// Shuts down the sessions nobody took (a scenario handed its session back just as
    /// the last one started on another): their servers must not outlive the run.
    pub async fn close(&self) {
        let idle = std::mem::take(&mut *self.lock());
        for session in idle {
            session.finish().await;
        }
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, Vec<Session>> {
        self.idle.lock().unwrap_or_else(|e| e.into_inner())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn wanted(lease: Lease) -> bool {
        match lease {
            Lease::Shared { session, wanted } => {
                assert!(session.is_none(), "nothing was handed back");
                wanted()
            }
            Lease::Fresh => panic!("a pool lease is shared"),
        }
    }

    /// The last shared scenario to start shuts its session down (so the shutdown is in
    /// a window); a blocked one counts as started.
    #[test]
    fn only_the_last_shared_scenario_lets_its_session_go() {
        let pool = Pool::new(3);
        let first = pool.lease(|_| true);
        pool.pass();
        assert!(!wanted(pool.lease(|_| true)), "the third and last");
        assert!(!wanted(first), "asked after the last one started");
        // A miscount never wraps around into "wanted forever".
        pool.pass();
        assert!(!wanted(pool.lease(|_| true)));
    }
}

//! The run's places to run: `--jobs` bounds the servers (or, over HTTP, the sessions)
//! that work at once, across every leg.

use std::sync::Arc;

use tokio::sync::{OwnedSemaphorePermit, Semaphore};

/// The run's slots. A scenario or a sweep holds a `work` slot while it runs. Over HTTP, a
/// scenario that mostly waits on a timer (`share::timer_windows`) holds a `wait` slot
/// instead: it costs the server one idle session, and on a work slot its wait would keep
/// a scenario that works from starting.
#[derive(Clone, Debug)]
pub struct Slots {
    jobs: usize,
    work: Arc<Semaphore>,
    wait: Arc<Semaphore>,
}

impl Slots {
    /// `jobs` of each kind (at least one).
    pub fn new(jobs: usize) -> Self {
        let jobs = jobs.max(1);
        Self {
            jobs,
            work: Arc::new(Semaphore::new(jobs)),
            wait: Arc::new(Semaphore::new(jobs)),
        }
    }

    /// Scenarios run at once (`--jobs`), as reported.
    pub fn jobs(&self) -> usize {
        self.jobs
    }

    /// A slot for work on the server.
    pub async fn work(&self) -> OwnedSemaphorePermit {
        Self::take(&self.work).await
    }

    /// A slot for a scenario that mostly waits on a timer.
    pub async fn wait(&self) -> OwnedSemaphorePermit {
        Self::take(&self.wait).await
    }

    async fn take(semaphore: &Arc<Semaphore>) -> OwnedSemaphorePermit {
        semaphore
            .clone()
            .acquire_owned()
            .await
            .expect("the run's semaphores are never closed")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn waiting_scenarios_do_not_take_the_work_slots() {
        let slots = Slots::new(2);
        let _waits = (slots.wait().await, slots.wait().await);
        // With every wait slot taken, both work slots are still free (a shared semaphore
        // would keep them back: the timeout fails the test instead of hanging it).
        let free = std::time::Duration::from_secs(5);
        let works = tokio::time::timeout(free, async { (slots.work().await, slots.work().await) })
            .await
            .expect("the work slots are not the wait slots");
        // Every slot of each kind is taken: a third of either kind waits.
        let third = tokio::time::timeout(std::time::Duration::from_millis(20), slots.work());
        assert!(third.await.is_err());
        drop(works);
        let _again = slots.work().await;
        assert_eq!(slots.jobs(), 2);
    }
}

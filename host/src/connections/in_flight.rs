//! API calls in flight, and the way queued work gives way to them.
//!
//! Why: on a machine with few cores a sweep keeps them busy, and an API call's threads (the
//! runtime's worker, the database reader's) often wake on a core where a sweep's thread is in the
//! middle of its run and wait for the end of it: that wait, not the call's own work, made the
//! API's slowest answers during a sweep (BENCHMARKS.md). Lower priorities for queued work's
//! threads did not shorten it on the kernels we measured, so Herald does it itself: the API's
//! listeners count the calls they are answering, and queued work asks `give_way` between its
//! steps, which parks it while the API answers `give_way_at` calls or more, so that their threads
//! find a core free. A pause is bounded: an API that is never quiet slows queued work but never
//! stops it.

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::Duration;

use tokio::sync::Notify;

/// The calls a server's API listeners are answering.
#[derive(Debug)]
pub struct InFlight {
    count: AtomicUsize,
    /// From how many calls queued work gives way (0: never).
    give_way_at: usize,
    /// Told when the count falls below `give_way_at`.
    below: Notify,
}

/// One call being answered; dropped when its answer's head is ready.
#[derive(Debug)]
pub struct Answering(Arc<InFlight>);

impl InFlight {
    /// Queued work gives way while `give_way_at` calls or more are answered (0: never).
    pub fn new(give_way_at: usize) -> InFlight {
        InFlight { count: AtomicUsize::new(0), give_way_at, below: Notify::new() }
    }

    /// Counts a call until the returned guard is dropped.
    pub fn enter(self: &Arc<Self>) -> Answering {
        self.count.fetch_add(1, Ordering::AcqRel);
        Answering(self.clone())
    }

    /// How many calls are being answered now.
    pub fn count(&self) -> usize {
        self.count.load(Ordering::Acquire)
    }

    fn crowded(&self) -> bool {
        self.give_way_at > 0 && self.count() >= self.give_way_at
    }

    /// Returns at once unless the API is answering `give_way_at` calls or more; then when it
    /// answers fewer, or after `at_most`, whichever comes first.
    pub async fn give_way(&self, at_most: Duration) {
        if !self.crowded() {
            return;
        }
        let below = self.below.notified();
        tokio::pin!(below);
        // Registered before the second look, so that a call ending in between still wakes us.
        below.as_mut().enable();
        if !self.crowded() {
            return;
        }
        let _ = tokio::time::timeout(at_most, below).await;
    }
}

impl Drop for Answering {
    fn drop(&mut self) {
        if self.0.count.fetch_sub(1, Ordering::AcqRel) == self.0.give_way_at {
            self.0.below.notify_waiters();
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const LONG: Duration = Duration::from_secs(3600);

    #[tokio::test]
    async fn queued_work_goes_on_at_once_while_fewer_calls_than_the_threshold_are_answered() {
        let calls = Arc::new(InFlight::new(2));
        let _one = calls.enter();
        assert_eq!(calls.count(), 1);
        tokio::time::timeout(Duration::from_secs(5), calls.give_way(LONG)).await.expect("one call of two does not hold it");
        let never = Arc::new(InFlight::new(0));
        let _calls: Vec<Answering> = (0..5).map(|_| never.enter()).collect();
        tokio::time::timeout(Duration::from_secs(5), never.give_way(LONG)).await.expect("0 never gives way");
    }

    #[tokio::test]
    async fn queued_work_waits_until_the_calls_under_way_end() {
        let calls = Arc::new(InFlight::new(1));
        let first = calls.enter();
        let second = calls.enter();
        let waiting = tokio::spawn({
            let calls = calls.clone();
            async move { calls.give_way(LONG).await }
        });
        tokio::time::sleep(Duration::from_millis(50)).await;
        assert!(!waiting.is_finished(), "it goes on while two calls are answered");
        drop(first);
        tokio::time::sleep(Duration::from_millis(50)).await;
        assert!(!waiting.is_finished(), "it goes on while one call is answered");
        drop(second);
        tokio::time::timeout(Duration::from_secs(5), waiting).await.expect("the last call's end wakes it").unwrap();
        assert_eq!(calls.count(), 0);
    }

    #[tokio::test]
    async fn queued_work_waits_at_most_its_bound_for_an_api_that_is_never_quiet() {
        let calls = Arc::new(InFlight::new(1));
        let _forever = calls.enter();
        let started = std::time::Instant::now();
        tokio::time::timeout(Duration::from_secs(60), calls.give_way(Duration::from_millis(40))).await.expect("the bound ends the wait");
        assert!(started.elapsed() >= Duration::from_millis(40), "waited {:?}", started.elapsed());
    }
}

//! At most N calls in flight per instance. The call over the limit is refused at once (not
//! queued): a caller that floods its own instance gets 429s, its neighbours get nothing of it.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};

use tokio::sync::{OwnedSemaphorePermit, Semaphore};

pub struct ConcurrencyLimiter {
    per_instance: usize,
    slots: Mutex<HashMap<String, Arc<Semaphore>>>,
}

impl ConcurrencyLimiter {
    pub fn new(per_instance: usize) -> ConcurrencyLimiter {
        ConcurrencyLimiter { per_instance, slots: Mutex::new(HashMap::new()) }
    }

    /// A slot for one call of `customer_id`, held until the permit is dropped; `None` when all
    /// of the instance's slots are taken.
    pub fn try_acquire(&self, customer_id: &str) -> Option<OwnedSemaphorePermit> {
        let semaphore = {
            let mut slots = self.slots.lock().expect("slots lock");
            slots.entry(customer_id.to_string()).or_insert_with(|| Arc::new(Semaphore::new(self.per_instance))).clone()
        };
        semaphore.try_acquire_owned().ok()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn slots_are_per_instance_and_come_back() {
        let limiter = ConcurrencyLimiter::new(2);
        let a1 = limiter.try_acquire("a").unwrap();
        let _a2 = limiter.try_acquire("a").unwrap();
        assert!(limiter.try_acquire("a").is_none());
        assert!(limiter.try_acquire("b").is_some(), "another instance is unaffected");
        drop(a1);
        assert!(limiter.try_acquire("a").is_some());
    }
}

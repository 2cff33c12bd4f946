//! The bound on what an instance may have waiting in the queue: the request bodies of its queued
//! and running jobs, at most `QueueSettings::max_backlog_bytes`. Every accepted call is stored
//! until it runs, so without a bound an open asynchronous endpoint called faster than its
//! extension runs would fill the control plane's disk.
//!
//! The stored total is read at most once a second per instance (a sum over the instance's waiting
//! jobs), and this node's acceptances since are added to it; other nodes' acceptances within that
//! second are not seen, so the bound can be passed by what the nodes accept in one second.

use std::collections::HashMap;
use std::sync::Mutex;
use std::time::{Duration, Instant};

use crate::store::{ControlDb, StoreResult};

/// How long a read total is trusted.
const FRESH_FOR: Duration = Duration::from_secs(1);

pub(super) struct Backlog {
    control: ControlDb,
    limit: u64,
    totals: Mutex<HashMap<String, (Instant, u64)>>,
}

impl Backlog {
    pub(super) fn new(control: ControlDb, limit: u64) -> Backlog {
        Backlog { control, limit, totals: Mutex::new(HashMap::new()) }
    }

    fn cached(&self, customer_id: &str) -> Option<u64> {
        let totals = self.totals.lock().expect("not poisoned");
        totals.get(customer_id).filter(|(read, _)| read.elapsed() < FRESH_FOR).map(|(_, bytes)| *bytes)
    }

    /// Whether `bytes` more may wait for `customer_id`; if so they are counted.
    pub(super) async fn admit(&self, customer_id: &str, bytes: u64) -> StoreResult<bool> {
        let cached = self.cached(customer_id);
        let total = match cached {
            Some(total) => total,
            None => self.control.pending_bytes(customer_id).await?,
        };
        if total.saturating_add(bytes) > self.limit {
            return Ok(false);
        }
        let mut totals = self.totals.lock().expect("not poisoned");
        match (cached, totals.get_mut(customer_id)) {
            (Some(_), Some(entry)) => entry.1 = entry.1.saturating_add(bytes),
            _ => {
                totals.insert(customer_id.to_string(), (Instant::now(), total.saturating_add(bytes)));
            }
        }
        // Instances that stopped calling are forgotten now and then.
        if totals.len() > 10_000 {
            totals.retain(|_, (read, _)| read.elapsed() < FRESH_FOR);
        }
        Ok(true)
    }
}

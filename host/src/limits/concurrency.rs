//! At most N calls in flight per instance. The call over the limit is refused at once (not
//! queued): a caller that floods its own instance gets 429s, its neighbours get nothing of it.
//!
//! Each node counts its own calls in memory (a semaphore per instance). With several nodes over
//! PostgreSQL ([`ConcurrencyLimiter::across_nodes`]) the limit is the instance's across all of
//! them: a call that passes its node's count also takes a slot in the control plane
//! (`store::calls_in_flight`, one statement), and gives it back when it ends (one statement, sent
//! after the answer, off the caller's path). A node that dies holding slots has them given back
//! by the others once it has been silent for `--node-timeout`.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};

use tokio::sync::{OwnedSemaphorePermit, Semaphore};

use crate::store::{ControlDb, StoreResult};

pub struct ConcurrencyLimiter {
    per_instance: usize,
    slots: Mutex<HashMap<String, Arc<Semaphore>>>,
    cluster: Option<Arc<Cluster>>,
}

/// The control plane's count, shared by the nodes.
struct Cluster {
    control: ControlDb,
    node: Arc<str>,
}

/// One call's place among its instance's calls in flight; given back when dropped.
pub struct CallSlot {
    _local: OwnedSemaphorePermit,
    shared: Option<(Arc<Cluster>, String)>,
}

impl Drop for CallSlot {
    fn drop(&mut self) {
        let Some((cluster, customer_id)) = self.shared.take() else { return };
        let Ok(runtime) = tokio::runtime::Handle::try_current() else { return };
        runtime.spawn(async move {
            if let Err(e) = cluster.control.give_back_call_slot(&customer_id, &cluster.node).await {
                // The slot stays taken until this node is seen silent or leaves.
                tracing::warn!(instance = %customer_id, error = %e, "a call's slot could not be given back");
            }
        });
    }
}

impl ConcurrencyLimiter {
    pub fn new(per_instance: usize) -> ConcurrencyLimiter {
        ConcurrencyLimiter { per_instance, slots: Mutex::new(HashMap::new()), cluster: None }
    }

    /// The same limit across every node of the control plane, this one being `node`.
    pub fn across_nodes(self, control: ControlDb, node: Arc<str>) -> ConcurrencyLimiter {
        ConcurrencyLimiter { cluster: Some(Arc::new(Cluster { control, node })), ..self }
    }

    /// A slot for one call of `customer_id`, held until dropped; `None` when all of the
    /// instance's slots are taken (on this node, or across nodes).
    pub async fn admit(&self, customer_id: &str) -> StoreResult<Option<CallSlot>> {
        let Some(local) = self.local(customer_id) else { return Ok(None) };
        let Some(cluster) = &self.cluster else { return Ok(Some(CallSlot { _local: local, shared: None })) };
        if !cluster.control.take_call_slot(customer_id, &cluster.node, self.per_instance as u32).await? {
            return Ok(None);
        }
        Ok(Some(CallSlot { _local: local, shared: Some((Arc::clone(cluster), customer_id.to_string())) }))
    }

    fn local(&self, customer_id: &str) -> Option<OwnedSemaphorePermit> {
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

    #[tokio::test]
    async fn slots_are_per_instance_and_come_back() {
        let limiter = ConcurrencyLimiter::new(2);
        let a1 = limiter.admit("a").await.unwrap().unwrap();
        let _a2 = limiter.admit("a").await.unwrap().unwrap();
        assert!(limiter.admit("a").await.unwrap().is_none());
        assert!(limiter.admit("b").await.unwrap().is_some(), "another instance is unaffected");
        drop(a1);
        assert!(limiter.admit("a").await.unwrap().is_some());
    }
}

/// Where the limit of calls in flight is counted on PostgreSQL.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, clap::ValueEnum)]
pub enum CallsInFlightScope {
    /// Across every node sharing the database (the specification's limit, per instance).
    #[default]
    Cluster,
    /// On each node alone: no database round trip per call, but N nodes admit 20 x N.
    Node,
}

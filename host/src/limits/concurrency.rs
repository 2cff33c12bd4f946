//! At most N calls in flight per instance. The call over the limit is refused at once (not
//! queued): a caller that floods its own instance gets 429s, its neighbours get nothing of it.
//!
//! Each node counts its own calls in memory (a semaphore per instance). With several nodes over
//! PostgreSQL ([`ConcurrencyLimiter::across_nodes`]) the limit is the instance's across all of
//! them: a call that passes its node's count also needs a slot of the control plane
//! (`store::calls_in_flight`, one statement). A slot a call gives back stays on its node, where
//! the node's next calls of the instance take it without a statement; every [`LINGER`] the node
//! gives back (one statement, off every caller's path) the slots that no call needed for the
//! whole period: under a steady load the slots stay where the calls are and cost nothing a call.
//! So that a slot lingering on one node does not turn away a call on another, a node refused by
//! the control plane asks again after the longest a slot can linger (22 ms), up to four times
//! (the other node's sweep can be late on a loaded machine), before it answers 429. A node that dies holding
//! slots has them given back by the others once it has been silent for `--node-timeout`.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use tokio::sync::{OwnedSemaphorePermit, Semaphore};

use crate::store::{ControlDb, StoreResult};

pub struct ConcurrencyLimiter {
    per_instance: usize,
    slots: Mutex<HashMap<String, Arc<Semaphore>>>,
    cluster: Option<Arc<Cluster>>,
}

/// How often a node gives back the control-plane slots that no call of this node needed for a
/// whole period (a slot a call gave back is kept for the node's next calls until then).
pub const LINGER: Duration = Duration::from_millis(10);

/// The longest a slot stays on a node unused: it must stay idle for a whole period of [`LINGER`].
const LONGEST_LINGER: Duration = Duration::from_millis(2 * 10 + 2);

/// How many times a node refused by the control plane asks again, [`LONGEST_LINGER`] apart,
/// before it answers 429: about 90 ms, paid only by a call over the limit.
const LINGER_ASKS: u32 = 4;

/// The control plane's count, shared by the nodes.
struct Cluster {
    control: ControlDb,
    node: Arc<str>,
    /// Per instance, the slots this node holds in the control plane that no call uses now.
    lingering: Mutex<HashMap<String, Idle>>,
}

/// A node's unused slots of one instance: how many now, and the fewest since the last sweep
/// (those were not needed for a whole period: they go back).
#[derive(Default)]
struct Idle {
    now: u32,
    fewest: u32,
}

impl Cluster {
    /// A lingering slot of `customer_id`, if this node has one.
    fn reuse(&self, customer_id: &str) -> bool {
        let mut lingering = self.lingering.lock().expect("lingering lock");
        match lingering.get_mut(customer_id) {
            Some(idle) if idle.now > 0 => {
                idle.now -= 1;
                idle.fewest = idle.fewest.min(idle.now);
                true
            }
            _ => false,
        }
    }

    /// A slot no call uses now: it stays for this node's next calls.
    fn release(&self, customer_id: String) {
        self.lingering.lock().expect("lingering lock").entry(customer_id).or_default().now += 1;
    }

    /// Every [`LINGER`], gives back the slots no call needed for the whole period (off every
    /// caller's path), until the limiter is gone.
    fn sweep_every_period(cluster: std::sync::Weak<Cluster>) {
        tokio::spawn(async move {
            let mut ticks = tokio::time::interval(LINGER);
            ticks.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
            loop {
                ticks.tick().await;
                let Some(cluster) = cluster.upgrade() else { return };
                let unneeded: Vec<(String, u32)> = {
                    let mut lingering = cluster.lingering.lock().expect("lingering lock");
                    let out = lingering
                        .iter_mut()
                        .filter_map(|(id, idle)| {
                            let give = idle.fewest;
                            idle.now -= give;
                            idle.fewest = idle.now;
                            (give > 0).then(|| (id.clone(), give))
                        })
                        .collect();
                    lingering.retain(|_, idle| idle.now > 0);
                    out
                };
                for (customer_id, count) in unneeded {
                    if let Err(e) = cluster.control.give_back_call_slots(&customer_id, &cluster.node, count).await {
                        // They stay taken until this node is seen silent or leaves.
                        tracing::warn!(instance = %customer_id, error = %e, "calls' slots could not be given back");
                    }
                }
            }
        });
    }
}

/// One call's place among its instance's calls in flight; given back when dropped.
pub struct CallSlot {
    _local: OwnedSemaphorePermit,
    shared: Option<(Arc<Cluster>, String)>,
}

impl CallSlot {
    /// A slot counted across nodes: given back to `cluster` when dropped.
    fn shared(local: OwnedSemaphorePermit, cluster: &Arc<Cluster>, customer_id: &str) -> CallSlot {
        CallSlot { _local: local, shared: Some((Arc::clone(cluster), customer_id.to_string())) }
    }
}

impl Drop for CallSlot {
    fn drop(&mut self) {
        if let Some((cluster, customer_id)) = self.shared.take() {
            cluster.release(customer_id);
        }
    }
}

impl ConcurrencyLimiter {
    pub fn new(per_instance: usize) -> ConcurrencyLimiter {
        ConcurrencyLimiter { per_instance, slots: Mutex::new(HashMap::new()), cluster: None }
    }

    /// The same limit across every node of the control plane, this one being `node`.
    /// Needs a Tokio runtime (the sweep of unused slots runs on it).
    pub fn across_nodes(self, control: ControlDb, node: Arc<str>) -> ConcurrencyLimiter {
        let cluster = Arc::new(Cluster { control, node, lingering: Mutex::new(HashMap::new()) });
        Cluster::sweep_every_period(Arc::downgrade(&cluster));
        ConcurrencyLimiter { cluster: Some(cluster), ..self }
    }

    /// A slot for one call of `customer_id`, held until dropped; `None` when all of the
    /// instance's slots are taken (on this node, or across nodes).
    pub async fn admit(&self, customer_id: &str) -> StoreResult<Option<CallSlot>> {
        let Some(local) = self.local(customer_id) else { return Ok(None) };
        let Some(cluster) = &self.cluster else { return Ok(Some(CallSlot { _local: local, shared: None })) };
        if cluster.reuse(customer_id) {
            return Ok(Some(CallSlot::shared(local, cluster, customer_id)));
        }
        // Boxed: see `crate::cold` (on PostgreSQL it is every call's path that reuses no slot,
        // and one allocation there is still less than the statement's future in every caller's).
        crate::cold::boxed(self.admit_across_nodes(local, cluster, customer_id)).await
    }

    /// `admit`'s slot across nodes, from the control plane: `local` is this node's.
    async fn admit_across_nodes(
        &self,
        local: OwnedSemaphorePermit,
        cluster: &Arc<Cluster>,
        customer_id: &str,
    ) -> StoreResult<Option<CallSlot>> {
        let slot = || Some(CallSlot::shared(local, cluster, customer_id));
        let limit = self.per_instance as u32;
        if cluster.control.take_call_slot(customer_id, &cluster.node, limit).await? {
            return Ok(slot());
        }
        // A slot may be lingering on another node: it is back in the control plane, or taken by
        // a call there, once the lingering time is over (or here, if this node's call ended).
        // That node's sweep runs off every caller's path and can be late on a loaded machine (a
        // 429 to a client within the limit once came of it in CI), so the node asks a few times.
        for _ in 0..LINGER_ASKS {
            tokio::time::sleep(LONGEST_LINGER).await;
            if cluster.reuse(customer_id) || cluster.control.take_call_slot(customer_id, &cluster.node, limit).await? {
                return Ok(slot());
            }
        }
        Ok(None)
    }

    fn local(&self, customer_id: &str) -> Option<OwnedSemaphorePermit> {
        let semaphore = {
            let mut slots = self.slots.lock().expect("slots lock");
            // Looked up first: `entry` would make the id's string at every call.
            match slots.get(customer_id) {
                Some(semaphore) => Arc::clone(semaphore),
                None => Arc::clone(slots.entry(customer_id.to_string()).or_insert_with(|| Arc::new(Semaphore::new(self.per_instance)))),
            }
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

    /// Every call awaits this: the control plane's statement is boxed (`crate::cold`), so the
    /// future every caller holds is a few words, not the statement's kilobytes.
    #[test]
    fn an_admission_is_a_small_future() {
        let limiter = ConcurrencyLimiter::new(2);
        let admission = limiter.admit("a");
        assert!(std::mem::size_of_val(&admission) <= 256, "{} bytes", std::mem::size_of_val(&admission));
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

//! At most N calls in flight per instance. The call over the limit is refused at once (not
//! queued): a caller that floods its own instance gets 429s, its neighbours get nothing of it.
//!
//! Each node counts its own calls in memory (an atomic count per instance, found once per open
//! instance: `InstanceCounts`). With several nodes over
//! PostgreSQL ([`ConcurrencyLimiter::across_nodes`]) the limit is the instance's across all of
//! them: a call that passes its node's count also needs a slot of the control plane
//! (`store::calls_in_flight`, one statement). A slot a call gives back stays on its node, where
//! the node's next calls of the instance take it without a statement, until no call of the node
//! needed it for a whole period: [`LONG_LINGER`] while the node hears the others' asks, else
//! [`LINGER`]. The sweep that gives slots back runs off every caller's path. So under a steady
//! load, and at a low rate too (a call every 20 ms, say), the slots stay where the calls are and
//! a call costs no statement: what a write a call cost the database shows in the tail of the
//! API's reads during an import (issue 38, BENCHMARKS.md).
//!
//! So that a slot lingering on one node does not turn away a call on another, a node refused by
//! the control plane asks the others for their unused slots of the instance (a notification, see
//! `store::calls_in_flight`); a node hearing it gives them back at once, and for [`WANTED_FOR`]
//! gives back each slot of the instance as soon as its call ends. The refused node asks the
//! control plane again a few times within about 100 ms (a node not hearing asks gives its slots
//! back after 22 ms at most; a loaded machine's sweep can be late) before it answers 429. A node
//! that dies holding slots has them given back by the others once it has been silent for
//! `--node-timeout`.

use std::collections::HashMap;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, Weak};
use std::time::{Duration, Instant};

use tokio::sync::Notify;

use super::InstanceCounts;

use crate::store::calls_in_flight::{Heard, SlotAsks};
use crate::store::{Backend, ControlDb, StoreResult};

pub struct ConcurrencyLimiter {
    per_instance: usize,
    /// Each instance's count, made at its first call and kept for the process's life (about
    /// 300 bytes an instance that ever called, with its key).
    slots: Mutex<HashMap<String, Arc<InFlight>>>,
    cluster: Option<Arc<Cluster>>,
}

/// One instance's calls in flight on this node. A call over the limit is refused, never queued,
/// so a count is all it takes: a compare-and-swap to take a slot, a subtraction to give it back
/// (a semaphore also locks its list of waiters at every release). Aligned to a cache line
/// of its own: the calls of one instance write it from every core, and only they do.
#[derive(Default)]
#[repr(align(128))]
pub(super) struct InFlight(AtomicUsize);

/// A slot of this node's count, given back when dropped.
struct LocalSlot<'a>(&'a InFlight);

impl Drop for LocalSlot<'_> {
    fn drop(&mut self) {
        self.0 .0.fetch_sub(1, Ordering::Release);
    }
}

/// How often a node looks for control-plane slots to give back, and the period a slot may stay
/// unused on a node that does not hear the others' asks.
pub const LINGER: Duration = Duration::from_millis(10);

/// The period a slot may stay unused on a node that hears the others' asks: one who needs it
/// asks, so it may stay long enough for calls a second apart to reuse it.
pub const LONG_LINGER: Duration = Duration::from_secs(1);

/// How long after an ask a node gives back each slot of the instance as its call ends.
pub const WANTED_FOR: Duration = Duration::from_secs(1);

/// When a node refused by the control plane asks it again, each after the one before: about
/// 100 ms in all, paid only by a call over the limit. A node hearing the ask gives its unused
/// slots back within a statement; one that does not, within 22 ms (two periods of [`LINGER`]).
const ASK_AGAIN_AFTER: [Duration; 6] = [
    Duration::from_millis(5),
    Duration::from_millis(10),
    Duration::from_millis(20),
    Duration::from_millis(22),
    Duration::from_millis(22),
    Duration::from_millis(22),
];

/// A node asks the others for an instance's slots at most this often (a flood over the limit
/// would otherwise send a notification a refused call).
const ASK_EVERY: Duration = Duration::from_millis(10);

/// How long a node waits before listening again when its connection for asks failed.
const LISTEN_AGAIN_AFTER: Duration = Duration::from_secs(1);

/// The control plane's count, shared by the nodes.
struct Cluster {
    control: ControlDb,
    node: Arc<str>,
    /// Per instance, the slots this node holds in the control plane that no call uses now.
    lingering: Mutex<HashMap<String, Idle>>,
    /// Whether this node hears the others' asks now (its slots may linger for [`LONG_LINGER`]).
    hearing: AtomicBool,
    /// Wakes the sweep when another node asked (shared with the sweep, which waits on it without
    /// holding the limiter).
    asked: Arc<Notify>,
    /// When this node last asked the others, per instance (see [`ASK_EVERY`]).
    last_asked: Mutex<HashMap<String, Instant>>,
    /// The task hearing asks, stopped with the limiter.
    listener: Mutex<Option<tokio::task::AbortHandle>>,
}

/// A node's unused slots of one instance: how many now, the fewest since the sweep's period
/// began (those were not needed for a whole period: they go back), and until when another node
/// wants them.
#[derive(Default)]
struct Idle {
    now: u32,
    fewest: u32,
    wanted_until: Option<Instant>,
}

impl Idle {
    fn wanted(&self, now: Instant) -> bool {
        self.wanted_until.is_some_and(|until| until > now)
    }
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

    /// A slot no call uses now: it stays for this node's next calls (unless another node wants
    /// it: the sweep is woken to give it back).
    fn release(&self, customer_id: String) {
        let wanted = {
            let mut lingering = self.lingering.lock().expect("lingering lock");
            let idle = lingering.entry(customer_id).or_default();
            idle.now += 1;
            // The clock is read only while another node wants this instance's slots.
            idle.wanted_until.is_some() && idle.wanted(Instant::now())
        };
        if wanted {
            self.asked.notify_one();
        }
    }

    /// Another node was refused a slot of `customer_id` (`None`: of any instance, when asks may
    /// have been missed): this node's unused ones go back at once, and the next ones as they come.
    fn heard(&self, customer_id: Option<&str>) {
        let until = Some(Instant::now() + WANTED_FOR);
        {
            let mut lingering = self.lingering.lock().expect("lingering lock");
            match customer_id {
                Some(id) => lingering.entry(id.to_string()).or_default().wanted_until = until,
                None => lingering.values_mut().for_each(|idle| idle.wanted_until = until),
            }
        }
        self.asked.notify_one();
    }

    /// Asks the other nodes for their unused slots of `customer_id`, unless this node just did.
    async fn ask_others(&self, customer_id: &str) -> StoreResult<()> {
        {
            let mut last = self.last_asked.lock().expect("asks lock");
            let now = Instant::now();
            if last.get(customer_id).is_some_and(|at| now.duration_since(*at) < ASK_EVERY) {
                return Ok(());
            }
            last.insert(customer_id.to_string(), now);
            last.retain(|_, at| now.duration_since(*at) < ASK_EVERY);
        }
        self.control.ask_for_call_slots(customer_id).await
    }

    /// The slots to give back now, taken off the lingering counts: every unused slot another
    /// node wants, and, when the period is over, those no call needed for the whole of it.
    fn unneeded(&self, period_over: bool) -> Vec<(String, u32)> {
        let now = Instant::now();
        let mut lingering = self.lingering.lock().expect("lingering lock");
        let out = lingering
            .iter_mut()
            .filter_map(|(id, idle)| {
                let give = if idle.wanted(now) {
                    idle.now
                } else if period_over {
                    idle.fewest
                } else {
                    0
                };
                idle.now -= give;
                idle.fewest = if period_over { idle.now } else { idle.fewest.min(idle.now) };
                (give > 0).then(|| (id.clone(), give))
            })
            .collect();
        lingering.retain(|_, idle| idle.now > 0 || idle.wanted(now));
        out
    }

    /// Every [`LINGER`], or at once when asked, gives back the slots [`Cluster::unneeded`] finds
    /// (off every caller's path), until the limiter is gone.
    fn sweep_every_period(cluster: Weak<Cluster>, asked: Arc<Notify>) {
        tokio::spawn(async move {
            let mut ticks = tokio::time::interval(LINGER);
            ticks.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
            let mut period_ends = Instant::now();
            loop {
                tokio::select! {
                    _ = ticks.tick() => {}
                    _ = asked.notified() => {}
                }
                let Some(cluster) = cluster.upgrade() else { return };
                let now = Instant::now();
                let period_over = !cluster.hearing.load(Ordering::Relaxed) || now >= period_ends;
                if period_over {
                    period_ends = now + LONG_LINGER;
                }
                for (customer_id, count) in cluster.unneeded(period_over) {
                    if let Err(e) = cluster.control.give_back_call_slots(&customer_id, &cluster.node, count).await {
                        // They stay taken until this node is seen silent or leaves.
                        tracing::warn!(instance = %customer_id, error = %e, "calls' slots could not be given back");
                    }
                }
            }
        });
    }

    /// Hears the other nodes' asks on a connection of its own to `url`, listening again when it
    /// is lost, until the limiter is gone.
    fn hear_asks(cluster: &Arc<Cluster>, url: String) {
        let weak = Arc::downgrade(cluster);
        let task = tokio::spawn(async move {
            loop {
                match SlotAsks::listen(&url).await {
                    Ok(mut asks) => {
                        let Some(cluster) = weak.upgrade() else { return };
                        cluster.hearing.store(true, Ordering::Relaxed);
                        drop(cluster);
                        loop {
                            let heard = asks.next().await;
                            let Some(cluster) = weak.upgrade() else { return };
                            match heard {
                                Ok(Heard::Asked(customer_id)) => cluster.heard(Some(&customer_id)),
                                Ok(Heard::MayHaveMissed) => cluster.heard(None),
                                Err(e) => {
                                    // Not hearing, this node's slots go back after 10 ms again.
                                    cluster.hearing.store(false, Ordering::Relaxed);
                                    cluster.heard(None);
                                    tracing::warn!(error = %e, "the connection hearing asks for calls' slots was lost");
                                    break;
                                }
                            }
                        }
                    }
                    Err(e) => tracing::warn!(error = %e, "could not listen for asks for calls' slots"),
                }
                tokio::time::sleep(LISTEN_AGAIN_AFTER).await;
            }
        });
        *cluster.listener.lock().expect("listener lock") = Some(task.abort_handle());
    }
}

impl Drop for Cluster {
    fn drop(&mut self) {
        if let Some(task) = self.listener.lock().expect("listener lock").take() {
            task.abort();
        }
    }
}

/// One call's place among its instance's calls in flight; given back when dropped.
pub struct CallSlot<'a> {
    shared: Option<(Arc<Cluster>, String)>,
    // Given back after the shared one (fields drop in order): a call admitted meanwhile finds
    // this node's count full rather than a control-plane slot it cannot take yet.
    _local: LocalSlot<'a>,
}

impl<'a> CallSlot<'a> {
    /// A slot counted across nodes: given back to `cluster` when dropped.
    fn shared(local: LocalSlot<'a>, cluster: &Arc<Cluster>, customer_id: &str) -> CallSlot<'a> {
        CallSlot { _local: local, shared: Some((Arc::clone(cluster), customer_id.to_string())) }
    }
}

impl Drop for CallSlot<'_> {
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
    /// Needs a Tokio runtime (the sweep of unused slots, and the task hearing asks, run on it).
    pub fn across_nodes(self, control: ControlDb, node: Arc<str>) -> ConcurrencyLimiter {
        let listen_on = match control.backend() {
            Backend::Postgres { url, pool } if pool.slot_ask_connections() > 0 => Some(url.clone()),
            _ => None,
        };
        let cluster = Arc::new(Cluster {
            control,
            node,
            lingering: Mutex::new(HashMap::new()),
            hearing: AtomicBool::new(false),
            asked: Arc::new(Notify::new()),
            last_asked: Mutex::new(HashMap::new()),
            listener: Mutex::new(None),
        });
        Cluster::sweep_every_period(Arc::downgrade(&cluster), Arc::clone(&cluster.asked));
        if let Some(url) = listen_on {
            Cluster::hear_asks(&cluster, url);
        }
        ConcurrencyLimiter { cluster: Some(cluster), ..self }
    }

    /// A slot for one call of `customer_id`, held until dropped; `None` when all of the
    /// instance's slots are taken (on this node, or across nodes). `counts` are the open
    /// instance's own (`Tenant::counts`), made with this limiter.
    pub async fn admit<'a>(&self, customer_id: &str, counts: &'a InstanceCounts) -> StoreResult<Option<CallSlot<'a>>> {
        let in_flight = counts.in_flight.get_or_init(|| super::count_of(&self.slots, customer_id));
        let Some(local) = self.local(in_flight) else { return Ok(None) };
        let Some(cluster) = &self.cluster else { return Ok(Some(CallSlot { _local: local, shared: None })) };
        if cluster.reuse(customer_id) {
            return Ok(Some(CallSlot::shared(local, cluster, customer_id)));
        }
        // Boxed: see `crate::cold` (on PostgreSQL it is every call's path that reuses no slot,
        // and one allocation there is still less than the statement's future in every caller's).
        crate::cold::boxed(self.admit_across_nodes(local, cluster, customer_id)).await
    }

    /// `admit`'s slot across nodes, from the control plane: `local` is this node's.
    async fn admit_across_nodes<'a>(
        &self,
        local: LocalSlot<'a>,
        cluster: &Arc<Cluster>,
        customer_id: &str,
    ) -> StoreResult<Option<CallSlot<'a>>> {
        let slot = || Some(CallSlot::shared(local, cluster, customer_id));
        let limit = self.per_instance as u32;
        if cluster.control.take_call_slot(customer_id, &cluster.node, limit).await? {
            return Ok(slot());
        }
        // A slot may be lingering on another node: asked, it gives it back (or its call there
        // takes it; or this node's own call ends). That node's sweep runs off every caller's path
        // and can be late on a loaded machine (a 429 to a client within the limit once came of
        // it in CI), so this node asks the control plane a few times.
        for wait in ASK_AGAIN_AFTER {
            cluster.ask_others(customer_id).await?;
            tokio::time::sleep(wait).await;
            if cluster.reuse(customer_id) || cluster.control.take_call_slot(customer_id, &cluster.node, limit).await? {
                return Ok(slot());
            }
        }
        Ok(None)
    }

    /// A slot of this node's count, unless all are taken.
    fn local<'a>(&self, in_flight: &'a InFlight) -> Option<LocalSlot<'a>> {
        // Checked before it is taken (not added, then taken back when one too many): a refused
        // call never shows in the count, where another call could find it full. Acquire: a call
        // admitted in a slot another gave back sees what that call did.
        let limit = self.per_instance;
        let taken = in_flight.0.fetch_update(Ordering::Acquire, Ordering::Relaxed, |n| (n < limit).then_some(n + 1));
        // `then`, not `then_some`: a slot made and dropped would give back one it never took.
        taken.is_ok().then(|| LocalSlot(in_flight))
    }
}

#[cfg(test)]
mod tests {
    use futures_util::FutureExt;

    use super::*;

    #[tokio::test]
    async fn slots_are_per_instance_and_come_back() {
        let limiter = ConcurrencyLimiter::new(2);
        let (a, b) = (InstanceCounts::default(), InstanceCounts::default());
        let a1 = limiter.admit("a", &a).await.unwrap().unwrap();
        let _a2 = limiter.admit("a", &a).await.unwrap().unwrap();
        assert!(limiter.admit("a", &a).await.unwrap().is_none());
        assert!(limiter.admit("a", &a).await.unwrap().is_none(), "a refusal takes no slot");
        assert!(limiter.admit("b", &b).await.unwrap().is_some(), "another instance is unaffected");
        drop(a1);
        assert!(limiter.admit("a", &a).await.unwrap().is_some());
    }

    /// An instance put to sleep and opened again (new counts handles) while its calls are in
    /// flight: the limit still holds across both.
    #[tokio::test]
    async fn an_instance_opened_again_shares_its_count() {
        let limiter = ConcurrencyLimiter::new(2);
        let (before, after) = (InstanceCounts::default(), InstanceCounts::default());
        let _one = limiter.admit("a", &before).await.unwrap().unwrap();
        let two = limiter.admit("a", &after).await.unwrap().unwrap();
        assert!(limiter.admit("a", &after).await.unwrap().is_none());
        drop(two);
        assert!(limiter.admit("a", &before).await.unwrap().is_some());
    }

    /// Slots taken and given back from many threads at once never admit more than the limit.
    #[test]
    fn the_limit_holds_across_threads() {
        let limiter = ConcurrencyLimiter::new(3);
        let counts = InstanceCounts::default();
        let most = AtomicUsize::new(0);
        let now = AtomicUsize::new(0);
        std::thread::scope(|scope| {
            for _ in 0..4 {
                scope.spawn(|| {
                    let runtime = tokio::runtime::Builder::new_current_thread().build().unwrap();
                    for _ in 0..2000 {
                        if let Some(slot) = runtime.block_on(limiter.admit("a", &counts)).unwrap() {
                            let held = now.fetch_add(1, Ordering::SeqCst) + 1;
                            most.fetch_max(held, Ordering::SeqCst);
                            now.fetch_sub(1, Ordering::SeqCst);
                            drop(slot);
                        }
                    }
                });
            }
        });
        assert!(most.load(Ordering::SeqCst) <= 3, "{} calls at once", most.load(Ordering::SeqCst));
        assert!(limiter.admit("a", &counts).now_or_never().unwrap().unwrap().is_some(), "every slot came back");
    }

    /// Every call awaits this: the control plane's statement is boxed (`crate::cold`), so the
    /// future every caller holds is a few words, not the statement's kilobytes.
    #[test]
    fn an_admission_is_a_small_future() {
        let limiter = ConcurrencyLimiter::new(2);
        let counts = InstanceCounts::default();
        let admission = limiter.admit("a", &counts);
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

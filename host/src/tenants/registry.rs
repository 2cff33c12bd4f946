//! The registry of a server's instances. Every instance is known (its id and revision); its store
//! is open only while it works:
//!
//! - **Activation** ([`Tenants::activate`]): the first use of a sleeping instance reads its
//!   record from the control plane, validates its model, opens its store and checks that the
//!   store is there (an SQLite file that is a database, a PostgreSQL schema that exists). Two
//!   uses arriving at once open it once (a gate per stripe of ids).
//! - **Lookup**: the open instances are also published as a map that a call reads without a lock
//!   (`arc_swap`), made anew under the registry's lock whenever an instance opens or closes. A
//!   call marks its instance used with a flag; each sweep (every poll, and after each
//!   activation) turns the flags it finds set into the sweep's time. So an instance's last use is
//!   known to within a sweep, and no call takes a lock both cores take or reads the clock.
//! - **Sleep**: an open instance that nothing uses (the registry holds the only references) is
//!   closed when idle past `idle_after` (as of the last sweep that saw it used), or, least
//!   recently used first, when more than `max_open` are open. Closing drops the store: its
//!   pools, and with them sqlx's connection threads and descriptors, the writer task of its
//!   group commit, its caches.
//! - **Faults**: an instance whose store cannot be opened answers 503 for a short while (then
//!   the next use tries again), logged once per attempt; other instances are not affected.
//! - **Changes**: the control plane's changes are read every poll (`ControlDb::changed_since`: the
//!   instances updated lately; all of them every [`FULL_LOOK_EVERY`] polls, in case a clock
//!   lagged); a changed instance is put to sleep, and opens again with its new model on its next
//!   use (users of the old one finish with it). Subscribers (the schedulers) hear of changed ids.

use std::collections::{BTreeSet, HashMap, HashSet};
use std::hash::{Hash, Hasher};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use arc_swap::ArcSwap;
use tokio::sync::mpsc;

use super::{OpenInstances, Tenant};
use crate::model::Model;
use crate::store::ControlDb;

/// Why an instance could not be activated.
#[derive(Debug, Clone)]
pub enum Activation {
    /// No such instance (or not yet seen by this node: the next poll finds an applied one).
    Missing,
    /// Its store could not be opened; the reason is for the log, not for callers.
    Unavailable(Arc<str>),
}

/// How long an instance whose store could not be opened is answered 503 before the next try.
const RETRY_BROKEN: Duration = Duration::from_secs(2);

/// Every this many polls, the look at changes reads every instance's revision.
pub const FULL_LOOK_EVERY: u64 = 150;

/// A change whose time is older than the newest seen by less than this is still read (clocks of
/// the machines that apply definitions may lag each other a little).
const CLOCK_SLACK_MS: i64 = 60_000;

/// Gates of activation: uses of one instance meet at the same one.
const GATES: usize = 64;

struct Entry {
    revision: i64,
    state: State,
}

enum State {
    Asleep,
    Open { tenant: Arc<Tenant>, used: Instant },
    Broken { revision: i64, reason: Arc<str>, until: Instant },
}

#[derive(Default)]
struct Inner {
    entries: HashMap<Arc<str>, Entry>,
    open: HashSet<Arc<str>>,
}

/// The open instances by id, as calls read them. Looked up at every call: hashed with foldhash
/// (seeded per process), not SipHash.
type Published = HashMap<Arc<str>, Arc<Tenant>, foldhash::fast::RandomState>;

/// References to an open instance that the registry holds itself: its entry's and the published
/// map's. An instance with no more is used by nothing.
const HELD_BY_REGISTRY: usize = 2;

/// Counts for the operator's metrics.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct TenantsStats {
    pub known: usize,
    pub open: usize,
    pub activations: u64,
    pub evictions: u64,
    pub failed_activations: u64,
}

pub struct Tenants {
    control: ControlDb,
    settings: OpenInstances,
    inner: Mutex<Inner>,
    /// The open instances, for `lookup`; written only under `inner`'s lock (`publish`).
    published: ArcSwap<Published>,
    gates: Vec<tokio::sync::Mutex<()>>,
    /// The newest `updated_at` seen, and the polls made.
    cursor: Mutex<(i64, u64)>,
    subscribers: Mutex<Vec<mpsc::UnboundedSender<String>>>,
    activations: AtomicU64,
    evictions: AtomicU64,
    failed: AtomicU64,
}

impl Tenants {
    /// Knows every instance of the control plane; opens none.
    pub async fn load(control: ControlDb, settings: OpenInstances) -> anyhow::Result<Arc<Tenants>> {
        let tenants = Arc::new(Tenants {
            control,
            settings,
            inner: Mutex::default(),
            published: ArcSwap::default(),
            gates: (0..GATES).map(|_| tokio::sync::Mutex::new(())).collect(),
            cursor: Mutex::new((0, 0)),
            subscribers: Mutex::default(),
            activations: AtomicU64::new(0),
            evictions: AtomicU64::new(0),
            failed: AtomicU64::new(0),
        });
        tenants.refresh().await?;
        Ok(tenants)
    }

    fn inner(&self) -> std::sync::MutexGuard<'_, Inner> {
        self.inner.lock().expect("tenant registry lock")
    }

    /// Whether instance `customer_id` exists (without opening it).
    pub fn exists(&self, customer_id: &str) -> bool {
        self.inner().entries.contains_key(customer_id)
    }

    /// Every instance's id, sorted.
    pub fn customer_ids(&self) -> Vec<String> {
        let mut ids: Vec<String> = self.inner().entries.keys().map(|k| k.to_string()).collect();
        ids.sort();
        ids
    }

    /// The instances open now.
    pub fn open_tenants(&self) -> Vec<Arc<Tenant>> {
        self.published.load().values().cloned().collect()
    }

    pub fn stats(&self) -> TenantsStats {
        let inner = self.inner();
        TenantsStats {
            known: inner.entries.len(),
            open: inner.open.len(),
            activations: self.activations.load(Ordering::Relaxed),
            evictions: self.evictions.load(Ordering::Relaxed),
            failed_activations: self.failed.load(Ordering::Relaxed),
        }
    }

    /// A scheduler's list of instances to look at: from now on, those that change (new ones,
    /// new revisions, and those [`Tenants::touch`]ed), with those it adds itself.
    pub fn lookout(&self) -> Lookout {
        let (tx, changed) = mpsc::unbounded_channel();
        self.subscribers.lock().expect("subscribers lock").push(tx);
        Lookout { changed, ids: BTreeSet::new() }
    }

    /// Tells the subscribers that instance `customer_id`'s schedules may have changed (a flow or
    /// a monitor saved through this node).
    pub fn touch(&self, customer_id: &str) {
        self.subscribers.lock().expect("subscribers lock").retain(|s| s.send(customer_id.to_string()).is_ok());
    }

    /// Instance `customer_id`, opened if it sleeps.
    pub async fn activate(&self, customer_id: &str) -> Result<Arc<Tenant>, Activation> {
        if let Some(open) = self.lookup(customer_id)? {
            return Ok(open);
        }
        // Boxed: see `crate::cold`.
        crate::cold::boxed(self.activate_sleeping(customer_id)).await
    }

    /// `activate` of an instance that is not open: opened under its gate.
    async fn activate_sleeping(&self, customer_id: &str) -> Result<Arc<Tenant>, Activation> {
        let gate = &self.gates[stripe(customer_id)];
        let _held = gate.lock().await;
        // Opened by the use that held the gate before this one?
        if let Some(open) = self.lookup(customer_id)? {
            return Ok(open);
        }
        let started = Instant::now();
        let opened = self.open(customer_id).await;
        let now = Instant::now();
        let result = {
            let mut guard = self.inner();
            let inner = &mut *guard;
            let Some(key) = inner.entries.get_key_value(customer_id).map(|(k, _)| Arc::clone(k)) else {
                return Err(Activation::Missing);
            };
            let entry = inner.entries.get_mut(&key).expect("found under the same lock");
            match opened {
                Ok(tenant) => {
                    let tenant = Arc::new(tenant);
                    // A change seen by the refresher while this one opened: this use gets what was
                    // read, and the next opens the new definition.
                    if tenant.revision >= entry.revision {
                        entry.state = State::Open { tenant: Arc::clone(&tenant), used: now };
                        inner.open.insert(key);
                        self.publish(inner);
                    }
                    self.activations.fetch_add(1, Ordering::Relaxed);
                    tracing::debug!(customer_id, micros = started.elapsed().as_micros() as u64, "instance opened");
                    Ok(tenant)
                }
                Err(e) => {
                    let reason: Arc<str> = Arc::from(format!("{e:#}"));
                    entry.state = State::Broken { revision: entry.revision, reason: Arc::clone(&reason), until: now + RETRY_BROKEN };
                    self.failed.fetch_add(1, Ordering::Relaxed);
                    tracing::error!(customer_id, error = %reason, "instance could not be opened; it answers 503 until it can");
                    Err(Activation::Unavailable(reason))
                }
            }
        };
        self.put_to_sleep(now);
        result
    }

    /// The open instance, or `None` when it must be opened.
    fn lookup(&self, customer_id: &str) -> Result<Option<Arc<Tenant>>, Activation> {
        if let Some(tenant) = self.published.load().get(customer_id) {
            return Ok(Some(used(tenant)));
        }
        let inner = self.inner();
        let entry = inner.entries.get(customer_id).ok_or(Activation::Missing)?;
        match &entry.state {
            // Opened since the published map was read.
            State::Open { tenant, .. } => Ok(Some(used(tenant))),
            State::Broken { revision, reason, until } if *revision == entry.revision && Instant::now() < *until => {
                Err(Activation::Unavailable(Arc::clone(reason)))
            }
            _ => Ok(None),
        }
    }

    /// Publishes `inner`'s open instances for `lookup`. Called under `inner`'s lock, so that two
    /// changes publish in the order they were made.
    fn publish(&self, inner: &Inner) {
        let open: Published = inner
            .open
            .iter()
            .filter_map(|id| match &inner.entries.get(id)?.state {
                State::Open { tenant, .. } => Some((Arc::clone(id), Arc::clone(tenant))),
                _ => None,
            })
            .collect();
        self.published.store(Arc::new(open));
    }

    async fn open(&self, customer_id: &str) -> anyhow::Result<Tenant> {
        let record = self.control.instance(customer_id).await?.ok_or_else(|| anyhow::anyhow!("the instance is gone"))?;
        let model = Model::new(record.model).map_err(anyhow::Error::msg)?;
        let db = self.control.open_tenant(customer_id).await?;
        db.check().await?;
        Ok(Tenant::new(record.settings, model, db, record.revision))
    }

    /// Puts to sleep the open instances that nothing uses and that were idle past the setting,
    /// then, least recently used first, as many more as are over the cap.
    pub fn put_to_sleep(&self, now: Instant) {
        let closing = {
            let mut guard = self.inner();
            let inner = &mut *guard;
            let over = inner.open.len().saturating_sub(self.settings.max_open);
            let mut unused: Vec<(Instant, Arc<str>)> = Vec::new();
            for id in &inner.open {
                let Some(Entry { state: State::Open { tenant, used }, .. }) = inner.entries.get_mut(id) else { continue };
                if tenant.used_lately.swap(false, Ordering::Relaxed) {
                    *used = now.max(*used);
                }
                if Arc::strong_count(tenant) == HELD_BY_REGISTRY {
                    unused.push((*used, Arc::clone(id)));
                }
            }
            unused.sort();
            let mut closing = Vec::new();
            for (i, (used, id)) in unused.into_iter().enumerate() {
                if i >= over && now.saturating_duration_since(used) < self.settings.idle_after {
                    break;
                }
                inner.open.remove(&id);
                if let Some(entry) = inner.entries.get_mut(&id) {
                    if let State::Open { tenant, .. } = std::mem::replace(&mut entry.state, State::Asleep) {
                        closing.push(tenant);
                    }
                }
            }
            if !closing.is_empty() {
                self.publish(inner);
            }
            closing
        };
        if closing.is_empty() {
            return;
        }
        self.evictions.fetch_add(closing.len() as u64, Ordering::Relaxed);
        // Dropped outside the lock: the pools close as their last handle goes.
        drop(closing);
    }

    /// Reads what changed in the control plane since the last look.
    pub async fn refresh(&self) -> anyhow::Result<()> {
        let (since, polls) = *self.cursor.lock().expect("cursor lock");
        let changes = if polls % FULL_LOOK_EVERY == 0 {
            self.control.revisions().await?
        } else {
            self.control.changed_since(since - CLOCK_SLACK_MS).await?
        };
        let mut newest = since;
        let mut changed = Vec::new();
        {
            let mut guard = self.inner();
            let inner = &mut *guard;
            let mut closed = false;
            for (id, revision, updated_at) in changes {
                newest = newest.max(updated_at);
                match inner.entries.get_mut(id.as_str()) {
                    Some(entry) if entry.revision == revision => {}
                    Some(entry) => {
                        entry.revision = revision;
                        if matches!(entry.state, State::Open { .. }) {
                            entry.state = State::Asleep;
                            inner.open.remove(id.as_str());
                            closed = true;
                        }
                        changed.push(id);
                    }
                    None => {
                        inner.entries.insert(Arc::from(id.as_str()), Entry { revision, state: State::Asleep });
                        changed.push(id);
                    }
                }
            }
            if closed {
                self.publish(inner);
            }
        }
        *self.cursor.lock().expect("cursor lock") = (newest, polls + 1);
        if polls > 0 {
            for id in &changed {
                tracing::info!(customer_id = %id, "instance changed; it opens with its new definition on its next use");
                self.touch(id);
            }
        }
        Ok(())
    }

    /// Polls the control plane for changed instances, and puts idle ones to sleep.
    pub fn spawn_refresher(self: &Arc<Self>, every: Duration) -> tokio::task::JoinHandle<()> {
        let tenants = Arc::clone(self);
        tokio::spawn(async move {
            let mut tick = tokio::time::interval(every);
            tick.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
            loop {
                tick.tick().await;
                if let Err(e) = tenants.refresh().await {
                    tracing::warn!(error = %e, "instance refresh failed");
                }
                tenants.put_to_sleep(Instant::now());
                tenants.shed_idle_readers();
            }
        })
    }

    /// Closes the open instances' point readers that went unused for a while.
    fn shed_idle_readers(&self) {
        for tenant in self.open_tenants() {
            tenant.db.shed_idle_readers();
        }
    }
}

/// The instances a scheduler looks at next ([`Tenants::lookout`]).
pub struct Lookout {
    changed: mpsc::UnboundedReceiver<String>,
    ids: BTreeSet<String>,
}

impl Lookout {
    /// Adds instances to look at (those with something due).
    pub fn add(&mut self, ids: impl IntoIterator<Item = String>) {
        self.ids.extend(ids);
    }

    /// The instances to look at now: those that changed since the last time, and those added.
    pub fn take(&mut self) -> BTreeSet<String> {
        while let Ok(id) = self.changed.try_recv() {
            self.ids.insert(id);
        }
        std::mem::take(&mut self.ids)
    }
}

/// `tenant`, marked used for the next sweep. The flag is written once a sweep, not at every call:
/// its line stays shared between the cores.
fn used(tenant: &Arc<Tenant>) -> Arc<Tenant> {
    if !tenant.used_lately.load(Ordering::Relaxed) {
        tenant.used_lately.store(true, Ordering::Relaxed);
    }
    Arc::clone(tenant)
}

fn stripe(customer_id: &str) -> usize {
    let mut hasher = std::collections::hash_map::DefaultHasher::new();
    customer_id.hash(&mut hasher);
    (hasher.finish() as usize) % GATES
}

#[cfg(test)]
mod tests {
    use std::sync::Arc;
    use std::time::{Duration, Instant};

    use super::{OpenInstances, Tenants};
    use crate::store::{Backend, ControlDb};

    /// The demo's two instances ("demo", "demo-staging") in a registry of these settings.
    async fn registry(max_open: usize, idle_after: Duration) -> (tempfile::TempDir, Arc<Tenants>) {
        let dir = tempfile::tempdir().unwrap();
        let control = ControlDb::open(&Backend::Sqlite { data_dir: dir.path().into() }).await.unwrap();
        assert!(super::super::demo::ensure(&control).await.unwrap());
        let tenants = Tenants::load(control, OpenInstances { max_open, idle_after }).await.unwrap();
        (dir, tenants)
    }

    #[tokio::test]
    async fn a_use_since_the_last_sweep_keeps_an_instance_open_and_none_lets_it_sleep() {
        let minute = Duration::from_secs(60);
        let (_dir, tenants) = registry(10, minute).await;
        let opened = tenants.activate("demo").await.unwrap();
        let found = tenants.activate("demo").await.unwrap();
        assert!(Arc::ptr_eq(&opened, &found), "an open instance is found, not opened again");
        drop((opened, found));
        assert_eq!(tenants.stats().activations, 1);

        // Used (the second call) since the last sweep: kept, with the sweep's time as its last use.
        let later = Instant::now() + 2 * minute;
        tenants.put_to_sleep(later);
        assert_eq!(tenants.stats().open, 1, "used since the last sweep");
        // Not used since: idle from that sweep on.
        tenants.put_to_sleep(later + minute / 2);
        assert_eq!(tenants.stats().open, 1, "idle for less than the setting");
        tenants.put_to_sleep(later + minute);
        assert_eq!((tenants.stats().open, tenants.stats().evictions), (0, 1), "idle for the setting");
        assert!(tenants.open_tenants().is_empty(), "no longer published");

        let reopened = tenants.activate("demo").await.unwrap();
        assert_eq!(tenants.stats().activations, 2, "opened again on its next use");
        // In use: never closed under its user, however idle.
        tenants.put_to_sleep(later + 10 * minute);
        tenants.put_to_sleep(later + 20 * minute);
        assert_eq!(tenants.stats().open, 1);
        assert!(Arc::ptr_eq(&reopened, &tenants.activate("demo").await.unwrap()));
    }

    #[tokio::test]
    async fn over_the_cap_the_instance_not_used_since_the_last_sweep_sleeps_first() {
        let (_dir, tenants) = registry(1, Duration::from_secs(3600)).await;
        let open_ids = || tenants.open_tenants().iter().map(|t| t.customer_id().to_string()).collect::<Vec<_>>();
        // Both open at once (over the cap of 1, as both are in use), "demo" opened first.
        let demo = tenants.activate("demo").await.unwrap();
        let staging = tenants.activate("demo-staging").await.unwrap();
        assert_eq!(tenants.stats().open, 2, "instances in use are never closed under their users");
        drop((demo, staging));
        // "demo" used since: the sweep makes it the more recent, and the cap puts the other to sleep.
        drop(tenants.activate("demo").await.unwrap());
        tenants.put_to_sleep(Instant::now() + Duration::from_secs(1));
        assert_eq!(open_ids(), ["demo"]);
        assert_eq!(tenants.stats().evictions, 1);
        // Opening the other over the cap puts "demo", unused, to sleep.
        drop(tenants.activate("demo-staging").await.unwrap());
        assert_eq!(open_ids(), ["demo-staging"]);
    }

    #[tokio::test]
    async fn an_unknown_instance_is_missing() {
        let (_dir, tenants) = registry(10, Duration::from_secs(60)).await;
        assert!(matches!(tenants.activate("nobody").await, Err(super::Activation::Missing)));
    }
}

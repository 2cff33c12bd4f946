//! Instance reuse: an http extension's opt-in (`reuse_calls` in its `herald:config`).
//!
//! By default every call gets a fresh instance, so nothing a call leaves in the guest's memory
//! reaches the next one. An extension that opts in keeps its instance between calls: the store
//! that served a call goes back here, keyed by the instance (customer), the extension and its
//! version, and the next call of that same extension of that same instance takes it. What the
//! guest keeps in its memory or globals therefore outlives a call (a cache, a parsed
//! configuration), and that is all an author opts into: a store never crosses to another instance
//! (the key holds the customer, and the tenant is set from the route at each call, never from the
//! guest), another extension or another version.
//!
//! A store comes back only after a call that ended well (no trap, no deadline, no error of the
//! guest's own, no answer 5xx, no cap reached: `Limits::refused`); after `reuse_calls` calls, or
//! `reuse_idle_seconds` without one, it is dropped. Its memory stays what the guest grew it to,
//! counted against the extension's memory cap. At most `PER_EXTENSION` idle stores per
//! extension and `TOTAL` in all are kept (each holds a slot of the pooling allocator).

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use hashbrown::{Equivalent, HashMap};
use wasmtime::Store;

use super::config::Reuse;
use super::state::CallState;

/// The most idle stores kept for one extension of one instance (an instance has at most 20
/// calls in flight).
const PER_EXTENSION: usize = 20;
/// The most idle stores kept in all: a fraction of the pooling allocator's 1000 instances.
const TOTAL: usize = 200;

/// Which calls may share a store, as the pool keeps it.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
struct WarmKey {
    customer: String,
    extension: String,
    /// The content hash of the extension's version.
    version: Arc<str>,
}

/// The same, borrowed from the call: a call looks its stores up without copying its names. Its
/// hash is `WarmKey`'s (the same fields, hashed as `str`, in the same order).
#[derive(Debug, Clone, Copy, Hash)]
pub struct WarmKeyRef<'a> {
    pub customer: &'a str,
    pub extension: &'a str,
    pub version: &'a str,
}

impl Equivalent<WarmKey> for WarmKeyRef<'_> {
    fn equivalent(&self, key: &WarmKey) -> bool {
        self.customer == key.customer && self.extension == key.extension && self.version == &*key.version
    }
}

impl WarmKeyRef<'_> {
    fn to_owned_key(self) -> WarmKey {
        WarmKey { customer: self.customer.to_string(), extension: self.extension.to_string(), version: Arc::from(self.version) }
    }
}

/// A store between two calls.
pub struct Warm {
    pub store: Store<CallState>,
    /// Calls it has served.
    pub calls: u32,
    idle_since: Instant,
    idle_limit: Duration,
}

impl Warm {
    fn stale(&self, now: Instant) -> bool {
        now.duration_since(self.idle_since) >= self.idle_limit
    }
}

/// The idle stores by key, and how many there are in all.
#[derive(Default)]
struct Idle {
    /// An extension's list stays when it empties (its next call gives its store back into it
    /// without a new key or list); the sweep removes the empty ones.
    stores: HashMap<WarmKey, Vec<Warm>, foldhash::fast::RandomState>,
    total: usize,
}

/// Keyed with foldhash (seeded per process) rather than SipHash, and looked up by a borrowed key:
/// hashing the key's three strings with SipHash, copying two of them into a new key, and a new
/// list for every store given back were about a thousand instructions of a reused call
/// (`bench/instructions.sh`).
#[derive(Default)]
pub struct WarmPool {
    idle: Mutex<Idle>,
}

impl WarmPool {
    /// The most recently used idle store for `key`, if one is fresh enough.
    pub fn take(&self, key: WarmKeyRef<'_>) -> Option<Warm> {
        let now = Instant::now();
        let mut stale = Vec::new();
        let found = {
            let mut idle = self.idle.lock().expect("warm pool lock");
            let Idle { stores, total } = &mut *idle;
            let list = stores.get_mut(&key)?;
            let mut found = None;
            while let Some(warm) = list.pop() {
                *total -= 1;
                if warm.stale(now) {
                    stale.push(warm);
                } else {
                    found = Some(warm);
                    break;
                }
            }
            found
        };
        // Stores are dropped outside the lock: dropping one resets its memory.
        drop(stale);
        found
    }

    /// Keeps a store that has served `calls` calls, if its extension lets it serve more and
    /// there is room.
    pub fn give(&self, key: WarmKeyRef<'_>, store: Store<CallState>, calls: u32, reuse: Reuse) {
        if calls >= reuse.calls {
            return;
        }
        let warm = Warm { store, calls, idle_since: Instant::now(), idle_limit: Duration::from_secs(reuse.idle_seconds.into()) };
        let refused = {
            let mut idle = self.idle.lock().expect("warm pool lock");
            let Idle { stores, total } = &mut *idle;
            if *total >= TOTAL {
                Some(warm)
            } else {
                let list = match stores.get_mut(&key) {
                    Some(list) => list,
                    None => stores.entry(key.to_owned_key()).or_default(),
                };
                if list.len() >= PER_EXTENSION {
                    Some(warm)
                } else {
                    list.push(warm);
                    *total += 1;
                    None
                }
            }
        };
        drop(refused);
    }

    /// Drops the stores idle past their extension's limit, and the lists left empty.
    pub fn sweep(&self) {
        let now = Instant::now();
        let mut stale = Vec::new();
        {
            let mut idle = self.idle.lock().expect("warm pool lock");
            let Idle { stores, total } = &mut *idle;
            stores.retain(|_, list| {
                let (old, fresh): (Vec<Warm>, Vec<Warm>) = std::mem::take(list).into_iter().partition(|w| w.stale(now));
                *total -= old.len();
                stale.extend(old);
                *list = fresh;
                !list.is_empty()
            });
        }
        drop(stale);
    }

    /// Sweeps every second until `stop` is set (a plain thread: dropping stores is synchronous work).
    pub fn spawn_sweeper(self: &Arc<Self>, stop: Arc<AtomicBool>) {
        let pool = Arc::downgrade(self);
        std::thread::Builder::new()
            .name("herald-warm-sweep".into())
            .spawn(move || {
                while !stop.load(Ordering::Relaxed) {
                    std::thread::sleep(Duration::from_secs(1));
                    match pool.upgrade() {
                        Some(pool) => pool.sweep(),
                        None => return,
                    }
                }
            })
            .expect("the warm pool's sweeper starts");
    }
}

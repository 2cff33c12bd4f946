//! PostgreSQL: the node pool's connections given back by an instance, kept with the schema their
//! session works in, so that the instance's next use skips setting it.
//!
//! Why: a read through sqlx's pool was three round trips to the server: `SET search_path` (the
//! schema, `node_pool.rs`), the statement, and the ping with which sqlx tests every connection
//! given back to its pool. A connection kept here is lent again to the same instance as it is: a
//! read is one round trip (GET one recipient: 10,600 to 18,200 a second on this machine,
//! BENCHMARKS.md "Warm connections"). Transactions still set their path for themselves (`SET
//! LOCAL`) and give their connection back to sqlx's pool (`SchemaPool::begin` says why); they may
//! take a kept connection, which then leaves this list.
//!
//! The rules that keep instances apart and the node's connections bounded:
//! - A connection is kept with a schema only after its session's path was set to that schema (or
//!   it was lent warm for it), and only a use for that same schema takes it without setting the
//!   path again. A use for another schema sets its own path first, as with any connection of the
//!   pool. Nothing else sets a session's path (a transaction's `SET LOCAL` ends with it).
//! - Kept connections count as lent in sqlx's pool, so the node never holds more than its
//!   setting. A use that finds no connection of its own takes an idle one of sqlx's, or opens one
//!   while there is room, or else takes the longest-kept connection of any instance; one that must
//!   wait for sqlx's pool is counted, and while anyone waits, connections given back go to sqlx's
//!   pool (which wakes the waiter) instead of being kept.
//! - A connection whose path was last set (checked) more than [`WARM`] ago has it set again (the
//!   check sqlx's ping made), and so has every kept connection once a lost connection was seen
//!   anywhere in the process ([`note_loss`]): the first use after a database restart or a
//!   failover gets a live connection. What this gives up: connections killed while the server
//!   stays up (`pg_terminate_backend`, a proxy restarting), and used again within a second of
//!   their last check, fail that use (503 with `Retry-After`, as in an outage); the first such
//!   failure makes every other kept connection be checked before its next use.
//! - One kept longer than [`IDLE`] goes back to sqlx's pool, which closes it when idle.
//! - A connection whose path could not be set is closed; one cut off while its path was being
//!   set goes back to sqlx's pool with no schema: neither is kept. One whose statement failed is
//!   kept (nothing here sees its statements), and is checked before its next use once the failure
//!   was noted.

use std::collections::VecDeque;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, PoisonError};
use std::time::{Duration, Instant};

use sqlx::pool::PoolConnection;
use sqlx::Any;

/// Within this time of its path being set, a kept connection is lent to its schema unchecked.
pub const WARM: Duration = Duration::from_secs(1);

/// Times this process saw the database lost or refusing: a kept connection checked before the
/// latest is checked again before its next use.
static LOSSES: AtomicU64 = AtomicU64::new(0);

/// Notes that the database was seen lost or refusing (a connection gone, or a new one refused):
/// every kept connection is checked before its next use. Whoever sees such an error calls it
/// (the store's errors do, `StoreError`'s `From`; and the node pool's own checks).
pub fn note_loss() {
    LOSSES.fetch_add(1, Ordering::Relaxed);
}

/// [`note_loss`] if `e` says the connection was lost.
pub fn note_if_lost(e: &sqlx::Error) {
    if lost(e) {
        note_loss();
    }
}

/// Whether `e` says the connection itself is gone (closed by a restarted or failed-over server,
/// or the server shutting it down), rather than that the statement failed.
pub fn lost(e: &sqlx::Error) -> bool {
    match e {
        sqlx::Error::Io(_) | sqlx::Error::Protocol(_) | sqlx::Error::Tls(_) => true,
        // 57P01..57P05: the server is shutting the session down; class 08: connection exceptions.
        sqlx::Error::Database(d) => d.code().is_some_and(|c| c.starts_with("57P") || c.starts_with("08")),
        _ => false,
    }
}

/// When a connection's path was last set, and the losses seen then.
#[derive(Debug, Clone, Copy)]
pub struct Checked {
    at: Instant,
    losses: u64,
}

impl Checked {
    /// Now.
    pub fn now() -> Checked {
        Checked { at: Instant::now(), losses: LOSSES.load(Ordering::Relaxed) }
    }

    fn warm(&self) -> bool {
        self.at.elapsed() < WARM && self.losses == LOSSES.load(Ordering::Relaxed)
    }
}

/// A connection kept this long without use goes back to sqlx's pool.
pub const IDLE: Duration = Duration::from_secs(60);

struct Kept {
    conn: PoolConnection<Any>,
    schema: Arc<str>,
    checked: Checked,
    /// When it was given back.
    since: Instant,
}

#[derive(Default)]
struct State {
    /// Oldest first.
    kept: VecDeque<Kept>,
    /// Uses waiting on (or about to wait on) sqlx's pool.
    waiting: usize,
}

/// The node's kept connections.
#[derive(Default)]
pub struct WarmConnections {
    state: Mutex<State>,
}

impl std::fmt::Debug for WarmConnections {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("WarmConnections").field("kept", &self.len()).finish()
    }
}

/// Where a use's connection comes from.
pub enum Source {
    /// Kept for this schema and checked within [`WARM`]: its path is set.
    Warm(PoolConnection<Any>, Checked),
    /// Kept, but for another schema or too long ago: its path must be set (which checks it).
    Kept(PoolConnection<Any>),
    /// sqlx's pool: acquire there; the guard counts the wait until it is dropped.
    Pool(Waiting),
}

/// Counts one use as waiting on sqlx's pool while it lives.
pub struct Waiting {
    warm: Arc<WarmConnections>,
}

impl Drop for Waiting {
    fn drop(&mut self) {
        self.warm.lock().waiting -= 1;
    }
}

impl WarmConnections {
    fn lock(&self) -> std::sync::MutexGuard<'_, State> {
        // The state is a list and a counter, consistent after every statement: a panic elsewhere
        // while the lock was held leaves nothing half-done.
        self.state.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// Connections kept now.
    pub fn len(&self) -> usize {
        self.lock().kept.len()
    }

    /// Whether none is kept.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// The connection for a use of `schema`. `pool_has_room` says whether sqlx's pool has an idle
    /// connection or may open one (then a use takes that rather than another instance's kept one).
    pub fn lend(self: &Arc<Self>, schema: &str, pool_has_room: bool) -> Source {
        let mut expired = Vec::new();
        let source = {
            let mut state = self.lock();
            while state.kept.front().is_some_and(|k| k.since.elapsed() >= IDLE) {
                expired.extend(state.kept.pop_front());
            }
            if let Some(at) = state.kept.iter().rposition(|k| &*k.schema == schema) {
                let kept = state.kept.remove(at).expect("the position was just found");
                if kept.checked.warm() {
                    Source::Warm(kept.conn, kept.checked)
                } else {
                    Source::Kept(kept.conn)
                }
            } else if let Some(oldest) = if pool_has_room { None } else { state.kept.pop_front() } {
                Source::Kept(oldest.conn)
            } else {
                state.waiting += 1;
                Source::Pool(Waiting { warm: Arc::clone(self) })
            }
        };
        // Dropped outside the lock: each goes back to sqlx's pool.
        drop(expired);
        source
    }

    /// Takes back `conn`, whose session works in `schema` (set when `checked` says): kept, unless a
    /// use is waiting on sqlx's pool, which then gets it.
    pub fn give_back(&self, conn: PoolConnection<Any>, schema: Arc<str>, checked: Checked) {
        let mut state = self.lock();
        if state.waiting == 0 {
            state.kept.push_back(Kept { conn, schema, checked, since: Instant::now() });
            return;
        }
        drop(state);
        drop(conn);
    }

    /// Gives the connections kept longer than [`IDLE`] back to sqlx's pool (for a node gone quiet,
    /// where no use comes to do it).
    pub fn sweep(&self) {
        let mut expired = Vec::new();
        {
            let mut state = self.lock();
            while state.kept.front().is_some_and(|k| k.since.elapsed() >= IDLE) {
                expired.extend(state.kept.pop_front());
            }
        }
        drop(expired);
    }
}

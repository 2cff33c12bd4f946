//! PostgreSQL: one bounded pool of connections per node, serving the control plane's schema
//! (`herald`) and every instance's schema (`instance_<customerId>`), however many instances exist.
//!
//! How a connection reaches one instance's tables and no other's: a connection's session works in
//! one instance's schema, set by `SET search_path` before the instance's first use of it, and no
//! SQL text names a schema. A connection is only ever lent through [`SchemaPool`], which sets the
//! path unless the connection was given back by the same instance a moment ago
//! (`warm_connections.rs`: the rules, and the round trips this saves); nothing else takes
//! connections from the instances' pool, and nothing else sets a session's path.
//!
//! Statement caches: sqlx keeps each connection's prepared statements by SQL text. PostgreSQL
//! parses a prepared statement again when the `search_path` changed since it was prepared, so a
//! cached statement never reads the tables of the schema it was first prepared in; but two
//! instances whose models give a column of one name different types would make the same text
//! return another row type, which PostgreSQL refuses ("cached plan must not change result type").
//! `Db::sql` therefore starts every statement of an instance with a comment naming its schema:
//! one instance's texts are never another's, and each has cache entries of its own (the cache
//! keeps a connection's 100 newest, so a connection that moves between many instances prepares
//! again more often).
//!
//! Fairness: an instance holds at most [`share`] of the instances' connections at once (three
//! quarters), so one busy instance cannot take them all from the others. A use that waits longer
//! than the acquire timeout for its share or for a connection fails with `PoolTimedOut`, which the
//! API answers 503 with `Retry-After`: a node never opens more connections than its setting, and a
//! caller never sees PostgreSQL's own "too many clients".

use std::ops::{Deref, DerefMut};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use sqlx::any::AnyPoolOptions;
use sqlx::pool::PoolConnection;
use sqlx::{Any, AnyConnection, AnyPool, Database, Executor, TransactionManager};
use tokio::sync::{OwnedSemaphorePermit, Semaphore};

use super::warm_connections::{lost, note_if_lost, note_loss, Checked, Source, WarmConnections, IDLE};

/// Begins, commits and rolls back transactions on a lent connection.
pub type Transactions = <Any as Database>::TransactionManager;

/// The connection settings of a node on PostgreSQL (`--database-max-connections`,
/// `--database-acquire-timeout`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PoolSettings {
    /// Every connection this node opens, control plane and instances together.
    pub max_connections: u32,
    /// How long a use waits for a connection before its call is answered 503.
    pub acquire_timeout: Duration,
}

/// Three nodes on a default PostgreSQL (`max_connections` 100, 3 of them reserved for
/// superusers) hold 72 connections, leaving room for an operator's `psql` and a migration.
pub const DEFAULT_MAX_CONNECTIONS: u32 = 24;

impl Default for PoolSettings {
    fn default() -> Self {
        PoolSettings { max_connections: DEFAULT_MAX_CONNECTIONS, acquire_timeout: Duration::from_secs(5) }
    }
}

impl PoolSettings {
    /// The control plane's part of the node's connections (the queue, credentials, schedules):
    /// a quarter, at least 2.
    pub fn control_connections(&self) -> u32 {
        (self.max_connections / 4).max(2)
    }

    /// The connection on which this node hears other nodes ask for calls' slots
    /// (`limits::concurrency`): one of the control plane's part when that part is above its floor
    /// of 2 (12 connections or more), else none, and a node's unused slots then linger for 10 ms
    /// only, as no node can ask it for them.
    pub fn slot_ask_connections(&self) -> u32 {
        u32::from(self.control_connections() > 2)
    }

    /// The control plane's pool: its part less the connection that hears asks for slots.
    pub fn control_pool_connections(&self) -> u32 {
        self.control_connections() - self.slot_ask_connections()
    }

    /// The instances' part: the rest, at least 1.
    pub fn instance_connections(&self) -> u32 {
        self.max_connections.saturating_sub(self.control_connections()).max(1)
    }
}

/// What one instance may hold of `pool_size` connections at once: three quarters, at least 1.
pub fn share(pool_size: u32) -> u32 {
    (pool_size * 3).div_ceil(4).max(1)
}

/// Waits on the node's pools, for the operator's metrics.
#[derive(Debug, Default)]
pub struct PoolWaits {
    /// Uses that waited a millisecond or more for a connection (for room in their instance's
    /// share, or for a new connection to be opened).
    pub waited: AtomicU64,
    /// Uses that gave up at the acquire timeout.
    pub timed_out: AtomicU64,
    /// Microseconds spent waiting, all uses together.
    pub wait_micros: AtomicU64,
    /// Point reads answered several to a statement (`store/tenant/combined_reads.rs`).
    pub gathered_reads: AtomicU64,
}

/// The node's pool for the instances' schemas.
#[derive(Debug)]
pub struct NodePool {
    pool: AnyPool,
    settings: PoolSettings,
    pub waits: PoolWaits,
    /// Connections given back, with the schema their session works in.
    warm: Arc<WarmConnections>,
}

impl NodePool {
    /// A pool on `url` for the instances (no connection opened yet).
    pub fn new(url: &str, settings: &PoolSettings) -> Result<Arc<NodePool>, sqlx::Error> {
        sqlx::any::install_default_drivers();
        let pool = AnyPoolOptions::new()
            .max_connections(settings.instance_connections())
            .min_connections(0)
            .idle_timeout(Duration::from_secs(60))
            .acquire_timeout(settings.acquire_timeout)
            // No ping before lending: the `SET search_path` a connection's first use by an instance
            // starts with is the liveness check (`SchemaPool::in_schema`), a round trip fewer.
            .test_before_acquire(false)
            // A connection lent to nobody names no instance's schema. Its backend answers the
            // API's calls: short turns where Herald may give them (`backend_priority`).
            .after_connect(|conn, _| {
                Box::pin(async move {
                    conn.execute("SET search_path TO pg_catalog").await?;
                    super::backend_priority::prompt_turns(conn).await;
                    Ok(())
                })
            })
            .connect_lazy(url)?;
        let node = Arc::new(NodePool { pool, settings: settings.clone(), waits: PoolWaits::default(), warm: Arc::default() });
        if let Ok(runtime) = tokio::runtime::Handle::try_current() {
            // A node gone quiet gives its kept connections back to sqlx's pool, which closes them.
            let node = Arc::downgrade(&node);
            runtime.spawn(async move {
                loop {
                    tokio::time::sleep(IDLE / 2).await;
                    let Some(node) = node.upgrade() else { break };
                    node.warm.sweep();
                }
            });
        }
        Ok(node)
    }

    /// Connections open now (lent, kept or idle) and idle (kept or idle).
    pub fn connections(&self) -> (u32, usize) {
        (self.pool.size(), self.pool.num_idle() + self.warm.len())
    }

    /// The handle of schema `schema` (quoted) on this pool.
    pub fn schema(self: &Arc<Self>, schema: &str) -> SchemaPool {
        SchemaPool {
            node: Arc::clone(self),
            schema: Arc::from(schema),
            set_path: Arc::from(format!("SET search_path TO {schema}")),
            set_local: Arc::from(format!("SET LOCAL search_path TO {schema}")),
            share: Arc::new(Semaphore::new(share(self.settings.instance_connections()) as usize)),
        }
    }

    fn note_wait(&self, since: Instant, timed_out: bool) {
        let waited = since.elapsed();
        if waited >= Duration::from_millis(1) {
            self.waits.waited.fetch_add(1, Ordering::Relaxed);
            self.waits.wait_micros.fetch_add(waited.as_micros() as u64, Ordering::Relaxed);
        }
        if timed_out {
            self.waits.timed_out.fetch_add(1, Ordering::Relaxed);
        }
    }
}

/// One instance's schema on the node's pool: every connection it lends works in that schema.
#[derive(Debug, Clone)]
pub struct SchemaPool {
    node: Arc<NodePool>,
    /// The quoted schema name.
    schema: Arc<str>,
    /// The statement that sets a session's path to it.
    set_path: Arc<str>,
    /// The statement that sets a transaction's path to it.
    set_local: Arc<str>,
    /// This instance's share of the pool's connections.
    share: Arc<Semaphore>,
}

impl SchemaPool {
    /// Counts `count` point reads answered by one statement, for the operator's metrics.
    pub fn count_gathered_reads(&self, count: usize) {
        self.node.waits.gathered_reads.fetch_add(count as u64, Ordering::Relaxed);
    }

    /// The quoted schema name (for the statement comment, `Db::sql`).
    pub fn schema(&self) -> &str {
        &self.schema
    }

    async fn permit(&self) -> Result<(OwnedSemaphorePermit, Instant), sqlx::Error> {
        let since = Instant::now();
        if let Ok(permit) = Arc::clone(&self.share).try_acquire_owned() {
            return Ok((permit, since));
        }
        match tokio::time::timeout(self.node.settings.acquire_timeout, Arc::clone(&self.share).acquire_owned()).await {
            Ok(Ok(permit)) => Ok((permit, since)),
            _ => {
                self.node.note_wait(since, true);
                Err(sqlx::Error::PoolTimedOut)
            }
        }
    }

    /// A connection from the pool, which lends idle ones without a ping: each use's first
    /// statement (setting the schema) is the check. A connection that died with the database (a
    /// restart, a failover) fails it, is closed, and the next one is tried (`again`) until the
    /// pool opens a fresh one; so the first call after a restart succeeds, as with a ping, without
    /// a ping's round trip on every read.
    async fn pooled(&self, since: Instant) -> Result<PoolConnection<Any>, sqlx::Error> {
        let got = self.node.pool.acquire().await;
        self.node.note_wait(since, matches!(got, Err(sqlx::Error::PoolTimedOut)));
        if matches!(&got, Err(e) if !matches!(e, sqlx::Error::PoolTimedOut)) {
            // A new connection refused or failed: the server may have dropped the kept ones too.
            note_loss();
        }
        got
    }

    /// Whether to try another connection after the `tried`th failed with `e`: only when the
    /// connection was lost, and at most once per connection the pool may hold, plus a fresh one.
    fn again(&self, e: &sqlx::Error, tried: u32) -> bool {
        lost(e) && tried <= self.node.settings.instance_connections()
    }

    /// A connection for this schema, and when its path was checked if its session already works
    /// in it (kept warm).
    async fn lend(&self, since: Instant) -> Result<(PoolConnection<Any>, Option<Checked>), sqlx::Error> {
        let node = &self.node;
        let room = node.pool.num_idle() > 0 || node.pool.size() < node.settings.instance_connections();
        match node.warm.lend(&self.schema, room) {
            Source::Warm(conn, checked) => Ok((conn, Some(checked))),
            Source::Kept(conn) => Ok((conn, None)),
            Source::Pool(_waiting) => Ok((self.pooled(since).await?, None)),
        }
    }

    /// A connection whose session works in this schema: one kept warm for it, or another with
    /// its path set now. A connection cut off while its path is being set goes back to sqlx's
    /// pool, whose next use sets a path again.
    async fn in_schema(&self, since: Instant) -> Result<Lent, sqlx::Error> {
        let (mut conn, warm) = self.lend(since).await?;
        let checked = match warm {
            Some(checked) => checked,
            None => {
                let checked = Checked::now();
                if let Err(e) = conn.execute(&*self.set_path).await {
                    // Never back to the pool with its path unknown.
                    conn.close_on_drop();
                    note_if_lost(&e);
                    return Err(e);
                }
                checked
            }
        };
        Ok(Lent { conn: Some(conn), home: Some(Home { warm: Arc::clone(&self.node.warm), schema: Arc::clone(&self.schema), checked }) })
    }

    /// A connection whose session works in this schema.
    pub async fn connection(&self) -> Result<(Lent, OwnedSemaphorePermit), sqlx::Error> {
        let (permit, since) = self.permit().await?;
        for tried in 1.. {
            match self.in_schema(since).await {
                Ok(lent) => return Ok((lent, permit)),
                Err(e) if self.again(&e, tried) => {}
                Err(e) => return Err(e),
            }
        }
        unreachable!("the loop returns")
    }

    /// A connection with a transaction begun on it, its path set to this schema for the
    /// transaction alone (`SET LOCAL`); the connection goes back to sqlx's pool, not kept warm.
    /// Why not kept: transactions on kept connections lowered the group commit's throughput on
    /// PostgreSQL by a quarter (`bench/writes.sh`: about 3,300 to 2,400 creates a second),
    /// though each saved a round trip; the cause was not found (BENCHMARKS.md, "Warm
    /// connections").
    pub async fn begin(&self) -> Result<(Lent, OwnedSemaphorePermit), sqlx::Error> {
        let (permit, since) = self.permit().await?;
        for tried in 1.. {
            // The connection's `BEGIN` is its check: a lost one is closed and the next tried.
            let failed = match self.lend(since).await {
                Ok((conn, _)) => {
                    let mut lent = Lent { conn: Some(conn), home: None };
                    let begun = match Transactions::begin(&mut lent, None).await {
                        Ok(()) => lent.execute(&*self.set_local).await.map(|_| ()),
                        Err(e) => Err(e),
                    };
                    match begun {
                        Ok(()) => return Ok((lent, permit)),
                        Err(e) => {
                            lent.close_on_drop();
                            note_if_lost(&e);
                            e
                        }
                    }
                }
                Err(e) => e,
            };
            if !self.again(&failed, tried) {
                return Err(failed);
            }
        }
        unreachable!("the loop returns")
    }
}

/// A connection lent for one use (an executor: `&mut *lent`). One of the node pool's, whose
/// session works in its instance's schema, goes back to the node's warm connections when
/// dropped; any other back to its own pool.
pub struct Lent {
    conn: Option<PoolConnection<Any>>,
    /// Where it goes back to (none for a connection of a pool of its own).
    home: Option<Home>,
}

/// The node's warm connections, the schema a lent connection's session works in, and when that
/// was last checked.
struct Home {
    warm: Arc<WarmConnections>,
    schema: Arc<str>,
    checked: Checked,
}

impl std::fmt::Debug for Lent {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Lent").field("schema", &self.home.as_ref().map(|h| &*h.schema)).finish_non_exhaustive()
    }
}

impl Lent {
    /// A connection of a pool of its own (SQLite, the control plane).
    pub fn own(conn: PoolConnection<Any>) -> Lent {
        Lent { conn: Some(conn), home: None }
    }

    /// Closes this connection when it is dropped instead of giving it back.
    pub fn close_on_drop(&mut self) {
        self.home = None;
        if let Some(conn) = &mut self.conn {
            conn.close_on_drop();
        }
    }
}

impl Deref for Lent {
    type Target = AnyConnection;
    fn deref(&self) -> &AnyConnection {
        self.conn.as_ref().expect("a lent connection is held until it is dropped")
    }
}

impl DerefMut for Lent {
    fn deref_mut(&mut self) -> &mut AnyConnection {
        self.conn.as_mut().expect("a lent connection is held until it is dropped")
    }
}

impl Drop for Lent {
    fn drop(&mut self) {
        if let Some(conn) = &mut self.conn {
            if Transactions::get_transaction_depth(conn) > 0 {
                // A transaction still open (its holder, `db::Tx` or another, dropped it without
                // committing, or its commit failed): rolled back before the connection's next
                // statement, whoever makes it, as `sqlx::Transaction` does. The depth is the
                // connection's own count, current once `BEGIN` or `COMMIT` has been awaited.
                Transactions::start_rollback(conn);
            }
        }
        if let (Some(conn), Some(home)) = (self.conn.take(), self.home.take()) {
            home.warm.give_back(conn, home.schema, home.checked);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_control_plane_and_the_instances_split_the_setting() {
        let ten = PoolSettings { max_connections: 10, ..Default::default() };
        assert_eq!((ten.control_connections(), ten.instance_connections()), (2, 8));
        let default = PoolSettings::default();
        assert_eq!(default.control_connections() + default.instance_connections(), DEFAULT_MAX_CONNECTIONS);
        let tiny = PoolSettings { max_connections: 1, ..Default::default() };
        assert_eq!((tiny.control_connections(), tiny.instance_connections()), (2, 1), "the floor of each part");
        // The connection hearing asks for slots comes out of the control plane's part, never
        // below its floor of 2.
        assert_eq!((ten.slot_ask_connections(), ten.control_pool_connections()), (0, 2));
        let twelve = PoolSettings { max_connections: 12, ..Default::default() };
        assert_eq!((twelve.slot_ask_connections(), twelve.control_pool_connections(), twelve.instance_connections()), (1, 2, 9));
        assert_eq!((default.slot_ask_connections(), default.control_pool_connections()), (1, 5));
        assert_eq!(share(8), 6);
        assert_eq!(share(1), 1);
    }
}

//! PostgreSQL: one bounded pool of connections per node, serving the control plane's schema
//! (`herald`) and every instance's schema (`instance_<customerId>`), however many instances exist.
//!
//! How a connection reaches one instance's tables and no other's: every use of a connection for
//! an instance first sets its `search_path` to that instance's schema (`SET search_path` for a
//! lone connection, `SET LOCAL search_path` at the start of a transaction, which ends with it),
//! and no SQL text names a schema. A connection is only ever lent through [`SchemaPool`], which
//! does this; nothing else takes connections from the instances' pool.
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

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use sqlx::any::AnyPoolOptions;
use sqlx::pool::PoolConnection;
use sqlx::{Any, AnyPool, Executor, Transaction};
use tokio::sync::{OwnedSemaphorePermit, Semaphore};

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
}

/// The node's pool for the instances' schemas.
#[derive(Debug)]
pub struct NodePool {
    pool: AnyPool,
    settings: PoolSettings,
    pub waits: PoolWaits,
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
            // No ping before lending: the `SET search_path` every use starts with is the liveness
            // check (`SchemaPool::lend`), a round trip fewer per read.
            .test_before_acquire(false)
            // A connection lent to nobody names no instance's schema.
            .after_connect(|conn, _| Box::pin(async move { conn.execute("SET search_path TO pg_catalog").await.map(|_| ()) }))
            .connect_lazy(url)?;
        Ok(Arc::new(NodePool { pool, settings: settings.clone(), waits: PoolWaits::default() }))
    }

    /// Connections open now (lent or idle) and idle.
    pub fn connections(&self) -> (u32, usize) {
        (self.pool.size(), self.pool.num_idle())
    }

    /// The handle of schema `schema` (quoted) on this pool.
    pub fn schema(self: &Arc<Self>, schema: &str) -> SchemaPool {
        SchemaPool {
            node: Arc::clone(self),
            schema: Arc::from(schema),
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
    /// This instance's share of the pool's connections.
    share: Arc<Semaphore>,
}

impl SchemaPool {
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
        got
    }

    /// Whether to try another connection after the `tried`th failed with `e`: only when the
    /// connection was lost, and at most once per connection the pool may hold, plus a fresh one.
    fn again(&self, e: &sqlx::Error, tried: u32) -> bool {
        lost(e) && tried <= self.node.settings.instance_connections()
    }

    /// A connection whose session works in this schema.
    pub async fn connection(&self) -> Result<(PoolConnection<Any>, OwnedSemaphorePermit), sqlx::Error> {
        let (permit, since) = self.permit().await?;
        let set = format!("SET search_path TO {}", self.schema);
        for tried in 1.. {
            let mut conn = self.pooled(since).await?;
            match conn.execute(set.as_str()).await {
                Ok(_) => return Ok((conn, permit)),
                Err(e) => {
                    // Never back to the pool with its path unknown.
                    conn.close_on_drop();
                    if !self.again(&e, tried) {
                        return Err(e);
                    }
                }
            }
        }
        unreachable!("the loop returns")
    }

    /// A transaction in this schema (the path is set for the transaction only).
    pub async fn begin(&self) -> Result<(Transaction<'static, Any>, OwnedSemaphorePermit), sqlx::Error> {
        let (permit, since) = self.permit().await?;
        let set = format!("SET LOCAL search_path TO {}", self.schema);
        for tried in 1.. {
            let conn = self.pooled(since).await?;
            // A transaction that failed to start or to set its path is rolled back on drop, and
            // a lost connection with it fails its next check.
            let failed = match Transaction::begin(conn, None).await {
                Ok(mut tx) => match tx.execute(set.as_str()).await {
                    Ok(_) => return Ok((tx, permit)),
                    Err(e) => e,
                },
                Err(e) => e,
            };
            if !self.again(&failed, tried) {
                return Err(failed);
            }
        }
        unreachable!("the loop returns")
    }
}

/// Whether `e` says the connection itself is gone (closed by a restarted or failed-over server,
/// or the server shutting it down), rather than that the statement failed.
fn lost(e: &sqlx::Error) -> bool {
    match e {
        sqlx::Error::Io(_) | sqlx::Error::Protocol(_) | sqlx::Error::Tls(_) => true,
        // 57P01..57P05: the server is shutting the session down; class 08: connection exceptions.
        sqlx::Error::Database(d) => d.code().is_some_and(|c| c.starts_with("57P") || c.starts_with("08")),
        _ => false,
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
        assert_eq!(share(8), 6);
        assert_eq!(share(1), 1);
    }
}

//! Flows defined through the API, kept as JSON with a version (one more at every change) so that a
//! run can say which version it follows.
//!
//! Every created recipient and achieved event looks up the flows it triggers, so the list is
//! cached in memory: this process's own writes replace it at once, a read that raced with a write
//! does not cache what it read, and the time to live bounds how long a flow saved through another
//! node (over the same PostgreSQL database) takes to trigger here.

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use sqlx::Row;

use super::TenantDb;
use crate::store::{now_millis, StoreResult};

/// How long the cached list of flows is trusted.
const FLOWS_TTL: Duration = Duration::from_secs(1);

/// The list, and when it was read.
type CachedFlows = Option<(Instant, Arc<Vec<StoredFlow>>)>;

#[derive(Clone, Default)]
pub(super) struct FlowCache {
    list: Arc<Mutex<CachedFlows>>,
    /// Bumped by every write: a read caches its result only if no write happened meanwhile.
    generation: Arc<AtomicU64>,
}

impl FlowCache {
    fn get(&self) -> Option<Arc<Vec<StoredFlow>>> {
        let list = self.list.lock().expect("flow cache lock");
        list.as_ref().filter(|(at, _)| at.elapsed() < FLOWS_TTL).map(|(_, flows)| flows.clone())
    }

    fn invalidate(&self) {
        self.generation.fetch_add(1, Ordering::SeqCst);
        *self.list.lock().expect("flow cache lock") = None;
    }
}

impl std::fmt::Debug for FlowCache {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("FlowCache")
    }
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct StoredFlow {
    pub name: String,
    pub definition: String,
    pub version: i64,
    pub updated_at: i64,
}

fn decode(r: &sqlx::any::AnyRow) -> Result<StoredFlow, sqlx::Error> {
    Ok(StoredFlow { name: r.try_get(0)?, definition: r.try_get(1)?, version: r.try_get(2)?, updated_at: r.try_get(3)? })
}

impl TenantDb {
    /// The instance's API flows, by name.
    pub async fn flows(&self) -> StoreResult<Arc<Vec<StoredFlow>>> {
        if let Some(cached) = self.flow_cache.get() {
            return Ok(cached);
        }
        let generation = self.flow_cache.generation.load(Ordering::SeqCst);
        let rows = sqlx::query("SELECT name, definition, version, updated_at FROM _flows ORDER BY name")
            .fetch_all(&mut *self.db.reader().await?)
            .await?;
        let flows = Arc::new(rows.iter().map(decode).collect::<Result<Vec<_>, _>>()?);
        let mut list = self.flow_cache.list.lock().expect("flow cache lock");
        if self.flow_cache.generation.load(Ordering::SeqCst) == generation {
            *list = Some((Instant::now(), flows.clone()));
        }
        Ok(flows)
    }

    pub async fn flow(&self, name: &str) -> StoreResult<Option<StoredFlow>> {
        let sql = self.db.sql("SELECT name, definition, version, updated_at FROM _flows WHERE name = ?");
        let row = sqlx::query(&sql).bind(name).fetch_optional(&mut *self.db.reader().await?).await?;
        Ok(row.as_ref().map(decode).transpose()?)
    }

    /// Creates or replaces flow `name`; returns it as stored and whether it was created.
    pub async fn put_flow(&self, name: &str, definition: &str) -> StoreResult<(StoredFlow, bool)> {
        let now = now_millis();
        let mut tx = self.db.begin().await?;
        let inserted = sqlx::query(
            &self.db.sql("INSERT INTO _flows (name, definition, version, updated_at) VALUES (?, ?, 1, ?) ON CONFLICT (name) DO NOTHING"),
        )
        .bind(name)
        .bind(definition)
        .bind(now)
        .execute(&mut *tx)
        .await?
        .rows_affected()
            == 1;
        if !inserted {
            sqlx::query(&self.db.sql("UPDATE _flows SET definition = ?, version = version + 1, updated_at = ? WHERE name = ?"))
                .bind(definition)
                .bind(now)
                .bind(name)
                .execute(&mut *tx)
                .await?;
        }
        let sql = self.db.sql("SELECT name, definition, version, updated_at FROM _flows WHERE name = ?");
        let stored = decode(&sqlx::query(&sql).bind(name).fetch_one(&mut *tx).await?)?;
        tx.commit().await?;
        self.flow_cache.invalidate();
        Ok((stored, inserted))
    }

    pub async fn delete_flow(&self, name: &str) -> StoreResult<bool> {
        let done = sqlx::query(&self.db.sql("DELETE FROM _flows WHERE name = ?")).bind(name).execute(&mut *self.db.writer().await?).await?;
        self.flow_cache.invalidate();
        Ok(done.rows_affected() > 0)
    }
}

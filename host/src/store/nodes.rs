//! Nodes: the server processes sharing a control plane, each with its last sign of life. A node
//! beats every few seconds; jobs it was running when it stopped beating are queued again by any
//! other node (`ControlDb::recover_jobs`). Times here are the wall clock, not the server's
//! injectable `Clock`: liveness is about processes, not about what callers see.

use super::{now_millis, ControlDb, StoreResult};

impl ControlDb {
    /// Records that node `id` is alive now (registering it on its first beat).
    pub async fn node_heartbeat(&self, id: &str) -> StoreResult<()> {
        let now = now_millis();
        sqlx::query(&self.db.sql(
            "INSERT INTO nodes (id, started_at, heartbeat_at) VALUES (?, ?, ?)
             ON CONFLICT (id) DO UPDATE SET heartbeat_at = excluded.heartbeat_at",
        ))
        .bind(id)
        .bind(now)
        .bind(now)
        .execute(&mut *self.db.writer().await?)
        .await?;
        Ok(())
    }

    /// Forgets nodes silent since `before` that run no job any more.
    pub async fn prune_nodes(&self, before: i64) -> StoreResult<u64> {
        let done = sqlx::query(&self.db.sql(
            "DELETE FROM nodes WHERE heartbeat_at < ? AND id NOT IN (SELECT node FROM extension_jobs WHERE state = 'running' AND node IS NOT NULL)",
        ))
        .bind(before)
        .execute(&mut *self.db.writer().await?)
        .await?;
        Ok(done.rows_affected())
    }

    /// Node `id` stops: its row goes, so its jobs (if any were left) are recovered at once.
    pub async fn remove_node(&self, id: &str) -> StoreResult<()> {
        sqlx::query(&self.db.sql("DELETE FROM nodes WHERE id = ?")).bind(id).execute(&mut *self.db.writer().await?).await?;
        Ok(())
    }
}

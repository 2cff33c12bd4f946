//! What monitors reported: each run's time, status and message, the newest `KEPT_RUNS` per
//! monitor.

use sqlx::Row;

use super::TenantDb;
use crate::store::StoreResult;

/// Runs kept per monitor.
pub const KEPT_RUNS: i64 = 50;

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct MonitorRun {
    /// The monitor's extension id.
    pub extension: String,
    /// When it ran (milliseconds since the Unix epoch, the server's clock).
    pub at: i64,
    pub duration_ms: i64,
    /// `healthy`, `unhealthy` (what it reported) or `failed` (trap, deadline: it reported nothing).
    pub status: String,
    pub message: String,
}

impl TenantDb {
    /// Keeps a run and trims the monitor's history.
    pub async fn insert_monitor_run(&self, run: &MonitorRun) -> StoreResult<()> {
        let mut tx = self.db.begin().await?;
        sqlx::query(&self.db.sql("INSERT INTO _monitor_runs (extension, at, duration_ms, status, message) VALUES (?, ?, ?, ?, ?)"))
            .bind(&run.extension)
            .bind(run.at)
            .bind(run.duration_ms)
            .bind(&run.status)
            .bind(&run.message)
            .execute(&mut *tx)
            .await?;
        let trim = self.db.sql(
            "DELETE FROM _monitor_runs WHERE extension = ? AND id <= (SELECT id FROM _monitor_runs WHERE extension = ? ORDER BY id DESC LIMIT 1 OFFSET ?)",
        );
        sqlx::query(&trim).bind(&run.extension).bind(&run.extension).bind(KEPT_RUNS).execute(&mut *tx).await?;
        tx.commit().await?;
        Ok(())
    }

    /// A monitor's newest runs, newest first.
    pub async fn monitor_runs(&self, extension: &str, limit: i64) -> StoreResult<Vec<MonitorRun>> {
        let sql = self
            .db
            .sql("SELECT extension, at, duration_ms, status, message FROM _monitor_runs WHERE extension = ? ORDER BY id DESC LIMIT ?");
        let rows = sqlx::query(&sql).bind(extension).bind(limit).fetch_all(&mut *self.db.reader().await?).await?;
        Ok(rows
            .iter()
            .map(|r| MonitorRun { extension: r.get(0), at: r.get(1), duration_ms: r.get(2), status: r.get(3), message: r.get(4) })
            .collect())
    }
}

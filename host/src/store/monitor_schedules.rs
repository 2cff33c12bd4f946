//! Monitors' schedules in the control plane (`monitor_schedules`): when each runs next. Every
//! node's scheduler looks; the node whose update moves `next_at` on runs the monitor (a
//! compare-and-set), so a due run happens once.

use sqlx::Row;

use super::{ControlDb, StoreResult};

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct MonitorSchedule {
    pub schedule: String,
    pub sha256: String,
    pub next_at: i64,
}

impl ControlDb {
    pub async fn monitor_schedule(&self, customer_id: &str, extension: &str) -> StoreResult<Option<MonitorSchedule>> {
        let sql = self.db.sql("SELECT schedule, sha256, next_at FROM monitor_schedules WHERE customer_id = ? AND extension = ?");
        let row = sqlx::query(&sql).bind(customer_id).bind(extension).fetch_optional(&mut *self.db.reader().await?).await?;
        Ok(row.map(|r| MonitorSchedule { schedule: r.get(0), sha256: r.get(1), next_at: r.get(2) }))
    }

    /// Sets when a monitor runs next (a new monitor, or a new version of one).
    pub async fn set_monitor_schedule(&self, customer_id: &str, extension: &str, s: &MonitorSchedule) -> StoreResult<()> {
        let sql = self.db.sql(
            "INSERT INTO monitor_schedules (customer_id, extension, schedule, sha256, next_at) VALUES (?, ?, ?, ?, ?)
             ON CONFLICT (customer_id, extension) DO UPDATE SET schedule = excluded.schedule, sha256 = excluded.sha256, next_at = excluded.next_at",
        );
        sqlx::query(&sql)
            .bind(customer_id)
            .bind(extension)
            .bind(&s.schedule)
            .bind(&s.sha256)
            .bind(s.next_at)
            .execute(&mut *self.db.writer().await?)
            .await?;
        Ok(())
    }

    /// Takes the run due at `due` (moving the schedule on to `next_at`) unless another node did:
    /// true when this call took it.
    pub async fn claim_monitor_run(&self, customer_id: &str, extension: &str, due: i64, next_at: i64) -> StoreResult<bool> {
        let sql = self.db.sql("UPDATE monitor_schedules SET next_at = ? WHERE customer_id = ? AND extension = ? AND next_at = ?");
        let done =
            sqlx::query(&sql).bind(next_at).bind(customer_id).bind(extension).bind(due).execute(&mut *self.db.writer().await?).await?;
        Ok(done.rows_affected() == 1)
    }

    /// Every monitor schedule of instance `customer_id`, by extension id.
    pub async fn monitor_schedules(&self, customer_id: &str) -> StoreResult<std::collections::HashMap<String, MonitorSchedule>> {
        let sql = self.db.sql("SELECT extension, schedule, sha256, next_at FROM monitor_schedules WHERE customer_id = ?");
        let rows = sqlx::query(&sql).bind(customer_id).fetch_all(&mut *self.db.reader().await?).await?;
        Ok(rows.iter().map(|r| (r.get(0), MonitorSchedule { schedule: r.get(1), sha256: r.get(2), next_at: r.get(3) })).collect())
    }

    /// Forgets a monitor's schedule (its extension is gone, or no longer a monitor) if it is still
    /// `read`: a schedule another node has set or moved on since is kept.
    pub async fn forget_monitor_schedule(&self, customer_id: &str, extension: &str, read: &MonitorSchedule) -> StoreResult<()> {
        let sql = self
            .db
            .sql("DELETE FROM monitor_schedules WHERE customer_id = ? AND extension = ? AND schedule = ? AND sha256 = ? AND next_at = ?");
        sqlx::query(&sql)
            .bind(customer_id)
            .bind(extension)
            .bind(&read.schedule)
            .bind(&read.sha256)
            .bind(read.next_at)
            .execute(&mut *self.db.writer().await?)
            .await?;
        Ok(())
    }

    /// The instances with a monitor due at `now`: what the scheduler opens.
    pub async fn due_monitor_instances(&self, now: i64) -> StoreResult<Vec<String>> {
        let sql = self.db.sql("SELECT DISTINCT customer_id FROM monitor_schedules WHERE next_at <= ?");
        let rows = sqlx::query(&sql).bind(now).fetch_all(&mut *self.db.reader().await?).await?;
        Ok(rows.iter().map(|r| r.get(0)).collect())
    }
}

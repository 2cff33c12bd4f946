//! Scheduled flows in the control plane (`flow_schedules`): when each fires next, and how far
//! its latest firing's sweep has gone. Every node's scheduler looks; the node whose update moves
//! `next_at` on is the one that fires (a compare-and-set), so a firing happens once.

use std::collections::HashMap;

use sqlx::any::AnyRow;
use sqlx::Row;

use super::{ControlDb, StoreResult};

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FlowSchedule {
    pub schedule: String,
    pub next_at: i64,
    pub fired_at: Option<i64>,
    pub swept: i64,
    pub sweep_done: bool,
    /// When its sweep last finished a batch (or fired).
    pub swept_at: Option<i64>,
}

/// A batch of a sweep: the key it starts after, how many recipients it had, and its last key
/// (`after` when it had none).
#[derive(Debug, Clone, Copy)]
pub struct SweptBatch {
    pub after: i64,
    pub count: i64,
    pub last: i64,
}

const SCHEDULE_COLUMNS: &str = "schedule, next_at, fired_at, swept, sweep_done, swept_at";

fn decode(r: &AnyRow, at: usize) -> FlowSchedule {
    FlowSchedule {
        schedule: r.get(at),
        next_at: r.get(at + 1),
        fired_at: r.get(at + 2),
        swept: r.get(at + 3),
        sweep_done: r.get::<i64, _>(at + 4) != 0,
        swept_at: r.get(at + 5),
    }
}

impl ControlDb {
    pub async fn flow_schedule(&self, customer_id: &str, flow: &str) -> StoreResult<Option<FlowSchedule>> {
        let sql = self.db.sql_string(format!("SELECT {SCHEDULE_COLUMNS} FROM flow_schedules WHERE customer_id = ? AND flow = ?"));
        let row = sqlx::query(&sql).bind(customer_id).bind(flow).fetch_optional(&mut *self.db.reader().await?).await?;
        Ok(row.map(|r| decode(&r, 0)))
    }

    /// The instances with a flow due at `now`: what the scheduler opens.
    pub async fn due_flow_instances(&self, now: i64) -> StoreResult<Vec<String>> {
        let sql = self.db.sql("SELECT DISTINCT customer_id FROM flow_schedules WHERE next_at <= ?");
        let rows = sqlx::query(&sql).bind(now).fetch_all(&mut *self.db.reader().await?).await?;
        Ok(rows.iter().map(|r| r.get(0)).collect())
    }

    /// Every schedule of instance `customer_id`, by flow name (the scheduler's look at it).
    pub async fn flow_schedules(&self, customer_id: &str) -> StoreResult<HashMap<String, FlowSchedule>> {
        let sql = self.db.sql_string(format!("SELECT flow, {SCHEDULE_COLUMNS} FROM flow_schedules WHERE customer_id = ?"));
        let rows = sqlx::query(&sql).bind(customer_id).fetch_all(&mut *self.db.reader().await?).await?;
        Ok(rows.iter().map(|r| (r.get(0), decode(r, 1))).collect())
    }

    /// Sets when flow `flow` fires next, for cron `schedule` (a new or changed schedule).
    pub async fn set_flow_schedule(&self, customer_id: &str, flow: &str, schedule: &str, next_at: i64) -> StoreResult<()> {
        let sql = self.db.sql(
            "INSERT INTO flow_schedules (customer_id, flow, schedule, next_at) VALUES (?, ?, ?, ?)
             ON CONFLICT (customer_id, flow) DO UPDATE SET schedule = excluded.schedule, next_at = excluded.next_at",
        );
        sqlx::query(&sql).bind(customer_id).bind(flow).bind(schedule).bind(next_at).execute(&mut *self.db.writer().await?).await?;
        Ok(())
    }

    /// Forgets flow `flow`'s schedule and the progress of its last firing (the flow was deleted,
    /// or created anew under a deleted one's name: its schedule starts from its own next time).
    pub async fn forget_flow_schedule(&self, customer_id: &str, flow: &str) -> StoreResult<()> {
        let sql = self.db.sql("DELETE FROM flow_schedules WHERE customer_id = ? AND flow = ?");
        sqlx::query(&sql).bind(customer_id).bind(flow).execute(&mut *self.db.writer().await?).await?;
        Ok(())
    }

    /// Fires the schedule due at `due` (moving it on to `next_at`) unless another node did:
    /// true when this call fired it.
    pub async fn fire_flow_schedule(&self, customer_id: &str, flow: &str, due: i64, next_at: i64) -> StoreResult<bool> {
        let sql = self.db.sql(
            "UPDATE flow_schedules SET next_at = ?, fired_at = ?, swept = 0, sweep_done = 0, swept_at = ?, swept_after = NULL
             WHERE customer_id = ? AND flow = ? AND next_at = ?",
        );
        let done = sqlx::query(&sql)
            .bind(next_at)
            .bind(due)
            .bind(due)
            .bind(customer_id)
            .bind(flow)
            .bind(due)
            .execute(&mut *self.db.writer().await?)
            .await?;
        Ok(done.rows_affected() == 1)
    }

    /// Moves the schedule due at `due` on to `next_at` without firing (its last sweep is still
    /// going); true when this call moved it.
    pub async fn skip_flow_schedule(&self, customer_id: &str, flow: &str, due: i64, next_at: i64) -> StoreResult<bool> {
        let sql = self.db.sql("UPDATE flow_schedules SET next_at = ? WHERE customer_id = ? AND flow = ? AND next_at = ?");
        let done = sqlx::query(&sql).bind(next_at).bind(customer_id).bind(flow).bind(due).execute(&mut *self.db.writer().await?).await?;
        Ok(done.rows_affected() == 1)
    }

    /// Counts the `batch` of recipients swept for the firing at `fired_at` (and whether it is
    /// over). A batch is counted once: only when the count stands where the batch starts (or
    /// before the first), so the batch of a job run again after its node died is not counted twice.
    pub async fn record_sweep(
        &self,
        customer_id: &str,
        flow: &str,
        fired_at: i64,
        batch: SweptBatch,
        done: bool,
        now: i64,
    ) -> StoreResult<()> {
        let sql = self.db.sql(
            "UPDATE flow_schedules SET
               swept = swept + CASE WHEN swept_after IS NULL OR swept_after = ? THEN ? ELSE 0 END,
               swept_after = CASE WHEN swept_after IS NULL OR swept_after = ? THEN ? ELSE swept_after END,
               sweep_done = ?, swept_at = ?
             WHERE customer_id = ? AND flow = ? AND fired_at = ?",
        );
        sqlx::query(&sql)
            .bind(batch.after)
            .bind(batch.count)
            .bind(batch.after)
            .bind(batch.last)
            .bind(i64::from(done))
            .bind(now)
            .bind(customer_id)
            .bind(flow)
            .bind(fired_at)
            .execute(&mut *self.db.writer().await?)
            .await?;
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::SweptBatch;
    use crate::store::{Backend, ControlDb};

    /// A batch recorded again (its job run again after its node died) is not counted twice; the
    /// next batch is, and a new firing starts from nothing.
    #[tokio::test]
    async fn a_batch_run_again_is_counted_once() {
        let dir = tempfile::tempdir().unwrap();
        let control = ControlDb::open(&Backend::Sqlite { data_dir: dir.path().into() }).await.unwrap();
        control.set_flow_schedule("demo", "sweep", "* * * * *", 1_000).await.unwrap();
        assert!(control.fire_flow_schedule("demo", "sweep", 1_000, 61_000).await.unwrap());
        let first = SweptBatch { after: 0, count: 500, last: 612 };
        control.record_sweep("demo", "sweep", 1_000, first, false, 2_000).await.unwrap();
        control.record_sweep("demo", "sweep", 1_000, first, false, 3_000).await.unwrap();
        let swept = |s: Option<super::FlowSchedule>| s.map(|s| (s.swept, s.sweep_done));
        assert_eq!(swept(control.flow_schedule("demo", "sweep").await.unwrap()), Some((500, false)));
        let last = SweptBatch { after: 612, count: 20, last: 700 };
        control.record_sweep("demo", "sweep", 1_000, last, true, 4_000).await.unwrap();
        control.record_sweep("demo", "sweep", 1_000, last, true, 5_000).await.unwrap();
        assert_eq!(swept(control.flow_schedule("demo", "sweep").await.unwrap()), Some((520, true)));

        assert!(control.fire_flow_schedule("demo", "sweep", 61_000, 121_000).await.unwrap());
        control.record_sweep("demo", "sweep", 61_000, first, false, 62_000).await.unwrap();
        assert_eq!(swept(control.flow_schedule("demo", "sweep").await.unwrap()), Some((500, false)));
    }
}

//! The usage books of the control plane (`extension_usage`): what each instance's extensions
//! used per UTC day, added to by every node (`ops::usage` gathers and flushes) and read by the
//! operator (`herald usage`, the operator listener) and by each instance for itself (`GET
//! /usage`). What an operator bills from and a customer tunes with.

use sqlx::Row;

use super::control::ControlDb;
use super::StoreResult;
use crate::rsql::Dialect;

/// Executions by how they ended (the words of `runtime::outcome`).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, serde::Serialize)]
pub struct CallsByOutcome {
    pub ok: u64,
    pub error: u64,
    pub deadline: u64,
    pub cpu: u64,
    pub memory: u64,
    pub trap: u64,
    pub fault: u64,
}

/// One instance's usage of one day: a node's addition, or the sum of every node's.
#[derive(Debug, Clone, Default, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "camelCase")]
pub struct DayUsage {
    /// Processor time of its extensions' executions, and their time waiting for a turn (us).
    pub cpu_us: u64,
    pub wait_us: u64,
    pub calls: CallsByOutcome,
    pub outbound_requests: u64,
    pub outbound_bytes: u64,
    /// Records created, changed or deleted through the platform's interfaces.
    pub rows_written: u64,
    /// The instance's storage (its database), the most measured that day.
    pub storage_bytes: u64,
}

impl DayUsage {
    pub fn add(&mut self, other: &DayUsage) {
        self.cpu_us += other.cpu_us;
        self.wait_us += other.wait_us;
        let (a, b) = (&mut self.calls, &other.calls);
        a.ok += b.ok;
        a.error += b.error;
        a.deadline += b.deadline;
        a.cpu += b.cpu;
        a.memory += b.memory;
        a.trap += b.trap;
        a.fault += b.fault;
        self.outbound_requests += other.outbound_requests;
        self.outbound_bytes += other.outbound_bytes;
        self.rows_written += other.rows_written;
        self.storage_bytes = self.storage_bytes.max(other.storage_bytes);
    }

    fn counts(&self) -> [u64; 13] {
        let c = &self.calls;
        [
            self.cpu_us,
            self.wait_us,
            c.ok,
            c.error,
            c.deadline,
            c.cpu,
            c.memory,
            c.trap,
            c.fault,
            self.outbound_requests,
            self.outbound_bytes,
            self.rows_written,
            self.storage_bytes,
        ]
    }
}

/// A line of the books: whose, which day (`YYYY-MM-DD`), what.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "camelCase")]
pub struct UsageRow {
    pub instance: String,
    pub day: String,
    #[serde(flatten)]
    pub usage: DayUsage,
}

/// The books' columns after the instance and the day, in `DayUsage::counts`'s order; every one
/// is added but `storage_bytes`, which keeps the larger.
const COLUMNS: [&str; 13] = [
    "cpu_us",
    "wait_us",
    "calls_ok",
    "calls_error",
    "calls_deadline",
    "calls_cpu",
    "calls_memory",
    "calls_trap",
    "calls_fault",
    "outbound_requests",
    "outbound_bytes",
    "rows_written",
    "storage_bytes",
];

impl ControlDb {
    /// Adds a node's `usage` of `day` to an instance's line of the books.
    pub async fn add_extension_usage(&self, customer_id: &str, day: &str, usage: &DayUsage) -> StoreResult<()> {
        let larger = match self.db.dialect {
            Dialect::Sqlite => "MAX",
            Dialect::Postgres => "GREATEST",
        };
        let updates: Vec<String> = COLUMNS
            .iter()
            .map(|c| match *c {
                "storage_bytes" => format!("{c} = {larger}(extension_usage.{c}, excluded.{c})"),
                c => format!("{c} = extension_usage.{c} + excluded.{c}"),
            })
            .collect();
        let sql = format!(
            "INSERT INTO extension_usage (customer_id, day, {}) VALUES (?, ?, {}) ON CONFLICT (customer_id, day) DO UPDATE SET {}",
            COLUMNS.join(", "),
            vec!["?"; COLUMNS.len()].join(", "),
            updates.join(", ")
        );
        let sql = self.db.sql_string(sql);
        let mut insert = sqlx::query(&sql).bind(customer_id).bind(day);
        for count in usage.counts() {
            insert = insert.bind(i64::try_from(count).unwrap_or(i64::MAX));
        }
        insert.execute(&mut *self.db.writer().await?).await?;
        Ok(())
    }

    /// The books from `since` (a day, `YYYY-MM-DD`) on, of one instance or of all, by instance
    /// and day.
    pub async fn extension_usage(&self, instance: Option<&str>, since: &str) -> StoreResult<Vec<UsageRow>> {
        let filter = if instance.is_some() { "AND customer_id = ?" } else { "" };
        let sql = self.db.sql_string(format!(
            "SELECT customer_id, day, {} FROM extension_usage WHERE day >= ? {filter} ORDER BY customer_id, day",
            COLUMNS.join(", ")
        ));
        let mut query = sqlx::query(&sql).bind(since);
        if let Some(instance) = instance {
            query = query.bind(instance);
        }
        let rows = query.fetch_all(&mut *self.db.reader().await?).await?;
        Ok(rows
            .iter()
            .map(|r| {
                let n = |i: usize| r.get::<i64, _>(i + 2).max(0) as u64;
                UsageRow {
                    instance: r.get(0),
                    day: r.get(1),
                    usage: DayUsage {
                        cpu_us: n(0),
                        wait_us: n(1),
                        calls: CallsByOutcome { ok: n(2), error: n(3), deadline: n(4), cpu: n(5), memory: n(6), trap: n(7), fault: n(8) },
                        outbound_requests: n(9),
                        outbound_bytes: n(10),
                        rows_written: n(11),
                        storage_bytes: n(12),
                    },
                }
            })
            .collect())
    }

    /// Forgets the books of days before `day`.
    pub async fn prune_extension_usage(&self, before_day: &str) -> StoreResult<()> {
        sqlx::query(&self.db.sql("DELETE FROM extension_usage WHERE day < ?"))
            .bind(before_day)
            .execute(&mut *self.db.writer().await?)
            .await?;
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::store::Backend;

    #[tokio::test]
    async fn nodes_add_to_one_line_a_day_and_storage_keeps_the_largest() {
        let dir = tempfile::tempdir().unwrap();
        let control = ControlDb::open(&Backend::Sqlite { data_dir: dir.path().into() }).await.unwrap();
        let one = DayUsage {
            cpu_us: 10,
            calls: CallsByOutcome { ok: 2, cpu: 1, ..Default::default() },
            storage_bytes: 500,
            ..Default::default()
        };
        let other = DayUsage { cpu_us: 5, rows_written: 3, storage_bytes: 400, ..Default::default() };
        control.add_extension_usage("a", "2026-12-07", &one).await.unwrap();
        control.add_extension_usage("a", "2026-12-07", &other).await.unwrap();
        control.add_extension_usage("a", "2026-12-08", &other).await.unwrap();
        control.add_extension_usage("b", "2026-12-08", &one).await.unwrap();
        let mut sum = one.clone();
        sum.add(&other);
        let rows = control.extension_usage(Some("a"), "2026-12-01").await.unwrap();
        assert_eq!(rows.len(), 2);
        assert_eq!((rows[0].day.as_str(), &rows[0].usage), ("2026-12-07", &sum));
        assert_eq!(rows[0].usage.storage_bytes, 500, "the largest measured, not a sum");
        assert_eq!(control.extension_usage(None, "2026-12-08").await.unwrap().len(), 2, "both instances from the 8th");
        control.prune_extension_usage("2026-12-08").await.unwrap();
        assert_eq!(control.extension_usage(Some("a"), "2000-01-01").await.unwrap().len(), 1);
    }
}

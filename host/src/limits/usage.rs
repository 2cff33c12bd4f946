//! What each instance's extensions use, per UTC day: counted on this node as executions end and
//! added to the control plane's books (`store::usage`) every few seconds and when the server
//! stops, as the daily call counts are (`daily.rs`). An execution adds to its instance's
//! `UsageCount` with a few atomic additions on a line of its own; only the flush takes a lock.
//! A crash loses what was not flushed: at most the last interval's worth.
//!
//! An instance's storage is measured apart (`ops::usage`), at most every few minutes, and kept
//! as the day's largest.

use std::collections::HashMap;
use std::sync::atomic::{AtomicU64, Ordering::Relaxed};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use chrono::Utc;

use crate::store::usage::{CallsByOutcome, DayUsage};
use crate::store::{ControlDb, StoreResult};

/// How long the books keep a day: over a year, for the operator's invoices and their questions.
pub const KEPT_DAYS: u64 = 400;

/// One execution's part of its instance's usage.
#[derive(Debug, Clone, Copy, Default)]
pub struct Spent {
    /// Its outcome's place in `runtime::outcome::Outcome::ALL` (ok, error, deadline, cpu,
    /// memory, trap, fault).
    pub outcome: usize,
    pub cpu_us: u64,
    pub wait_us: u64,
    pub outbound_requests: u64,
    pub outbound_bytes: u64,
    pub rows_written: u64,
}

/// One instance's usage on this node since the last flush.
#[derive(Default)]
#[repr(align(128))]
pub struct UsageCount {
    cpu_us: AtomicU64,
    wait_us: AtomicU64,
    calls: [AtomicU64; 7],
    outbound_requests: AtomicU64,
    outbound_bytes: AtomicU64,
    rows_written: AtomicU64,
}

impl UsageCount {
    pub fn add(&self, spent: &Spent) {
        self.cpu_us.fetch_add(spent.cpu_us, Relaxed);
        self.wait_us.fetch_add(spent.wait_us, Relaxed);
        self.calls[spent.outcome.min(6)].fetch_add(1, Relaxed);
        if spent.outbound_requests > 0 {
            self.outbound_requests.fetch_add(spent.outbound_requests, Relaxed);
            self.outbound_bytes.fetch_add(spent.outbound_bytes, Relaxed);
        }
        if spent.rows_written > 0 {
            self.rows_written.fetch_add(spent.rows_written, Relaxed);
        }
    }

    /// Takes what was counted (each counter back to 0).
    fn take(&self) -> DayUsage {
        let c = |n: &AtomicU64| n.swap(0, Relaxed);
        DayUsage {
            cpu_us: c(&self.cpu_us),
            wait_us: c(&self.wait_us),
            calls: CallsByOutcome {
                ok: c(&self.calls[0]),
                error: c(&self.calls[1]),
                deadline: c(&self.calls[2]),
                cpu: c(&self.calls[3]),
                memory: c(&self.calls[4]),
                trap: c(&self.calls[5]),
                fault: c(&self.calls[6]),
            },
            outbound_requests: c(&self.outbound_requests),
            outbound_bytes: c(&self.outbound_bytes),
            rows_written: c(&self.rows_written),
            storage_bytes: 0,
        }
    }

    /// Gives back what a failed flush took.
    fn restore(&self, usage: &DayUsage) {
        let spent = [
            (&self.cpu_us, usage.cpu_us),
            (&self.wait_us, usage.wait_us),
            (&self.calls[0], usage.calls.ok),
            (&self.calls[1], usage.calls.error),
            (&self.calls[2], usage.calls.deadline),
            (&self.calls[3], usage.calls.cpu),
            (&self.calls[4], usage.calls.memory),
            (&self.calls[5], usage.calls.trap),
            (&self.calls[6], usage.calls.fault),
            (&self.outbound_requests, usage.outbound_requests),
            (&self.outbound_bytes, usage.outbound_bytes),
            (&self.rows_written, usage.rows_written),
        ];
        for (counter, n) in spent {
            counter.fetch_add(n, Relaxed);
        }
    }
}

/// This node's usage counts, by instance, and where they go.
pub struct UsageBooks {
    counts: Mutex<HashMap<String, Arc<UsageCount>>>,
    control: ControlDb,
    flushing: tokio::sync::Mutex<()>,
}

/// `YYYY-MM-DD` of the UTC day now.
pub fn today() -> String {
    Utc::now().date_naive().format("%Y-%m-%d").to_string()
}

/// How many days a reading of the books covers when it names no first day.
pub const DEFAULT_DAYS: u64 = 30;

/// The first day of a reading of the books: `since` (`YYYY-MM-DD`) as given, or the last
/// `DEFAULT_DAYS` days; the error is for the reader.
pub fn since_day(since: Option<&str>) -> Result<String, String> {
    match since {
        None => Ok((Utc::now().date_naive() - chrono::Days::new(DEFAULT_DAYS - 1)).format("%Y-%m-%d").to_string()),
        Some(text) => chrono::NaiveDate::parse_from_str(text, "%Y-%m-%d")
            .map(|day| day.format("%Y-%m-%d").to_string())
            .map_err(|_| format!("'since' must be a day written YYYY-MM-DD, such as 2026-12-01, not '{text}'")),
    }
}

impl UsageBooks {
    pub fn new(control: ControlDb) -> UsageBooks {
        UsageBooks { counts: Mutex::default(), control, flushing: tokio::sync::Mutex::new(()) }
    }

    /// The count of `customer_id` (an instance keeps it: `InstanceCounts::usage`).
    pub fn count_of(&self, customer_id: &str) -> Arc<UsageCount> {
        super::count_of(&self.counts, customer_id)
    }

    pub fn control(&self) -> &ControlDb {
        &self.control
    }

    /// Adds what every instance used since the last flush to today's line of the books; what
    /// could not be added is kept for the next flush.
    pub async fn flush(&self) -> StoreResult<()> {
        let _one_at_a_time = self.flushing.lock().await;
        let counts: Vec<(String, Arc<UsageCount>)> =
            self.counts.lock().expect("usage lock").iter().map(|(id, c)| (id.clone(), Arc::clone(c))).collect();
        let day = today();
        let mut failed = None;
        for (id, count) in counts {
            let usage = count.take();
            if usage == DayUsage::default() {
                continue;
            }
            if let Err(e) = self.control.add_extension_usage(&id, &day, &usage).await {
                count.restore(&usage);
                failed = Some(e);
            }
        }
        failed.map_or(Ok(()), Err)
    }

    /// Flushes every `every` until the task is aborted; forgets days past `KEPT_DAYS` daily.
    pub fn spawn_flusher(self: &Arc<Self>, every: Duration) -> tokio::task::JoinHandle<()> {
        let books = Arc::clone(self);
        tokio::spawn(async move {
            let mut tick = tokio::time::interval(every);
            let mut pruned = None;
            loop {
                tick.tick().await;
                if let Err(e) = books.flush().await {
                    tracing::warn!(error = %e, "the usage books could not be written");
                }
                let day = Utc::now().date_naive();
                if pruned != Some(day) {
                    let oldest = (day - chrono::Days::new(KEPT_DAYS)).format("%Y-%m-%d").to_string();
                    if books.control.prune_extension_usage(&oldest).await.is_ok() {
                        pruned = Some(day);
                    }
                }
            }
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::store::Backend;

    #[tokio::test]
    async fn executions_add_up_and_a_flush_writes_them_once() {
        let dir = tempfile::tempdir().unwrap();
        let control = ControlDb::open(&Backend::Sqlite { data_dir: dir.path().into() }).await.unwrap();
        let books = UsageBooks::new(control.clone());
        let count = books.count_of("a");
        count.add(&Spent { outcome: 0, cpu_us: 100, wait_us: 5, ..Default::default() });
        count.add(&Spent { outcome: 3, cpu_us: 50, outbound_requests: 2, outbound_bytes: 10, rows_written: 4, ..Default::default() });
        books.flush().await.unwrap();
        books.flush().await.unwrap();
        let rows = control.extension_usage(Some("a"), "2000-01-01").await.unwrap();
        assert_eq!(rows.len(), 1);
        let usage = &rows[0].usage;
        assert_eq!((usage.cpu_us, usage.wait_us, usage.calls.ok, usage.calls.cpu), (150, 5, 1, 1));
        assert_eq!((usage.outbound_requests, usage.outbound_bytes, usage.rows_written), (2, 10, 4));
        assert_eq!(rows[0].day, today());
    }

    #[test]
    fn a_reading_starts_on_the_day_given_or_thirty_days_ago() {
        assert_eq!(since_day(Some("2026-12-01")), Ok("2026-12-01".to_string()));
        assert!(since_day(Some("yesterday")).unwrap_err().contains("YYYY-MM-DD"));
        assert!(since_day(Some("2026-13-01")).is_err());
        let default = since_day(None).unwrap();
        assert!(default < today() && default.len() == 10, "{default}");
    }
}

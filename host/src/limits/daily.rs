//! Daily call caps, counted per instance and UTC day.
//!
//! Each node counts calls in memory and adds them to the shared count in the control database
//! every second (and when it stops); a node's view is the shared total it last read plus what it
//! has not flushed yet. Counts survive restarts, and nodes sharing a database share the cap. The
//! price of not writing on every call: with K nodes, an instance can overshoot its cap by the
//! calls the other nodes admit within one flush interval, and a node that crashes loses up to a
//! second of counts.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use chrono::{DateTime, NaiveDate, Utc};

use crate::store::{ControlDb, StoreResult};

/// Where a caller stands against its daily cap (sent as headers on every answer).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Usage {
    pub limit: u64,
    pub remaining: u64,
    /// Seconds until the next UTC midnight, when the count starts again.
    pub reset_secs: u64,
}

struct Counter {
    day: NaiveDate,
    /// The shared total last read from the database.
    shared: u64,
    /// Calls admitted here and not yet added to the shared total.
    pending: u64,
    /// Calls being added to the shared total right now: still counted until it includes them.
    flushing: u64,
}

impl Counter {
    fn new(day: NaiveDate, shared: u64) -> Counter {
        Counter { day, shared, pending: 0, flushing: 0 }
    }

    fn used(&self) -> u64 {
        self.shared + self.flushing + self.pending
    }

    /// Counts one call if it is within `cap`; `Err` is the usage a refusal reports.
    fn count(&mut self, cap: u64, reset_secs: u64) -> Result<Usage, Usage> {
        let used = self.used();
        if used >= cap {
            return Err(Usage { limit: cap, remaining: 0, reset_secs });
        }
        self.pending += 1;
        Ok(Usage { limit: cap, remaining: cap - used - 1, reset_secs })
    }
}

pub struct DailyCounters {
    control: ControlDb,
    counters: Mutex<HashMap<String, Counter>>,
}

fn day_key(day: NaiveDate) -> String {
    day.format("%Y-%m-%d").to_string()
}

fn seconds_to_midnight(now: DateTime<Utc>) -> u64 {
    let next = now.date_naive().succ_opt().expect("a next day").and_hms_opt(0, 0, 0).expect("midnight").and_utc();
    // Rounded up: a client that waits this long must find the new day begun.
    let millis = (next - now).num_milliseconds().max(1) as u64;
    millis.div_ceil(1000)
}

impl DailyCounters {
    pub fn new(control: ControlDb) -> DailyCounters {
        DailyCounters { control, counters: Mutex::new(HashMap::new()) }
    }

    /// Counts one call of `customer_id` if it is within `cap`; `Err` carries the usage to report
    /// with the refusal (no remaining calls).
    pub async fn admit(&self, customer_id: &str, cap: u64, now_millis: i64) -> StoreResult<Result<Usage, Usage>> {
        let now = DateTime::from_timestamp_millis(now_millis).unwrap_or_else(Utc::now);
        let today = now.date_naive();
        let reset_secs = seconds_to_midnight(now);
        // The common case, one lock: a counter of today's.
        if let Some(c) = self.counters.lock().expect("counters lock").get_mut(customer_id).filter(|c| c.day == today) {
            return Ok(c.count(cap, reset_secs));
        }
        // Boxed: see `crate::cold`.
        crate::cold::boxed(self.admit_first_of_day(customer_id, cap, today, reset_secs)).await
    }

    /// `admit`'s first call of the day on this node: it starts from the shared count.
    async fn admit_first_of_day(
        &self,
        customer_id: &str,
        cap: u64,
        today: NaiveDate,
        reset_secs: u64,
    ) -> StoreResult<Result<Usage, Usage>> {
        let shared = self.control.daily_usage(customer_id, &day_key(today)).await?;
        let mut counters = self.counters.lock().expect("counters lock");
        let c = counters.entry(customer_id.to_string()).or_insert(Counter::new(today, shared));
        if c.day != today {
            // Calls of the previous day not flushed yet are dropped with it: the cap is per day.
            *c = Counter::new(today, shared);
        }
        Ok(c.count(cap, reset_secs))
    }

    /// The calls each instance used today as this node knows them (the shared total plus its own
    /// not yet added), for the operator's metrics.
    pub fn used_today(&self) -> Vec<(String, u64)> {
        let counters = self.counters.lock().expect("counters lock");
        counters.iter().map(|(customer_id, c)| (customer_id.clone(), c.used())).collect()
    }

    /// Adds every pending count to the shared totals and reads them back.
    pub async fn flush(&self) -> StoreResult<()> {
        let pending: Vec<(String, NaiveDate, u64)> = {
            let mut counters = self.counters.lock().expect("counters lock");
            counters
                .iter_mut()
                .filter(|(_, c)| c.pending > 0)
                .map(|(id, c)| {
                    let calls = std::mem::take(&mut c.pending);
                    c.flushing += calls;
                    (id.clone(), c.day, calls)
                })
                .collect()
        };
        for (id, day, calls) in pending {
            match self.control.add_daily_usage(&id, &day_key(day), calls).await {
                Ok(total) => {
                    let mut counters = self.counters.lock().expect("counters lock");
                    if let Some(c) = counters.get_mut(&id).filter(|c| c.day == day) {
                        c.shared = c.shared.max(total);
                        c.flushing -= calls;
                    }
                }
                Err(e) => {
                    // Keep the calls for the next flush rather than forget them.
                    let mut counters = self.counters.lock().expect("counters lock");
                    if let Some(c) = counters.get_mut(&id).filter(|c| c.day == day) {
                        c.flushing -= calls;
                        c.pending += calls;
                    }
                    return Err(e);
                }
            }
        }
        Ok(())
    }

    /// Flushes every `every` until the task is aborted; prunes counts older than a week daily.
    pub fn spawn_flusher(self: &Arc<Self>, every: Duration) -> tokio::task::JoinHandle<()> {
        let counters = Arc::clone(self);
        tokio::spawn(async move {
            let mut tick = tokio::time::interval(every);
            let mut last_prune: Option<NaiveDate> = None;
            loop {
                tick.tick().await;
                if let Err(e) = counters.flush().await {
                    tracing::warn!(error = %e, "daily usage flush failed");
                }
                let today = Utc::now().date_naive();
                if last_prune != Some(today) {
                    let week_ago = today - chrono::Days::new(7);
                    if counters.control.prune_daily_usage(&day_key(week_ago)).await.is_ok() {
                        last_prune = Some(today);
                    }
                }
            }
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reset_is_the_next_utc_midnight() {
        let t = DateTime::parse_from_rfc3339("2026-11-22T23:59:30Z").unwrap().with_timezone(&Utc);
        assert_eq!(seconds_to_midnight(t), 30);
        let t = DateTime::parse_from_rfc3339("2026-11-22T00:00:00Z").unwrap().with_timezone(&Utc);
        assert_eq!(seconds_to_midnight(t), 86_400);
        let t = DateTime::parse_from_rfc3339("2026-11-22T12:00:00.700Z").unwrap().with_timezone(&Utc);
        assert_eq!(seconds_to_midnight(t), 43_200, "never early");
    }

    #[tokio::test]
    async fn counts_are_capped_shared_and_start_again_each_day() {
        let dir = tempfile::tempdir().unwrap();
        let control = ControlDb::open(&crate::store::Backend::Sqlite { data_dir: dir.path().into() }).await.unwrap();
        let a = DailyCounters::new(control.clone());
        let b = DailyCounters::new(control.clone());
        let noon = DateTime::parse_from_rfc3339("2026-11-22T12:00:00Z").unwrap().timestamp_millis();
        assert_eq!(a.admit("x", 3, noon).await.unwrap().unwrap().remaining, 2);
        assert_eq!(a.admit("x", 3, noon).await.unwrap().unwrap().remaining, 1);
        a.flush().await.unwrap();
        // Another node (or a restart) starts from the shared count.
        assert_eq!(b.admit("x", 3, noon).await.unwrap().unwrap().remaining, 0);
        let refused = b.admit("x", 3, noon).await.unwrap().unwrap_err();
        assert_eq!(refused.remaining, 0);
        assert_eq!(refused.reset_secs, 12 * 3600);
        assert!(b.admit("y", 3, noon).await.unwrap().is_ok(), "other instances are unaffected");
        let tomorrow = noon + 86_400_000;
        assert_eq!(b.admit("x", 3, tomorrow).await.unwrap().unwrap().remaining, 2);
        // Every call awaits `admit`: the shared count's statement is boxed (`crate::cold`), so
        // the future every caller holds is a few words, not the statement's kilobytes.
        let admission = b.admit("x", 3, tomorrow);
        assert!(std::mem::size_of_val(&admission) <= 256, "{} bytes", std::mem::size_of_val(&admission));
    }
}

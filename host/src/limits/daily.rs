//! Daily call caps, counted per instance and UTC day.
//!
//! Each node counts calls in memory and adds them to the shared count in the control database
//! every second (and when it stops); a node's view is the shared total it last read plus what it
//! has not flushed yet. Counts survive restarts, and nodes sharing a database share the cap. The
//! price of not writing on every call: with K nodes, an instance can overshoot its cap by the
//! calls the other nodes admit within one flush interval, and a node that crashes loses up to a
//! second of counts.

use std::collections::HashMap;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use chrono::{DateTime, Datelike, NaiveDate, Utc};

use super::InstanceCounts;
use crate::store::{ControlDb, StoreResult};

/// Where a caller stands against its daily cap (sent as headers on every answer).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Usage {
    pub limit: u64,
    pub remaining: u64,
    /// Seconds until the next UTC midnight, when the count starts again.
    pub reset_secs: u64,
}

/// The bits of [`DailyCount::today`] that hold the calls; the day is above them.
const CALL_BITS: u32 = 44;
const CALLS: u64 = (1 << CALL_BITS) - 1;

/// A day as the count stores it: days since the first of January of year 1 (under 2^20 until
/// the year 2870).
fn day_number(day: NaiveDate) -> u64 {
    u64::try_from(day.num_days_from_ce()).unwrap_or(0)
}

/// One instance's calls of one day on this node: the shared total it last read plus the calls
/// it admitted since, which the flush adds to the shared total.
///
/// A call is counted with one compare-and-swap of one word holding both the day and the calls,
/// so that it is never counted on a day the count has left; what the flush keeps is under a lock
/// that only the flush and the first call of a day take. Aligned to a cache line of its own: the
/// calls of one instance write it from every core, and only they do.
#[derive(Default)]
#[repr(align(128))]
pub(super) struct DailyCount {
    /// `day << CALL_BITS | calls used`; day 0 (never counted) is no day.
    today: AtomicU64,
    flushed: Mutex<Flushed>,
}

/// The part of a day's calls already in the shared total: the calls `today` holds beyond it are
/// this node's still to add.
#[derive(Default)]
struct Flushed {
    day: u64,
    calls: u64,
}

impl DailyCount {
    /// Counts one call on `day` if it is within `cap` (`Err`: the usage a refusal reports);
    /// `None` when the count is of another day.
    fn count(&self, day: u64, cap: u64, reset_secs: u64) -> Option<Result<Usage, Usage>> {
        let counted = self.today.fetch_update(Ordering::Relaxed, Ordering::Relaxed, |word| {
            (word >> CALL_BITS == day && (word & CALLS) < cap).then_some(word + 1)
        });
        // The word as the call found it: counted, refused at the cap, or of another day.
        match counted {
            Ok(word) => Some(Ok(Usage { limit: cap, remaining: cap - (word & CALLS) - 1, reset_secs })),
            Err(word) if word >> CALL_BITS == day => Some(Err(Usage { limit: cap, remaining: 0, reset_secs })),
            Err(_) => None,
        }
    }

    /// Starts `day` from the shared total `shared`, unless a call did meanwhile. Calls of the
    /// previous day not flushed yet are dropped with it: the cap is per day.
    fn start_day(&self, day: u64, shared: u64) {
        let mut flushed = self.flushed.lock().expect("daily count lock");
        if self.today.load(Ordering::Relaxed) >> CALL_BITS != day {
            *flushed = Flushed { day, calls: shared };
            self.today.store((day << CALL_BITS) | shared.min(CALLS), Ordering::Relaxed);
        }
    }

    /// The calls used on the count's day, as this node knows them.
    fn used(&self) -> u64 {
        self.today.load(Ordering::Relaxed) & CALLS
    }
}

pub struct DailyCounters {
    control: ControlDb,
    /// Each instance's count, made at its first call and kept for the process's life (about
    /// 300 bytes an instance that ever called, with its key).
    counters: Mutex<HashMap<String, Arc<DailyCount>>>,
    /// One flush at a time (the periodic one and the one at a stop): each adds what the other
    /// has not.
    flushing: tokio::sync::Mutex<()>,
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
        DailyCounters { control, counters: Mutex::new(HashMap::new()), flushing: tokio::sync::Mutex::new(()) }
    }

    /// Counts one call of `customer_id` if it is within `cap`; `Err` carries the usage to report
    /// with the refusal (no remaining calls). `counts` are the open instance's own
    /// (`Tenant::counts`), made with these counters.
    pub async fn admit(&self, customer_id: &str, counts: &InstanceCounts, cap: u64, now_millis: i64) -> StoreResult<Result<Usage, Usage>> {
        let now = DateTime::from_timestamp_millis(now_millis).unwrap_or_else(Utc::now);
        let today = now.date_naive();
        let reset_secs = seconds_to_midnight(now);
        let count = counts.today.get_or_init(|| super::count_of(&self.counters, customer_id));
        // The common case: a count of today's.
        if let Some(counted) = count.count(day_number(today), cap, reset_secs) {
            return Ok(counted);
        }
        // Boxed: see `crate::cold`.
        crate::cold::boxed(self.admit_first_of_day(customer_id, count, cap, today, reset_secs)).await
    }

    /// `admit`'s first call of the day on this node: it starts from the shared count.
    async fn admit_first_of_day(
        &self,
        customer_id: &str,
        count: &DailyCount,
        cap: u64,
        today: NaiveDate,
        reset_secs: u64,
    ) -> StoreResult<Result<Usage, Usage>> {
        let shared = self.control.daily_usage(customer_id, &day_key(today)).await?;
        let day = day_number(today);
        count.start_day(day, shared);
        // Another call may have started a later day meanwhile (a clock moved by a test): this
        // call is then refused as of that day's count rather than counted on a day gone.
        Ok(count.count(day, cap, reset_secs).unwrap_or(Err(Usage { limit: cap, remaining: 0, reset_secs })))
    }

    /// The calls each instance used today as this node knows them (the shared total plus its own
    /// not yet added), for the operator's metrics.
    pub fn used_today(&self) -> Vec<(String, u64)> {
        let counters = self.counters.lock().expect("counters lock");
        counters.iter().map(|(customer_id, c)| (customer_id.clone(), c.used())).collect()
    }

    /// Adds every count's calls not yet added to the shared totals, and reads the totals back
    /// (the calls of the other nodes). A count whose addition fails keeps its calls for the next
    /// flush.
    pub async fn flush(&self) -> StoreResult<()> {
        let _one_at_a_time = self.flushing.lock().await;
        let counts: Vec<(String, Arc<DailyCount>)> =
            self.counters.lock().expect("counters lock").iter().map(|(id, c)| (id.clone(), Arc::clone(c))).collect();
        let mut failed = None;
        for (id, count) in counts {
            let (day, calls) = {
                let flushed = count.flushed.lock().expect("daily count lock");
                let word = count.today.load(Ordering::Relaxed);
                if word >> CALL_BITS != flushed.day {
                    continue;
                }
                (flushed.day, (word & CALLS).saturating_sub(flushed.calls))
            };
            if calls == 0 {
                continue;
            }
            let Some(date) = NaiveDate::from_num_days_from_ce_opt(day as i32) else { continue };
            match self.control.add_daily_usage(&id, &day_key(date), calls).await {
                Ok(total) => {
                    let flushed = &mut *count.flushed.lock().expect("daily count lock");
                    if flushed.day == day {
                        // What the total holds beyond this node's calls: the other nodes'.
                        let others = total.saturating_sub(flushed.calls + calls);
                        flushed.calls = (flushed.calls + calls).max(total);
                        if others > 0 {
                            let _ = count.today.fetch_update(Ordering::Relaxed, Ordering::Relaxed, |word| {
                                (word >> CALL_BITS == day).then(|| word + others.min(CALLS - (word & CALLS)))
                            });
                        }
                    }
                }
                // Nothing moved: the calls are still beyond what was added, for the next flush.
                Err(e) => failed = Some(e),
            }
        }
        failed.map_or(Ok(()), Err)
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
        // Each node's open instance has its own handles.
        let (ax, bx, by) = (InstanceCounts::default(), InstanceCounts::default(), InstanceCounts::default());
        let noon = DateTime::parse_from_rfc3339("2026-11-22T12:00:00Z").unwrap().timestamp_millis();
        assert_eq!(a.admit("x", &ax, 3, noon).await.unwrap().unwrap().remaining, 2);
        assert_eq!(a.admit("x", &ax, 3, noon).await.unwrap().unwrap().remaining, 1);
        a.flush().await.unwrap();
        // Another node (or a restart) starts from the shared count.
        assert_eq!(b.admit("x", &bx, 3, noon).await.unwrap().unwrap().remaining, 0);
        let refused = b.admit("x", &bx, 3, noon).await.unwrap().unwrap_err();
        assert_eq!(refused.remaining, 0);
        assert_eq!(refused.reset_secs, 12 * 3600);
        assert!(b.admit("y", &by, 3, noon).await.unwrap().is_ok(), "other instances are unaffected");
        let tomorrow = noon + 86_400_000;
        assert_eq!(b.admit("x", &bx, 3, tomorrow).await.unwrap().unwrap().remaining, 2);
        // Every call awaits `admit`: the shared count's statement is boxed (`crate::cold`), so
        // the future every caller holds is a few words, not the statement's kilobytes.
        let admission = b.admit("x", &bx, 3, tomorrow);
        assert!(std::mem::size_of_val(&admission) <= 256, "{} bytes", std::mem::size_of_val(&admission));
    }

    #[tokio::test]
    async fn a_flush_adds_a_nodes_calls_once_and_learns_the_others() {
        let dir = tempfile::tempdir().unwrap();
        let control = ControlDb::open(&crate::store::Backend::Sqlite { data_dir: dir.path().into() }).await.unwrap();
        let (a, b) = (DailyCounters::new(control.clone()), DailyCounters::new(control.clone()));
        let (ax, bx) = (InstanceCounts::default(), InstanceCounts::default());
        let noon = DateTime::parse_from_rfc3339("2026-11-22T12:00:00Z").unwrap().timestamp_millis();
        for _ in 0..2 {
            a.admit("x", &ax, 10, noon).await.unwrap().unwrap();
        }
        for _ in 0..3 {
            b.admit("x", &bx, 10, noon).await.unwrap().unwrap();
        }
        a.flush().await.unwrap();
        b.flush().await.unwrap();
        assert_eq!(b.used_today(), vec![("x".to_string(), 5)], "b learnt a's calls");
        // A node reads the total back when it adds calls of its own (an idle count costs the
        // control plane nothing).
        a.flush().await.unwrap();
        assert_eq!(a.used_today(), vec![("x".to_string(), 2)]);
        assert_eq!(a.admit("x", &ax, 10, noon).await.unwrap().unwrap().remaining, 7, "as far as a knows");
        a.flush().await.unwrap();
        a.flush().await.unwrap();
        assert_eq!(control.daily_usage("x", "2026-11-22").await.unwrap(), 6, "each call added once");
        assert_eq!(a.used_today(), vec![("x".to_string(), 6)], "a learnt b's calls");
        assert_eq!(a.admit("x", &ax, 10, noon).await.unwrap().unwrap().remaining, 3);
    }

    /// Calls counted from many threads at once: exactly the cap is admitted.
    #[test]
    fn the_cap_holds_across_threads() {
        let count = DailyCount::default();
        let day = day_number(NaiveDate::from_ymd_opt(2026, 11, 22).unwrap());
        count.start_day(day, 100);
        let admitted = AtomicU64::new(0);
        std::thread::scope(|scope| {
            for _ in 0..4 {
                scope.spawn(|| {
                    for _ in 0..1000 {
                        if let Some(Ok(_)) = count.count(day, 2600, 60) {
                            admitted.fetch_add(1, Ordering::Relaxed);
                        }
                    }
                });
            }
        });
        assert_eq!(admitted.load(Ordering::Relaxed), 2500, "the cap less the shared count");
        assert_eq!(count.used(), 2600);
        assert!(count.count(day + 1, 2600, 60).is_none(), "another day is not this count's");
    }
}

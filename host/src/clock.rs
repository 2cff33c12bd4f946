//! Time as the server sees it, injectable so that tests check expiry without waiting.

use std::sync::atomic::{AtomicI64, Ordering};

/// Milliseconds since the Unix epoch (UTC).
pub trait Clock: Send + Sync {
    fn now_millis(&self) -> i64;

    /// Now, as the calendar time (UTC) that events and messages are stamped with.
    fn now_utc(&self) -> chrono::NaiveDateTime {
        utc_at(self.now_millis())
    }
}

/// Milliseconds since the Unix epoch as calendar time (UTC); the epoch for a value out of range.
pub fn utc_at(millis: i64) -> chrono::NaiveDateTime {
    chrono::DateTime::from_timestamp_millis(millis).unwrap_or_default().naive_utc()
}

/// The system clock.
pub struct SystemClock;

impl Clock for SystemClock {
    fn now_millis(&self) -> i64 {
        chrono::Utc::now().timestamp_millis()
    }
}

/// A clock that moves only when told to (tests).
pub struct ManualClock(AtomicI64);

impl ManualClock {
    pub fn new(start_millis: i64) -> ManualClock {
        ManualClock(AtomicI64::new(start_millis))
    }

    pub fn advance_secs(&self, secs: i64) {
        self.0.fetch_add(secs * 1000, Ordering::SeqCst);
    }
}

impl Clock for ManualClock {
    fn now_millis(&self) -> i64 {
        self.0.load(Ordering::SeqCst)
    }
}

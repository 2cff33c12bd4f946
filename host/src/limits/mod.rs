//! The spec's limits: calls in flight per instance, daily call caps, and rate smoothing (per
//! credential on the API, per client address on the token and open endpoints), and the largest
//! body (the HTTP layer enforces it; the queue applies it to a stored answer too).

mod concurrency;
mod daily;
pub mod rate;

use std::sync::Arc;

pub use concurrency::{CallSlot, CallsInFlightScope, ConcurrencyLimiter};
pub use daily::{DailyCounters, Usage};
pub use rate::RateSettings;

/// The largest request body accepted (spec: 20 MB).
pub const MAX_PAYLOAD_BYTES: usize = 20 * 1024 * 1024;

/// At most 20 calls in flight per instance (spec).
pub const CONCURRENT_CALLS_PER_INSTANCE: usize = 20;

/// The limits a server enforces.
pub struct Limits {
    pub concurrency: ConcurrencyLimiter,
    pub daily: Arc<DailyCounters>,
    pub rate: RateSettings,
}

//! The spec's limits: calls in flight per instance, daily call caps, and rate smoothing (per
//! credential on the API, per client address on the token and open endpoints), and the largest
//! body (the HTTP layer enforces it; the queue applies it to a stored answer too).

mod concurrency;
mod daily;
pub mod rate;
pub mod usage;

use std::sync::Arc;

pub use concurrency::{CallSlot, CallsInFlightScope, ConcurrencyLimiter};
pub use daily::{DailyCounters, Usage};
pub use rate::RateSettings;

/// An open instance's handles on this node's counts of it (its calls in flight, its calls
/// today), each found in its limiter's map at the instance's first call and kept with the
/// instance (`Tenant::counts`): a call then counts itself with an atomic operation or two on
/// its own instance's counts, without a lock or a lookup shared by every instance's calls. The
/// counts themselves stay in the limiters' maps for the process's life, so an instance put to
/// sleep and opened again finds the same ones (calls still in flight from before included).
#[derive(Default)]
pub struct InstanceCounts {
    in_flight: std::sync::OnceLock<Arc<concurrency::InFlight>>,
    today: std::sync::OnceLock<Arc<daily::DailyCount>>,
    usage: std::sync::OnceLock<Arc<usage::UsageCount>>,
}

impl InstanceCounts {
    /// The instance's count of what its extensions use (`usage.rs`), from `books` at the first
    /// execution.
    pub fn usage(&self, books: &usage::UsageBooks, customer_id: &str) -> &usage::UsageCount {
        self.usage.get_or_init(|| books.count_of(customer_id))
    }
}

/// `customer_id`'s count in a limiter's map, made at its first call.
fn count_of<C: Default>(counts: &std::sync::Mutex<std::collections::HashMap<String, Arc<C>>>, customer_id: &str) -> Arc<C> {
    Arc::clone(counts.lock().expect("counts lock").entry(customer_id.to_string()).or_default())
}

impl std::fmt::Debug for InstanceCounts {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("InstanceCounts").finish_non_exhaustive()
    }
}

/// The largest request body accepted (spec: 20 MB).
pub const MAX_PAYLOAD_BYTES: usize = 20 * 1024 * 1024;

/// At most 20 calls in flight per instance (spec).
pub const CONCURRENT_CALLS_PER_INSTANCE: usize = 20;

/// The limits a server enforces.
pub struct Limits {
    pub concurrency: ConcurrencyLimiter,
    pub daily: Arc<DailyCounters>,
    pub rate: RateSettings,
    /// What each instance's extensions use (`usage.rs`).
    pub usage: Arc<usage::UsageBooks>,
}

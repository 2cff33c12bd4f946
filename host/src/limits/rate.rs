//! Rate smoothing settings (operator-configurable). The token endpoint (and the open extensions
//! endpoint) smooth per client address, against credential stuffing and floods. The API can also
//! smooth per credential, but that is off by default: the specification bounds a client by its
//! calls in flight (20 per instance) and its daily cap, and any fixed rate refuses a client that
//! stays within both (a client making one call after another on loopback makes thousands a
//! second; one using all 20 slots more still). An operator who wants one integration not to eat
//! its neighbours' share turns it on with `--rate-per-credential`. The layers themselves are built
//! in `http::guard` with tower-governor.

use std::time::Duration;

/// Sustained rates (calls per second) and bursts. A per-credential rate of 0 means no smoothing
/// per credential (the default).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RateSettings {
    pub per_credential_per_second: u32,
    pub per_credential_burst: u32,
    pub per_address_per_second: u32,
    pub per_address_burst: u32,
}

impl RateSettings {
    /// Whether calls are smoothed per credential at all.
    pub fn smooths_credentials(&self) -> bool {
        self.per_credential_per_second > 0
    }
}

impl Default for RateSettings {
    fn default() -> RateSettings {
        RateSettings { per_credential_per_second: 0, per_credential_burst: 200, per_address_per_second: 10, per_address_burst: 30 }
    }
}

/// The interval after which one call of the quota comes back, for `per_second` calls a second.
pub fn replenish_period(per_second: u32) -> Duration {
    Duration::from_nanos(1_000_000_000 / u64::from(per_second.max(1)))
}

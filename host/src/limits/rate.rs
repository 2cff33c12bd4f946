//! Rate smoothing settings (operator-configurable). The API smooths per credential, so a burst
//! from one integration does not eat its neighbours' share of an instance; the token endpoint
//! (and the open extensions endpoint) smooth per client address, against credential stuffing and
//! floods. The layers themselves are built in `http::guard` with tower-governor.

use std::time::Duration;

/// Sustained rates (calls per second) and bursts.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RateSettings {
    pub per_credential_per_second: u32,
    pub per_credential_burst: u32,
    pub per_address_per_second: u32,
    pub per_address_burst: u32,
}

impl Default for RateSettings {
    fn default() -> RateSettings {
        RateSettings { per_credential_per_second: 100, per_credential_burst: 200, per_address_per_second: 10, per_address_burst: 30 }
    }
}

/// The interval after which one call of the quota comes back, for `per_second` calls a second.
pub fn replenish_period(per_second: u32) -> Duration {
    Duration::from_nanos(1_000_000_000 / u64::from(per_second.max(1)))
}

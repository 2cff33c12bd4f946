//! Global Data values of the instance (`herald:platform/global-data`), as text like the REST
//! API's `VALUE`.

use crate::bindings::platform::herald::platform as wit;
use crate::record::Error;

/// The value of `name`; `None` when it is not set.
///
/// ```no_run
/// let campaign = herald_sdk::global_data::get("CAMPAIGN_NAME")?.unwrap_or_default();
/// # Ok::<(), herald_sdk::Error>(())
/// ```
pub fn get(name: &str) -> Result<Option<String>, Error> {
    wit::global_data::get(name)
}

/// Sets `name`, which the instance must define; the text must fit the item's type.
///
/// ```no_run
/// herald_sdk::global_data::set("CAMPAIGN_NAME", "Winter sale")?;
/// # Ok::<(), herald_sdk::Error>(())
/// ```
pub fn set(name: &str, value: &str) -> Result<(), Error> {
    wit::global_data::set(name, value)
}

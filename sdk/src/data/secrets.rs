//! The instance's secrets (set with `PUT /extensions/secrets/{name}` or `herald secrets set`),
//! for authheader extensions only (`herald:platform/secrets`): an upload of another type that
//! calls this is refused. Herald keeps the values out of the execution's log and output. An
//! http extension that checks a caller's signature uses [`crate::signatures`] instead, which
//! never hands it the secret.

use crate::record::Error;

/// The value of secret `name`; `None` when it is not set.
///
/// ```no_run
/// let key = herald_sdk::secrets::get("CRM_API_KEY")?.unwrap_or_default();
/// # Ok::<(), herald_sdk::Error>(())
/// ```
pub fn get(name: &str) -> Result<Option<String>, Error> {
    crate::bindings::authheader_world::herald::platform::secrets::get(name)
}

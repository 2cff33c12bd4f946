//! The contextual data of the call that triggered this execution (`herald:platform/context`):
//! the body `achieveEvent` was given, for the runs that call started; an http call carries none.

use crate::bindings::platform::herald::platform as wit;

/// The contextual data (JSON), if any.
///
/// ```no_run
/// let city = herald_sdk::context().and_then(|c| c["SIGNUP"]["CITY"].as_str().map(String::from));
/// ```
pub fn context() -> Option<serde_json::Value> {
    wit::context::data().and_then(|text| serde_json::from_str(&text).ok())
}

//! Lines kept with the execution for the instance's operator (`herald:platform/log`; read with
//! `GET /extensions/logs/{extensionId}`).
//!
//! ```no_run
//! herald_sdk::log::info("order 1001 stored");
//! herald_sdk::log::warn("the shop sent no city");
//! ```

use crate::bindings::platform::herald::platform::log::{log, Level};

/// A debug line.
pub fn debug(message: &str) {
    log(Level::Debug, message)
}

/// An informative line.
pub fn info(message: &str) {
    log(Level::Info, message)
}

/// A warning.
pub fn warn(message: &str) {
    log(Level::Warn, message)
}

/// An error.
pub fn error(message: &str) {
    log(Level::Error, message)
}

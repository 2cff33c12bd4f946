//! The other extension types (step, condition, monitor, authheader): a trait each, exported with
//! its macro. What calls them (flows, schedules, outgoing calls) is Herald's business; the worlds
//! are in `wit/extensions.wit`.
//!
//! ```no_run
//! use herald_sdk::extensions::Condition;
//! use herald_sdk::Record;
//!
//! struct Adult;
//!
//! impl Condition for Adult {
//!     fn evaluate(recipient: Record, _context: Option<serde_json::Value>) -> Result<bool, String> {
//!         Ok(recipient.number("AGE").is_some_and(|age| age >= 18.0))
//!     }
//! }
//!
//! herald_sdk::condition_extension!(Adult);
//! ```

use crate::Record;

/// A step of a flow: acts for one recipient. An error stops the flow for this recipient.
pub trait Step {
    /// Runs for `recipient` (its Person Data); `context` is the triggering call's data, if any.
    fn run(recipient: Record, context: Option<serde_json::Value>) -> Result<(), String>;
}

/// A condition of a flow: whether the flow goes on for this recipient.
pub trait Condition {
    /// Decides for `recipient`; `context` is the triggering call's data, if any.
    fn evaluate(recipient: Record, context: Option<serde_json::Value>) -> Result<bool, String>;
}

/// What a monitor reports.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Health {
    /// Whether what it watches is well.
    pub healthy: bool,
    /// What it found.
    pub message: String,
}

impl Health {
    /// All is well.
    pub fn ok(message: impl Into<String>) -> Health {
        Health { healthy: true, message: message.into() }
    }

    /// Something is wrong.
    pub fn failing(message: impl Into<String>) -> Health {
        Health { healthy: false, message: message.into() }
    }
}

/// A monitor: runs on a schedule and reports.
pub trait Monitor {
    /// Checks and reports.
    fn check() -> Health;
}

/// Computes the authorization headers of the outgoing calls that the instance's other extensions
/// make to the hosts it is bound to (`bound_hosts` in [`config!`](crate::config)).
pub trait AuthHeader {
    /// The headers for a call to `host`; an error fails that call (its caller sees the error).
    fn headers(host: &str, method: &str, path_with_query: &str) -> Result<Grant, String>;
}

/// Headers an [`AuthHeader`] made, and how long Herald may add them to every call to the same host
/// without asking again.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Grant {
    /// (name, value) pairs, set on the request (replacing the caller's own of that name).
    pub headers: Vec<(String, String)>,
    /// Seconds they stay good (at most a day is honoured); `None`: asked again for every call.
    pub max_age_seconds: Option<u32>,
}

impl Grant {
    /// Headers for this one call (a signature of its method and path).
    pub fn once(headers: Vec<(String, String)>) -> Grant {
        Grant { headers, max_age_seconds: None }
    }

    /// Headers good for `seconds` (a token's lifetime).
    pub fn for_seconds(headers: Vec<(String, String)>, seconds: u32) -> Grant {
        Grant { headers, max_age_seconds: Some(seconds) }
    }

    /// `Authorization: Bearer <token>`, good for `seconds`.
    pub fn bearer(token: &str, seconds: u32) -> Grant {
        Grant::for_seconds(vec![("authorization".into(), format!("Bearer {token}"))], seconds)
    }
}

/// The contextual data as a type of the extension's own (its Context Parameter Schema's shape);
/// `Ok(None)` when the run has none.
///
/// ```
/// #[derive(serde::Deserialize)]
/// struct Signup { city: String }
///
/// let context = Some(serde_json::json!({"city": "Lyon"}));
/// let signup: Option<Signup> = herald_sdk::extensions::context_as(&context).unwrap();
/// assert_eq!(signup.unwrap().city, "Lyon");
/// ```
pub fn context_as<T: serde::de::DeserializeOwned>(context: &Option<serde_json::Value>) -> Result<Option<T>, String> {
    match context {
        Some(value) => serde_json::from_value(value.clone()).map(Some).map_err(|e| format!("the contextual data does not fit: {e}")),
        None => Ok(None),
    }
}

/// The context text as JSON (used by the export macros).
#[doc(hidden)]
pub fn parse_context(context: Option<String>) -> Option<serde_json::Value> {
    context.and_then(|text| serde_json::from_str(&text).ok())
}

/// Exports a [`Step`].
#[macro_export]
macro_rules! step_extension {
    ($ty:ty) => {
        struct __HeraldStep;

        impl $crate::bindings::step_world::exports::herald::platform::step::Guest for __HeraldStep {
            fn run(
                recipient: ::std::vec::Vec<$crate::Field>,
                context: ::std::option::Option<::std::string::String>,
            ) -> ::std::result::Result<(), ::std::string::String> {
                <$ty as $crate::extensions::Step>::run($crate::Record::from(recipient), $crate::extensions::parse_context(context))
            }
        }

        $crate::bindings::step_world::__export_step_world!(__HeraldStep with_types_in $crate::bindings::step_world);
    };
}

/// Exports a [`Condition`].
#[macro_export]
macro_rules! condition_extension {
    ($ty:ty) => {
        struct __HeraldCondition;

        impl $crate::bindings::condition_world::exports::herald::platform::condition::Guest for __HeraldCondition {
            fn evaluate(
                recipient: ::std::vec::Vec<$crate::Field>,
                context: ::std::option::Option<::std::string::String>,
            ) -> ::std::result::Result<bool, ::std::string::String> {
                <$ty as $crate::extensions::Condition>::evaluate($crate::Record::from(recipient), $crate::extensions::parse_context(context))
            }
        }

        $crate::bindings::condition_world::__export_condition_world!(__HeraldCondition with_types_in $crate::bindings::condition_world);
    };
}

/// Exports a [`Monitor`].
#[macro_export]
macro_rules! monitor_extension {
    ($ty:ty) => {
        struct __HeraldMonitor;

        impl $crate::bindings::monitor_world::exports::herald::platform::monitor::Guest for __HeraldMonitor {
            fn check() -> $crate::bindings::monitor_world::exports::herald::platform::monitor::Report {
                let health = <$ty as $crate::extensions::Monitor>::check();
                $crate::bindings::monitor_world::exports::herald::platform::monitor::Report { healthy: health.healthy, message: health.message }
            }
        }

        $crate::bindings::monitor_world::__export_monitor_world!(__HeraldMonitor with_types_in $crate::bindings::monitor_world);
    };
}

/// Exports an [`AuthHeader`].
#[macro_export]
macro_rules! authheader_extension {
    ($ty:ty) => {
        struct __HeraldAuthHeader;

        impl $crate::bindings::authheader_world::exports::herald::platform::authheader::Guest for __HeraldAuthHeader {
            fn headers(
                host: ::std::string::String,
                method: ::std::string::String,
                path_with_query: ::std::string::String,
            ) -> ::std::result::Result<
                $crate::bindings::authheader_world::exports::herald::platform::authheader::Grant,
                ::std::string::String,
            > {
                use $crate::bindings::authheader_world::exports::herald::platform::authheader::{Grant, Header};
                let grant = <$ty as $crate::extensions::AuthHeader>::headers(&host, &method, &path_with_query)?;
                Ok(Grant {
                    headers: grant.headers.into_iter().map(|(name, value)| Header { name, value }).collect(),
                    max_age_seconds: grant.max_age_seconds,
                })
            }
        }

        $crate::bindings::authheader_world::__export_authheader_world!(__HeraldAuthHeader with_types_in $crate::bindings::authheader_world);
    };
}

//! Write Herald extensions in Rust.
//!
//! An extension is a WebAssembly component built for `wasm32-wasip2`
//! (`crate-type = ["cdylib"]`, `cargo build --release --target wasm32-wasip2`) and uploaded with
//! `POST /assets/extensions`. This crate gives it:
//!
//! - [`Record`] and [`Value`]: typed records, as the platform's interfaces take and give them;
//! - [`recipients`], [`tables`], [`global_data`], [`context()`] and [`log`]: the data of the
//!   instance the call was made for (and no other);
//! - an export macro per extension type: [`http_extension!`] (the standard
//!   `wasi:http/incoming-handler`), [`step_extension!`], [`condition_extension!`],
//!   [`monitor_extension!`], [`authheader_extension!`];
//! - [`secrets`]: the instance's secrets, for authheader extensions (the only type that may read
//!   them);
//! - [`client`]: outbound HTTP calls;
//! - [`config!`]: the extension's configuration (open, asynchronous, allowed hosts, timeout, and
//!   the bound hosts of an authheader, the schedule and alert of a monitor).
//!
//! An open webhook that stores who called:
//!
//! ```no_run
//! use herald_sdk::http::{Handler, Request, Response};
//! use herald_sdk::{recipients, Record};
//!
//! herald_sdk::config!(open: true);
//!
//! struct Signup;
//!
//! impl Handler for Signup {
//!     fn handle(request: Request) -> Response {
//!         let Ok(payload) = request.json() else { return Response::text(400, "JSON expected") };
//!         let person = Record::new().with("EMAIL", payload["email"].as_str().unwrap_or_default());
//!         match recipients::upsert(person) {
//!             Ok(stored) => Response::json(200, &stored.to_json()),
//!             Err(e) => Response::text(400, &e.to_string()),
//!         }
//!     }
//! }
//!
//! herald_sdk::http_extension!(Signup);
//! ```
#![deny(missing_docs)]

#[doc(hidden)]
pub mod bindings;
pub mod client;
pub mod config;
mod data;
pub mod extensions;
pub mod http;
mod record;
pub mod signatures;

pub use data::{context, global_data, log, recipients, secrets, tables};
pub use record::{Error, Field, Record, Value};

/// The WASI 0.2 bindings the http export uses (re-exported for the macros and for extensions
/// that want the raw `wasi:http` types).
pub use wasip2;

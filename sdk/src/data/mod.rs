//! The instance's data, as the platform's interfaces give it, one module per interface: always
//! the instance the call was made for (Herald takes it from the route or the credential; nothing
//! here can name another). Each function imports its interface only when the extension uses it,
//! so an open extension that never reads recipients does not import `recipients-read` (Herald
//! refuses that import for open extensions).

mod context;
pub mod global_data;
pub mod log;
pub mod recipients;
pub mod secrets;
pub mod tables;

pub use context::context;

//! Herald: a marketing-automation platform server. See ARCHITECTURE.md for the map.

pub mod assets;
pub mod auth;
pub mod cli;
pub mod clock;
pub mod cold;
pub mod commands;
pub mod connections;
pub mod domain;
pub mod flows;
#[cfg(test)]
mod fuzz;
pub mod http;
pub mod imports;
#[cfg(test)]
mod layering;
pub mod limits;
pub mod model;
pub mod monitors;
pub mod ops;
pub mod paging;
pub mod queue;
pub mod rsql;
pub mod runtime;
pub mod scheduling;
pub mod secrets;
pub mod seed;
pub mod server;
pub mod store;
pub mod tenants;
pub mod values;

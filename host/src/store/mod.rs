//! Persistence. The control plane (instances, credentials, settings) lives in one database; each
//! instance's data lives in its own SQLite file, in typed tables generated from its data model.
//!
//! Every SQL text built here holds only `?` placeholders for values and quoted identifiers that
//! the model validated; values are always bound.

pub mod control;
pub mod jobs;
mod sqlite;
pub mod tenant;

use std::path::{Path, PathBuf};

pub use control::ControlDb;
pub use tenant::TenantDb;

/// Errors of the store that callers act on; everything else is a fault (`Db`).
#[derive(Debug, thiserror::Error)]
pub enum StoreError {
    /// A unique value is taken, or an item exists that must not.
    #[error("{0}")]
    Conflict(String),
    /// The request cannot be carried out as asked (a value the model refuses).
    #[error("{0}")]
    Invalid(String),
    #[error(transparent)]
    Db(#[from] sqlx::Error),
}

pub type StoreResult<T> = Result<T, StoreError>;

/// Where an instance's files live under the data directory.
pub fn instance_dir(data_dir: &Path, customer_id: &str) -> PathBuf {
    data_dir.join("instances").join(customer_id)
}

/// Milliseconds since the Unix epoch (UTC), the unit of every stored instant of the control plane.
pub fn now_millis() -> i64 {
    chrono::Utc::now().timestamp_millis()
}

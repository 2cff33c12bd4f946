//! Persistence. The control plane (instances, credentials, settings, the queue) lives in one
//! database; each instance's data lives in its own, in typed tables generated from its data
//! model. The `Backend` says where: SQLite files under the data directory (the embedded default),
//! or schemas of one PostgreSQL database shared by several nodes.
//!
//! Every SQL text built here holds only `?` placeholders for values and quoted identifiers that
//! the model validated; values are always bound.

pub mod backend_priority;
pub mod calls_in_flight;
pub mod control;
pub mod db;
pub mod delayed;
pub mod group;
pub mod jobs;
pub mod monitor_schedules;
pub mod node_pool;
pub mod nodes;
pub mod read_cache;
pub mod schedules;
pub mod tenant;
pub mod usage;
pub mod warm_connections;

use std::path::{Path, PathBuf};

use db::Db;
use node_pool::PoolSettings;

pub use control::ControlDb;
pub use db::mark_background_thread;
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
    Db(sqlx::Error),
}

impl From<sqlx::Error> for StoreError {
    fn from(e: sqlx::Error) -> StoreError {
        // The database lost or refusing: the node pool checks its kept connections before lending
        // them again (a pool merely busy is not a loss).
        if e.is_unavailable() && !matches!(e, sqlx::Error::PoolTimedOut) {
            warm_connections::note_loss();
        }
        StoreError::Db(e)
    }
}

pub type StoreResult<T> = Result<T, StoreError>;

/// Whether an error means the database cannot be reached now (rather than a fault in a query).
pub trait Unavailable {
    fn is_unavailable(&self) -> bool;
}

impl Unavailable for sqlx::Error {
    fn is_unavailable(&self) -> bool {
        match self {
            sqlx::Error::Io(_) | sqlx::Error::Tls(_) | sqlx::Error::PoolTimedOut | sqlx::Error::PoolClosed | sqlx::Error::WorkerCrashed => {
                true
            }
            // PostgreSQL: an error of FATAL severity ends the session (a database refusing
            // connections, too many connections, the server shutting down); connection
            // exceptions (08...) and shutdown or start-up (57P01-57P03) likewise.
            sqlx::Error::Database(d) => {
                let fatal = d
                    .try_downcast_ref::<sqlx::postgres::PgDatabaseError>()
                    .is_some_and(|pg| matches!(pg.severity(), sqlx::postgres::PgSeverity::Fatal | sqlx::postgres::PgSeverity::Panic));
                fatal || d.code().is_some_and(|c| c.starts_with("08") || c.starts_with("57P") || c == "53300")
            }
            _ => false,
        }
    }
}

/// Where the databases live.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Backend {
    /// `control.db` and `instances/<customerId>/data.db` under the data directory.
    Sqlite { data_dir: PathBuf },
    /// One PostgreSQL database: schema `herald` for the control plane, `instance_<customerId>`
    /// for each instance, reached through `pool`'s connections.
    Postgres { url: String, pool: PoolSettings },
}

impl Backend {
    /// The embedded SQLite store under `data_dir`, or the PostgreSQL database at `database_url`.
    pub fn new(data_dir: &Path, database_url: Option<&str>) -> anyhow::Result<Backend> {
        match database_url.map(str::trim).filter(|u| !u.is_empty()) {
            None => Ok(Backend::Sqlite { data_dir: data_dir.to_path_buf() }),
            Some(url) if url.starts_with("postgres://") || url.starts_with("postgresql://") => {
                Ok(Backend::Postgres { url: url.to_string(), pool: PoolSettings::default() })
            }
            Some(_) => anyhow::bail!(
                "--database-url must be a postgres:// or postgresql:// URL (without it, Herald uses SQLite in the data directory)"
            ),
        }
    }

    /// This backend with the node's PostgreSQL connection settings (nothing changes on SQLite).
    pub fn with_pool(self, settings: PoolSettings) -> Backend {
        match self {
            Backend::Postgres { url, .. } => Backend::Postgres { url, pool: settings },
            sqlite => sqlite,
        }
    }

    pub fn is_postgres(&self) -> bool {
        matches!(self, Backend::Postgres { .. })
    }

    async fn open_control(&self) -> Result<Db, sqlx::Error> {
        match self {
            Backend::Sqlite { data_dir } => Db::open_sqlite(&data_dir.join("control.db")).await,
            Backend::Postgres { url, pool } => {
                Db::open_postgres(url, "herald", pool.control_pool_connections(), pool.acquire_timeout, true).await
            }
        }
    }

    /// Instance `customer_id`'s SQLite file.
    fn tenant_file(data_dir: &Path, customer_id: &str) -> PathBuf {
        crate::assets::instance_dir(data_dir, customer_id).join("data.db")
    }

    /// Opens instance `customer_id`'s store with pools of its own, for a command-line tool (a
    /// server uses `ControlDb::open_tenant`, over the node's pool).
    pub async fn open_tenant(&self, customer_id: &str) -> Result<TenantDb, sqlx::Error> {
        let db = match self {
            Backend::Sqlite { data_dir } => Db::open_sqlite(&Self::tenant_file(data_dir, customer_id)).await?,
            Backend::Postgres { url, pool } => Db::open_postgres(url, &tenant_schema(customer_id), 2, pool.acquire_timeout, false).await?,
        };
        Ok(TenantDb::new(db))
    }
}

impl Backend {
    /// A copy of instance `customer_id`'s SQLite store at `into` (a file that must not exist),
    /// opened: what a dry run writes to and throws away. Taken with `VACUUM INTO`, a consistent
    /// snapshot even while a server writes to the instance.
    pub async fn snapshot_tenant(&self, customer_id: &str, into: &Path) -> anyhow::Result<TenantDb> {
        let Backend::Sqlite { .. } = self else {
            anyhow::bail!("a dry run copies the instance's SQLite store; on PostgreSQL, run against a local data directory instead");
        };
        let live = self.open_tenant(customer_id).await?;
        live.copy_into(into).await?;
        Ok(TenantDb::new(Db::open_sqlite(into).await?))
    }
}

/// Instance `customer_id`'s PostgreSQL schema.
pub fn tenant_schema(customer_id: &str) -> String {
    format!("instance_{customer_id}")
}

/// Milliseconds since the Unix epoch (UTC), the unit of every stored instant of the control plane.
pub fn now_millis() -> i64 {
    chrono::Utc::now().timestamp_millis()
}

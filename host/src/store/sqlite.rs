//! Opening SQLite databases the same way everywhere: WAL, fully synchronous commits (an
//! acknowledged write survives a power cut), foreign keys, and a busy timeout for the moments
//! when another process (the `herald instance apply` command) holds the write lock.

use std::path::Path;
use std::time::Duration;

use sqlx::sqlite::{SqliteConnectOptions, SqliteJournalMode, SqlitePool, SqlitePoolOptions, SqliteSynchronous};

/// A pool of readers and a single writer. SQLite admits one writer at a time; serialising writes
/// in the process avoids lock upgrades failing with SQLITE_BUSY under load.
#[derive(Debug, Clone)]
pub struct Pools {
    pub read: SqlitePool,
    pub write: SqlitePool,
}

pub async fn open(path: &Path) -> Result<Pools, sqlx::Error> {
    if let Some(dir) = path.parent() {
        std::fs::create_dir_all(dir).map_err(sqlx::Error::Io)?;
    }
    let options = SqliteConnectOptions::new()
        .filename(path)
        .create_if_missing(true)
        .journal_mode(SqliteJournalMode::Wal)
        .synchronous(SqliteSynchronous::Full)
        .busy_timeout(Duration::from_secs(10))
        .foreign_keys(true);
    let write = SqlitePoolOptions::new().max_connections(1).connect_with(options.clone()).await?;
    let read = SqlitePoolOptions::new().max_connections(4).connect_with(options.read_only(true)).await?;
    Ok(Pools { read, write })
}

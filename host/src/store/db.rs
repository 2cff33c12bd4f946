//! One handle over either database engine. Herald writes its SQL once, with `?` placeholders, for
//! both SQLite (the embedded default) and PostgreSQL (several nodes over one server); `Db::sql`
//! numbers the placeholders for PostgreSQL. The few real differences (schema bookkeeping, a
//! function name, queue claims) are asked of `Dialect` where they occur.
//!
//! SQLite: one file per database, WAL, fully synchronous commits (an acknowledged write survives a
//! power cut), foreign keys, a busy timeout for the moments another process (`herald instance
//! apply`) holds the write lock, a pool of readers and a single writer (SQLite admits one writer
//! at a time; serialising writes in the process avoids lock upgrades failing under load).
//!
//! PostgreSQL: one schema per database (the control plane, and each instance), chosen by the
//! connection's `search_path`, so no query names a schema and an instance's connections cannot
//! reach another instance's tables by accident. Readers and writers share one pool.
//!
//! Queued work (flow sweeps, flow runs, asynchronous executions, monitors) reads through readers
//! of its own on SQLite ([`Db::reader`]): a sweep running 32 recipients at once would otherwise
//! hold every reader, and a call to the API would wait behind it for one.

use std::borrow::Cow;
use std::cell::Cell;
use std::path::Path;
use std::time::Duration;

use sqlx::any::AnyPoolOptions;
use sqlx::AnyPool;
use sqlx::{Connection, Executor};

use super::group::GroupCommit;
pub use crate::rsql::Dialect;

#[derive(Debug, Clone)]
pub struct Db {
    /// The readers of the calls being answered (reached through [`Db::reader`], which picks this
    /// one or `background_read`).
    read: AnyPool,
    /// The readers of queued work (on PostgreSQL the same pool as `read`).
    background_read: AnyPool,
    pub write: AnyPool,
    pub dialect: Dialect,
    /// The group commit of the frequent small writes (recipients, records, runs): `group.rs`.
    pub group: GroupCommit,
}

// SQLite pools do not ping a connection before lending it (sqlx's default): that was a round
// trip to the connection's worker thread before every query, and a file cannot go away.
// PostgreSQL pools keep the ping: after an outage or a failover the pool's idle connections are
// dead, and the ping is what sends the first call after it to a fresh one.

/// Connections of one instance's pool on PostgreSQL, per node. Idle ones are closed, so a node
/// holds connections only for the instances that are busy.
const POSTGRES_CONNECTIONS_PER_SCHEMA: u32 = 8;

/// Readers of queued work per SQLite database (opened when first needed, closed when idle).
const SQLITE_BACKGROUND_READERS: u32 = 2;

thread_local! {
    /// Set on the threads of queued work (`queue::threads`).
    static BACKGROUND: Cell<bool> = const { Cell::new(false) };
}

/// Marks the calling thread as one of queued work: the reads of the tasks it runs go to the
/// readers of queued work.
pub fn mark_background_thread() {
    BACKGROUND.with(|b| b.set(true));
}

/// The advisory lock (a key of Herald's choosing) held while a schema is created.
const SCHEMA_CREATION_LOCK: i64 = 0x4865_7261_6C64; // "Herald"

impl Db {
    pub async fn open_sqlite(path: &Path) -> Result<Db, sqlx::Error> {
        sqlx::any::install_default_drivers();
        if let Some(dir) = path.parent() {
            std::fs::create_dir_all(dir).map_err(sqlx::Error::Io)?;
        }
        let url = |mode: &str| {
            let encoded = percent_encoding::utf8_percent_encode(&path.to_string_lossy(), percent_encoding::NON_ALPHANUMERIC)
                .to_string()
                .replace("%2F", "/");
            format!("sqlite://{encoded}?mode={mode}")
        };
        let write = AnyPoolOptions::new()
            .max_connections(1)
            .test_before_acquire(false)
            .after_connect(|conn, _| {
                Box::pin(async move {
                    conn.execute(
                        "PRAGMA busy_timeout = 10000; PRAGMA journal_mode = WAL; PRAGMA synchronous = FULL; PRAGMA foreign_keys = ON;",
                    )
                    .await
                    .map(|_| ())
                })
            })
            .connect(&url("rwc"))
            .await?;
        let readers = |count: u32| {
            AnyPoolOptions::new().max_connections(count).test_before_acquire(false).after_connect(|conn, _| {
                Box::pin(async move { conn.execute("PRAGMA busy_timeout = 10000; PRAGMA foreign_keys = ON;").await.map(|_| ()) })
            })
        };
        let read = readers(4).connect(&url("ro")).await?;
        let background_read = readers(SQLITE_BACKGROUND_READERS).connect_lazy(&url("ro"))?;
        Ok(Db { read, background_read, group: GroupCommit::start(write.clone(), Dialect::Sqlite), write, dialect: Dialect::Sqlite })
    }

    /// A pool on `url` whose connections work in `schema`, created if missing.
    pub async fn open_postgres(url: &str, schema: &str) -> Result<Db, sqlx::Error> {
        sqlx::any::install_default_drivers();
        let quoted = crate::model::column(schema);
        // One connection, not a pool: an unreachable server fails at once rather than after the
        // pool's retries. The lock keeps nodes starting at once from racing to create the schema.
        let mut setup = sqlx::AnyConnection::connect(url).await?;
        let mut tx = setup.begin().await?;
        sqlx::query(&format!("SELECT pg_advisory_xact_lock({SCHEMA_CREATION_LOCK})")).execute(&mut *tx).await?;
        sqlx::query(&format!("CREATE SCHEMA IF NOT EXISTS {quoted}")).execute(&mut *tx).await?;
        tx.commit().await?;
        setup.close().await?;

        let search_path = format!("SET search_path TO {quoted}");
        let pool = AnyPoolOptions::new()
            .max_connections(POSTGRES_CONNECTIONS_PER_SCHEMA)
            .min_connections(0)
            .idle_timeout(Duration::from_secs(60))
            .after_connect(move |conn, _| {
                let search_path = search_path.clone();
                Box::pin(async move { conn.execute(search_path.as_str()).await.map(|_| ()) })
            })
            .connect(url)
            .await?;
        Ok(Db {
            read: pool.clone(),
            background_read: pool.clone(),
            group: GroupCommit::start(pool.clone(), Dialect::Postgres),
            write: pool,
            dialect: Dialect::Postgres,
        })
    }

    /// The readers for the calling thread: queued work's own on its threads, the API's elsewhere.
    pub fn reader(&self) -> &AnyPool {
        if BACKGROUND.with(Cell::get) {
            &self.background_read
        } else {
            &self.read
        }
    }

    /// `text` with its placeholders as this engine wants them.
    pub fn sql<'a>(&self, text: &'a str) -> Cow<'a, str> {
        sql_for(self.dialect, text)
    }

    /// Like `sql`, for text built at run time.
    pub fn sql_string(&self, text: String) -> String {
        match self.dialect {
            Dialect::Sqlite => text,
            Dialect::Postgres => numbered_placeholders(&text),
        }
    }

    /// `LEAST` of two expressions (SQLite's scalar `MIN`).
    pub fn least(&self, a: &str, b: &str) -> String {
        match self.dialect {
            Dialect::Sqlite => format!("MIN({a}, {b})"),
            Dialect::Postgres => format!("LEAST({a}, {b})"),
        }
    }
}

/// `text` with its placeholders as `dialect` wants them.
pub fn sql_for(dialect: Dialect, text: &str) -> Cow<'_, str> {
    match dialect {
        Dialect::Sqlite => Cow::Borrowed(text),
        Dialect::Postgres => Cow::Owned(numbered_placeholders(text)),
    }
}

/// Replaces each `?` placeholder by `$1`, `$2`... in order. Question marks inside quoted strings
/// and quoted identifiers are text, not placeholders.
pub fn numbered_placeholders(text: &str) -> String {
    let mut out = String::with_capacity(text.len() + 16);
    let mut n = 0;
    let mut quote: Option<char> = None;
    for c in text.chars() {
        match (quote, c) {
            (Some(q), c) if c == q => {
                quote = None;
                out.push(c);
            }
            (Some(_), c) => out.push(c),
            (None, '\'' | '"') => {
                quote = Some(c);
                out.push(c);
            }
            (None, '?') => {
                n += 1;
                out.push('$');
                out.push_str(&n.to_string());
            }
            (None, c) => out.push(c),
        }
    }
    out
}

#[cfg(test)]
mod tests {
    #[tokio::test]
    async fn queued_work_reads_through_readers_of_its_own_on_sqlite() {
        let dir = tempfile::tempdir().unwrap();
        let db = super::Db::open_sqlite(&dir.path().join("t.db")).await.unwrap();
        assert_eq!(db.reader().options().get_max_connections(), 4, "the API's readers");
        let background = db.clone();
        let theirs = std::thread::spawn(move || {
            super::mark_background_thread();
            background.reader().options().get_max_connections()
        });
        assert_eq!(theirs.join().unwrap(), super::SQLITE_BACKGROUND_READERS);
        assert_eq!(db.reader().options().get_max_connections(), 4, "marking another thread changes nothing here");
    }

    use super::numbered_placeholders;

    #[test]
    fn placeholders_are_numbered_outside_quotes() {
        assert_eq!(numbered_placeholders("a = ? AND b IN (?, ?)"), "a = $1 AND b IN ($2, $3)");
        assert_eq!(
            numbered_placeholders(r#"x LIKE ? ESCAPE '\' AND "we?ird" = ? AND y = 'it''s ?'"#),
            r#"x LIKE $1 ESCAPE '\' AND "we?ird" = $2 AND y = 'it''s ?'"#
        );
        assert_eq!(numbered_placeholders("no placeholders"), "no placeholders");
    }
}

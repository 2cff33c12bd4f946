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
//! connection's `search_path`, so no query names a schema. The control plane has a small pool
//! of its own; every instance uses the node's one pool, whose connections work in the schema of
//! the instance that uses them (`node_pool.rs`), so a node's connections do not grow with its
//! instances.
//!
//! Queued work (flow sweeps, flow runs, asynchronous executions, monitors) reads through readers
//! of its own on SQLite ([`Db::reader`]): a sweep running 32 recipients at once would otherwise
//! hold every reader, and a call to the API would wait behind it for one.

use std::borrow::Cow;
use std::cell::Cell;
use std::ops::{Deref, DerefMut};
use std::path::Path;
use std::time::Duration;

use sqlx::any::AnyPoolOptions;
use sqlx::{AnyConnection, AnyPool, TransactionManager};
use sqlx::{Connection, Executor};
use tokio::sync::OwnedSemaphorePermit;

use super::group::GroupCommit;
use super::node_pool::{Lent, SchemaPool, Transactions};
pub use crate::rsql::Dialect;

#[derive(Debug, Clone)]
pub struct Db {
    conns: Conns,
    pub dialect: Dialect,
    /// The SQLite file (none on PostgreSQL), for the scans that read it without sqlx
    /// (`tenant/batches.rs`).
    file: Option<std::sync::Arc<Path>>,
    /// The group commit of the frequent small writes (recipients, records, runs): `group.rs`.
    pub group: GroupCommit,
}

/// Where a database's connections come from.
#[derive(Debug, Clone)]
pub(super) enum Conns {
    /// Pools of its own, whose connections are in the database (an SQLite file) or schema (the
    /// PostgreSQL control plane) from the start.
    Own {
        /// The readers of the calls being answered.
        read: AnyPool,
        /// The readers of queued work (on PostgreSQL the same pool as `read`).
        background_read: AnyPool,
        write: AnyPool,
    },
    /// An instance's schema on the node's PostgreSQL pool (`node_pool.rs`).
    Shared(SchemaPool),
}

/// The writer's connection. Opening one starts SQLite's thread for it, which inherits the opening
/// thread's turn on the processor (`scheduling`): the writer runs an import's long batches, so it
/// gets the long turn whichever thread opens it, and a call's thread that wakes meanwhile is due
/// first.
async fn acquire_writer(write: &AnyPool) -> Result<sqlx::pool::PoolConnection<sqlx::Any>, sqlx::Error> {
    if write.num_idle() > 0 {
        write.acquire().await
    } else {
        crate::scheduling::with_long_turns(write.acquire()).await
    }
}

impl Conns {
    /// A transaction; on the shared pool with the instance's share held until it ends.
    pub(super) async fn begin(&self) -> Result<Tx, sqlx::Error> {
        match self {
            Conns::Own { write, .. } => {
                let mut conn = Lent::own(acquire_writer(write).await?);
                Transactions::begin(&mut conn, None).await?;
                Ok(Tx { conn, _share: None })
            }
            Conns::Shared(schema) => {
                let (conn, share) = schema.begin().await?;
                Ok(Tx { conn, _share: Some(share) })
            }
        }
    }
}

/// A connection lent for one use (an executor: `&mut *conn`).
pub struct Conn {
    conn: Lent,
    _share: Option<OwnedSemaphorePermit>,
}

impl Conn {
    /// Closes this connection when it is dropped instead of giving it back to its pool.
    pub fn close_on_drop(&mut self) {
        self.conn.close_on_drop();
    }
}

impl Deref for Conn {
    type Target = AnyConnection;
    fn deref(&self) -> &AnyConnection {
        &self.conn
    }
}

impl DerefMut for Conn {
    fn deref_mut(&mut self) -> &mut AnyConnection {
        &mut self.conn
    }
}

/// A transaction (an executor: `&mut *tx`); rolled back if dropped before [`Tx::commit`] (by
/// its connection, `node_pool::Lent`, which queues the rollback when dropped in a transaction).
/// It holds a `Lent` rather than a `sqlx::Transaction` so that reads and transactions share one
/// kind of lent connection.
pub struct Tx {
    conn: Lent,
    _share: Option<OwnedSemaphorePermit>,
}

impl Tx {
    pub async fn commit(mut self) -> Result<(), sqlx::Error> {
        Transactions::commit(&mut self.conn).await
    }
}

impl Deref for Tx {
    type Target = AnyConnection;
    fn deref(&self) -> &AnyConnection {
        &self.conn
    }
}

impl DerefMut for Tx {
    fn deref_mut(&mut self) -> &mut AnyConnection {
        &mut self.conn
    }
}

// SQLite pools do not ping a connection before lending it (sqlx's default): that was a round
// trip to the connection's worker thread before every query, and a file cannot go away.
// PostgreSQL pools keep the ping: after an outage or a failover the pool's idle connections are
// dead, and the ping is what sends the first call after it to a fresh one.

/// The API's readers per SQLite database (opened when first needed, closed when idle). With the
/// writer and the reader of queued work, an open instance holds at most four connections, each a
/// thread of sqlx's and two file descriptors (the database and its WAL; the shared-memory index
/// is one per database).
pub const SQLITE_READERS: u32 = 2;

/// Readers of queued work per SQLite database (opened when first needed, closed when idle).
pub const SQLITE_BACKGROUND_READERS: u32 = 1;

/// A reader that has not been used for this long is closed (its thread ends).
pub(super) const SQLITE_READER_IDLE: Duration = Duration::from_secs(30);

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
    /// The SQLite database at `path` (created, by the writer, when missing). Every connection
    /// opens when first needed and closes when idle, so an instance that is only read opens one
    /// reader. Readers open the file read-write
    /// (they never write): a read-only connection could not create the WAL's files, which
    /// SQLite removes when the last connection closes, and would need the writer opened first.
    pub async fn open_sqlite(path: &Path) -> Result<Db, sqlx::Error> {
        Self::open_sqlite_with(path, SQLITE_READERS, SQLITE_BACKGROUND_READERS).await
    }

    /// Like `open_sqlite`, with `readers` API readers and `background` readers of queued work.
    pub async fn open_sqlite_with(path: &Path, readers: u32, background: u32) -> Result<Db, sqlx::Error> {
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
            .min_connections(0)
            .idle_timeout(SQLITE_READER_IDLE)
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
            .connect_lazy(&url("rwc"))?;
        if !path.exists() {
            // A new database: the writer creates it (in WAL mode) before any reader looks.
            drop(acquire_writer(&write).await?);
        }
        let reader_pool = |count: u32| {
            AnyPoolOptions::new()
                .max_connections(count)
                .min_connections(0)
                .idle_timeout(SQLITE_READER_IDLE)
                .test_before_acquire(false)
                .after_connect(|conn, _| {
                    Box::pin(async move { conn.execute("PRAGMA busy_timeout = 10000; PRAGMA foreign_keys = ON;").await.map(|_| ()) })
                })
        };
        let read = reader_pool(readers).connect_lazy(&url("rw"))?;
        let background_read = reader_pool(background).connect_lazy(&url("rw"))?;
        let conns = Conns::Own { read, background_read, write };
        Ok(Db { group: GroupCommit::start(conns.clone(), Dialect::Sqlite), conns, dialect: Dialect::Sqlite, file: Some(path.into()) })
    }

    /// A pool of its own on `url` whose connections work in `schema`, created if missing (the
    /// control plane; and an instance's schema for the command line's tools). With
    /// `answers_calls` (the control plane, which admits every call on PostgreSQL:
    /// `store::calls_in_flight`), its backends get short turns where Herald may give them
    /// (`backend_priority`), as the node's pool's do; a tool's bulk work keeps the default.
    pub async fn open_postgres(
        url: &str,
        schema: &str,
        connections: u32,
        acquire_timeout: Duration,
        answers_calls: bool,
    ) -> Result<Db, sqlx::Error> {
        sqlx::any::install_default_drivers();
        let quoted = crate::model::column(schema);
        // One connection, not a pool: an unreachable server fails at once rather than after the
        // pool's retries.
        let mut setup = sqlx::AnyConnection::connect(url).await?;
        create_schema(&mut setup, &quoted).await?;
        setup.close().await?;

        let search_path = format!("SET search_path TO {quoted}");
        let pool = AnyPoolOptions::new()
            .max_connections(connections)
            .min_connections(0)
            .idle_timeout(Duration::from_secs(60))
            .acquire_timeout(acquire_timeout)
            .after_connect(move |conn, _| {
                let search_path = search_path.clone();
                Box::pin(async move {
                    conn.execute(search_path.as_str()).await?;
                    if answers_calls {
                        super::backend_priority::prompt_turns(conn).await;
                    }
                    Ok(())
                })
            })
            .connect(url)
            .await?;
        let conns = Conns::Own { read: pool.clone(), background_read: pool.clone(), write: pool };
        Ok(Db { group: GroupCommit::start(conns.clone(), Dialect::Postgres), conns, dialect: Dialect::Postgres, file: None })
    }

    /// Instance schema `schema` on the node's shared pool. With `create`, the schema is created
    /// if missing (`herald instance apply`); without, a missing schema is an error (an instance
    /// whose data is gone answers 503 rather than work on an empty schema).
    pub async fn open_shared(schema: SchemaPool, create: bool) -> Result<Db, sqlx::Error> {
        let conns = Conns::Shared(schema.clone());
        let db = Db { group: GroupCommit::start(conns.clone(), Dialect::Postgres), conns, dialect: Dialect::Postgres, file: None };
        if create {
            let mut conn = db.writer().await?;
            create_schema(&mut conn, schema.schema()).await?;
        }
        Ok(db)
    }

    /// Checks that the database is there and is one: an SQLite file that is not a database, or
    /// a PostgreSQL schema that does not exist, fails here.
    pub async fn check(&self) -> Result<(), sqlx::Error> {
        let mut conn = self.reader().await?;
        match self.dialect {
            Dialect::Sqlite => {
                sqlx::query("SELECT COUNT(*) FROM sqlite_master").fetch_one(&mut *conn).await?;
            }
            Dialect::Postgres => {
                let row = sqlx::query("SELECT current_schema() IS NOT NULL").fetch_one(&mut *conn).await?;
                if !sqlx::Row::get::<bool, _>(&row, 0) {
                    return Err(sqlx::Error::Configuration("the instance's schema does not exist".into()));
                }
            }
        }
        Ok(())
    }

    /// A reader for the calling thread: queued work's own on its threads, the API's elsewhere.
    pub async fn reader(&self) -> Result<Conn, sqlx::Error> {
        match &self.conns {
            Conns::Own { read, background_read, .. } => {
                let pool = if BACKGROUND.with(Cell::get) { background_read } else { read };
                Ok(Conn { conn: Lent::own(pool.acquire().await?), _share: None })
            }
            Conns::Shared(schema) => {
                let (conn, share) = schema.connection().await?;
                Ok(Conn { conn, _share: Some(share) })
            }
        }
    }

    /// Counts `count` point reads answered by one statement (the node's pool's metrics).
    pub fn count_gathered_reads(&self, count: usize) {
        if let Conns::Shared(schema) = &self.conns {
            schema.count_gathered_reads(count);
        }
    }

    /// The writer (on PostgreSQL, any connection of the pool).
    pub async fn writer(&self) -> Result<Conn, sqlx::Error> {
        match &self.conns {
            Conns::Own { write, .. } => Ok(Conn { conn: Lent::own(acquire_writer(write).await?), _share: None }),
            Conns::Shared(_) => self.reader().await,
        }
    }

    /// A transaction on the writer.
    pub async fn begin(&self) -> Result<Tx, sqlx::Error> {
        self.conns.begin().await
    }

    /// Closes the pools of its own (the shared pool stays with the node).
    pub async fn close(&self) {
        if let Conns::Own { read, background_read, write } = &self.conns {
            read.close().await;
            background_read.close().await;
            write.close().await;
        }
    }

    /// The SQLite file of this database (none on PostgreSQL).
    pub fn sqlite_file(&self) -> Option<&Path> {
        self.file.as_deref()
    }

    /// Connections of this database's own pools: (open, idle), for the operator's metrics.
    pub fn connections(&self) -> (u32, usize) {
        match &self.conns {
            Conns::Own { read, background_read, write } if self.dialect == Dialect::Sqlite => {
                (read.size() + background_read.size() + write.size(), read.num_idle() + background_read.num_idle() + write.num_idle())
            }
            // One pool serves all three.
            Conns::Own { write, .. } => (write.size(), write.num_idle()),
            Conns::Shared(_) => (0, 0),
        }
    }

    /// `text` with its placeholders as this engine wants them (and, for an instance on the
    /// node's shared pool, the comment naming its schema: `node_pool.rs`).
    pub fn sql<'a>(&self, text: &'a str) -> Cow<'a, str> {
        match &self.conns {
            Conns::Shared(schema) => Cow::Owned(format!("/* {} */ {}", schema.schema(), numbered_placeholders(text))),
            _ => sql_for(self.dialect, text),
        }
    }

    /// Like `sql`, for text built at run time.
    pub fn sql_string(&self, text: String) -> String {
        match (&self.conns, self.dialect) {
            (Conns::Shared(_), _) => self.sql(&text).into_owned(),
            (_, Dialect::Sqlite) => text,
            (_, Dialect::Postgres) => numbered_placeholders(&text),
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

/// Creates schema `quoted` if missing, under the advisory lock that keeps nodes starting at once
/// from racing to create it.
///
/// The lock is the session's, taken before the `CREATE`, which then runs in a transaction of its
/// own: a transaction that began before waiting for the lock keeps the catalog's cache as it was
/// when it began, so `IF NOT EXISTS` could miss the schema another node created meanwhile and fail
/// on its name (`pg_namespace_nspname_index`: seen when three nodes started at once on a loaded
/// machine). A connection lost while holding the lock releases it with its session.
async fn create_schema(conn: &mut AnyConnection, quoted: &str) -> Result<(), sqlx::Error> {
    sqlx::query(&format!("SELECT pg_advisory_lock({SCHEMA_CREATION_LOCK})")).execute(&mut *conn).await?;
    let created = sqlx::query(&format!("CREATE SCHEMA IF NOT EXISTS {quoted}")).execute(&mut *conn).await;
    let unlocked = sqlx::query(&format!("SELECT pg_advisory_unlock({SCHEMA_CREATION_LOCK})")).execute(&mut *conn).await;
    created?;
    unlocked.map(drop)
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
    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn queued_work_reads_through_readers_of_its_own_on_sqlite() {
        let dir = tempfile::tempdir().unwrap();
        let db = super::Db::open_sqlite(&dir.path().join("t.db")).await.unwrap();
        let readers = |db: &super::Db| match &db.conns {
            super::Conns::Own { read, background_read, .. } => (read.size(), background_read.size()),
            super::Conns::Shared(_) => unreachable!(),
        };
        assert_eq!(readers(&db), (0, 0), "readers connect when first needed");
        drop(db.reader().await.unwrap());
        assert_eq!(readers(&db), (1, 0), "the API's reader");
        let background = db.clone();
        let handle = tokio::runtime::Handle::current();
        std::thread::spawn(move || {
            super::mark_background_thread();
            handle.block_on(async move { drop(background.reader().await.unwrap()) });
        })
        .join()
        .unwrap();
        assert_eq!(readers(&db), (1, 1), "queued work's reader");
        drop(db.reader().await.unwrap());
        assert_eq!(readers(&db), (1, 1), "marking another thread changes nothing here");
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

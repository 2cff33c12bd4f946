//! Reading an SQLite file without sqlx, with rusqlite (the same `libsqlite3-sys` that sqlx links,
//! which Cargo links once, so its locks are ones the other connections of the process know about).
//!
//! sqlx runs each SQLite connection on a thread of its own: every statement is handed to that
//! thread and its rows handed back (two thread switches, and the rows copied twice, into sqlx's
//! SQLite row and then the Any driver's). Two kinds of read skip that:
//!
//! - scans of a whole selection (exports, `tenant/batches.rs`) run on a blocking thread with a
//!   connection of their own;
//! - point reads (one recipient by a unique field or by key: `GET /recipients/{id}`, a guest's
//!   `recipients.get`) run on the calling thread with a connection of `DirectReaders`. Such a read
//!   is one B-tree lookup in WAL mode, where a reader never waits for the writer: microseconds, as
//!   long as serialising a JSON answer. Its connection has no busy timeout; in the rare moments a
//!   reader would have to wait (a WAL recovery, another process holding the file exclusively),
//!   the read says so (`None`) and its caller takes the sqlx path, which waits on its own thread.
//!
//! Connections never write (`query_only`); they open the file read-write for the reason
//! `Db::open_sqlite` gives. `DirectReaders` keeps at most one idle connection per core (more
//! calls than cores cannot read at once on the calling threads), each closed once unused for a
//! while (`shed_idle`, from the registry's rounds), and all of them with the instance's store.

use std::path::Path;
use std::sync::Mutex;
use std::time::{Duration, Instant};

use rusqlite::types::{Value as SqlValue, ValueRef};
use rusqlite::{Connection, OpenFlags};

use super::codec::{date_text, stored_date, stored_timestamp, timestamp_text};
use crate::model::{FieldType, Value};
use crate::store::{StoreError, StoreResult};

/// Opens a reading connection to `file`, waiting up to `busy` for a lock another connection holds.
pub fn open(file: &Path, busy: Duration) -> StoreResult<Connection> {
    let flags = OpenFlags::SQLITE_OPEN_READ_WRITE | OpenFlags::SQLITE_OPEN_NO_MUTEX;
    let conn = Connection::open_with_flags(file, flags).map_err(unavailable)?;
    conn.busy_timeout(busy).map_err(failed)?;
    conn.pragma_update(None, "query_only", true).map_err(failed)?;
    Ok(conn)
}

/// A value as the column stores it (`codec::bind` for sqlx).
pub fn stored(value: &Value) -> SqlValue {
    match value {
        Value::Null => SqlValue::Null,
        Value::Text(s) => SqlValue::Text(s.clone()),
        Value::Number(n) => SqlValue::Real(*n),
        Value::Bool(b) => SqlValue::Integer(i64::from(*b)),
        Value::Date(d) => SqlValue::Text(date_text(*d)),
        Value::Timestamp(t) => SqlValue::Text(timestamp_text(*t)),
    }
}

/// A column's value as a value of its field's type (`codec::decode` for sqlx).
pub fn read(raw: ValueRef<'_>, ty: FieldType) -> StoreResult<Value> {
    let corrupt = |what: String| StoreError::Db(sqlx::Error::Decode(what.into()));
    // Borrowed from SQLite's memory: only a STRING's text is copied.
    let text = |bytes| std::str::from_utf8(bytes).map_err(|_| corrupt("stored text is not UTF-8".into()));
    Ok(match (ty, raw) {
        (_, ValueRef::Null) => Value::Null,
        (FieldType::String, ValueRef::Text(bytes)) => Value::Text(text(bytes)?.to_string()),
        (FieldType::Number, ValueRef::Real(n)) => Value::Number(n),
        (FieldType::Number, ValueRef::Integer(n)) => Value::Number(n as f64),
        (FieldType::Boolean, ValueRef::Integer(n)) => Value::Bool(n != 0),
        (FieldType::Date, ValueRef::Text(bytes)) => Value::Date(stored_date(text(bytes)?).map_err(corrupt)?),
        (FieldType::Timestamp, ValueRef::Text(bytes)) => Value::Timestamp(stored_timestamp(text(bytes)?).map_err(corrupt)?),
        (ty, other) => return Err(corrupt(format!("a {ty:?} field holds a stored {:?}", other.data_type()))),
    })
}

/// The file cannot be opened now: the instance answers 503, as when sqlx cannot reach it.
pub fn unavailable(e: rusqlite::Error) -> StoreError {
    StoreError::Db(sqlx::Error::Io(std::io::Error::other(e)))
}

pub fn failed(e: rusqlite::Error) -> StoreError {
    if busy(&e) {
        return unavailable(e);
    }
    StoreError::Db(sqlx::Error::Decode(Box::new(e)))
}

fn busy(e: &rusqlite::Error) -> bool {
    matches!(e, rusqlite::Error::SqliteFailure(code, _) if matches!(code.code, rusqlite::ErrorCode::DatabaseBusy | rusqlite::ErrorCode::DatabaseLocked))
}

/// The point readers of one SQLite file, used on the calling thread.
#[derive(Debug)]
pub struct DirectReaders {
    file: std::sync::Arc<Path>,
    /// Idle connections and when each was last used, newest last.
    idle: Mutex<Vec<(Connection, Instant)>>,
    keep: usize,
}

impl DirectReaders {
    pub fn new(file: std::sync::Arc<Path>) -> DirectReaders {
        let keep = std::thread::available_parallelism().map_or(2, |n| n.get());
        DirectReaders { file, idle: Mutex::new(Vec::new()), keep }
    }

    /// `read` on a connection of the file, or `None` when it could not run now without waiting
    /// (a lock held elsewhere, the file not openable): the caller reads through sqlx instead.
    pub fn read<T>(&self, read: impl FnOnce(&Connection) -> StoreResult<T>) -> Option<StoreResult<T>> {
        let taken = self.idle.lock().expect("direct readers lock").pop().map(|(conn, _)| conn);
        let conn = match taken {
            Some(conn) => conn,
            None => open(&self.file, Duration::ZERO).ok()?,
        };
        let answer = read(&conn);
        if matches!(&answer, Err(StoreError::Db(sqlx::Error::Io(_)))) {
            // Busy (or the file went away under it): not this read's fault; sqlx's path waits.
            return None;
        }
        let mut idle = self.idle.lock().expect("direct readers lock");
        if idle.len() < self.keep {
            idle.push((conn, Instant::now()));
        }
        Some(answer)
    }

    /// Closes the connections unused for `idle_for`.
    pub fn shed_idle(&self, idle_for: Duration) {
        let now = Instant::now();
        let closing: Vec<(Connection, Instant)> = {
            let mut idle = self.idle.lock().expect("direct readers lock");
            let (old, kept): (Vec<_>, Vec<_>) = idle.drain(..).partition(|(_, used)| now.saturating_duration_since(*used) >= idle_for);
            *idle = kept;
            old
        };
        drop(closing);
    }

    /// Idle connections now.
    pub fn idle(&self) -> usize {
        self.idle.lock().expect("direct readers lock").len()
    }
}

/// The first row `sql` selects with `params`, decoded by `decode` (a prepared statement kept per
/// connection: the SQL texts of point reads are few).
pub fn first_row<T>(
    conn: &Connection,
    sql: &str,
    params: &[SqlValue],
    decode: impl FnOnce(&rusqlite::Row<'_>) -> StoreResult<T>,
) -> StoreResult<Option<T>> {
    let mut statement = conn.prepare_cached(sql).map_err(failed)?;
    let mut rows = statement.query(rusqlite::params_from_iter(params.iter())).map_err(failed)?;
    match rows.next().map_err(failed)? {
        Some(row) => decode(row).map(Some),
        None => Ok(None),
    }
}

#[cfg(test)]
mod tests {
    use std::time::Duration;

    use super::super::batches::tests::sample_rows;
    use super::super::TenantDb;
    use super::{failed, DirectReaders};
    use crate::model::{DefinitionFile, Model, DEMO};
    use crate::store::{StoreError, StoreResult};

    async fn demo_store(dir: &std::path::Path) -> (TenantDb, Model) {
        let db = crate::store::Backend::Sqlite { data_dir: dir.into() }.open_tenant("x").await.unwrap();
        let model = Model::new(DefinitionFile::from_toml(DEMO).unwrap().model).unwrap();
        db.ensure_schema(&model).await.unwrap();
        db.insert_recipients(&model, &sample_rows(&model, 60)).await.unwrap();
        (db, model)
    }

    /// A point read on the calling thread reads what sqlx reads, by key and by a unique field, for
    /// every field type and for empty values; and it keeps its connection for the next read.
    #[tokio::test]
    async fn direct_point_reads_read_what_sqlx_reads() {
        let dir = tempfile::tempdir().unwrap();
        let (db, model) = demo_store(dir.path()).await;
        let mut through_sqlx = db.clone();
        through_sqlx.direct = None;
        let email = model.def.person_data.iter().position(|f| f.name == "EMAIL").unwrap();
        for key in [1, 7, 14, 59, 60, 61] {
            let direct = db.recipient_by_key(&model, key).await.unwrap();
            let sqlx = through_sqlx.recipient_by_key(&model, key).await.unwrap();
            assert_eq!(direct.as_ref().map(|r| (r.key, &r.values)), sqlx.as_ref().map(|r| (r.key, &r.values)), "key {key}");
            assert_eq!(direct.is_some(), key <= 60);
            if let Some(found) = direct.filter(|r| !r.values[email].is_null()) {
                let by_field = db.find_recipient(&model, email, &found.values[email]).await.unwrap().unwrap();
                assert_eq!((by_field.key, by_field.values), (found.key, found.values));
            }
        }
        assert_eq!(db.direct.as_ref().unwrap().idle(), 1, "one thread read: one connection kept");
        db.direct.as_ref().unwrap().shed_idle(Duration::ZERO);
        assert_eq!(db.direct.as_ref().unwrap().idle(), 0);
    }

    /// A point read that would wait (a lock held elsewhere) or cannot open the file does not
    /// answer on the calling thread: it says so, and the read goes through sqlx.
    #[tokio::test]
    async fn a_point_read_that_cannot_run_now_goes_through_sqlx() {
        let dir = tempfile::tempdir().unwrap();
        let (db, model) = demo_store(dir.path()).await;
        let busy = || rusqlite::Error::SqliteFailure(rusqlite::ffi::Error::new(rusqlite::ffi::SQLITE_BUSY), None);
        let direct = db.direct.as_ref().unwrap();
        assert!(direct.read(|_| -> StoreResult<()> { Err(failed(busy())) }).is_none());
        assert_eq!(direct.idle(), 0, "a connection that met a lock is not kept");
        assert!(matches!(direct.read(|_| -> StoreResult<()> { Err(StoreError::Invalid("x".into())) }), Some(Err(StoreError::Invalid(_)))));
        let mut unopenable = db.clone();
        unopenable.direct = Some(std::sync::Arc::new(DirectReaders::new(dir.path().join("no/such/file.db").into())));
        let read = unopenable.recipient_by_key(&model, 1).await.unwrap().unwrap();
        assert_eq!(read.key, 1);
        assert_eq!(unopenable.direct.as_ref().unwrap().idle(), 0);
    }
}

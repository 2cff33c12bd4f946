//! Bulk imports of an instance (`crate::imports` runs them): each import's record in `_imports`
//! (its settings, state, where it has reached and its counts), the body it was given in
//! `_import_chunks` (fixed-size pieces, so that an offset names its piece), and the rows it
//! rejected in `_import_errors`. Everything lives in the instance's own store, so any node over
//! the same database can continue an import, and a batch's rows, its rejected rows and the
//! import's new position commit together (`import_rows.rs`): a resumed import applies no row twice.

use sqlx::Row;

use super::TenantDb;
use crate::store::StoreResult;

/// The size of every stored piece of a body but its last.
pub const IMPORT_CHUNK_BYTES: usize = 1024 * 1024;

/// The most rejected rows kept for one import (every rejected row is counted).
pub const MAX_RECORDED_ERRORS: i64 = 100_000;

/// Where an import stands.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ImportState {
    /// Its body is arriving (not listed; gone if the upload does not finish).
    Receiving,
    Queued,
    Running,
    Completed,
    Failed,
    Cancelled,
}

impl ImportState {
    pub fn name(self) -> &'static str {
        match self {
            ImportState::Receiving => "receiving",
            ImportState::Queued => "queued",
            ImportState::Running => "running",
            ImportState::Completed => "completed",
            ImportState::Failed => "failed",
            ImportState::Cancelled => "cancelled",
        }
    }

    fn parse(text: &str) -> ImportState {
        match text {
            "receiving" => ImportState::Receiving,
            "queued" => ImportState::Queued,
            "running" => ImportState::Running,
            "completed" => ImportState::Completed,
            "cancelled" => ImportState::Cancelled,
            _ => ImportState::Failed,
        }
    }

    pub fn finished(self) -> bool {
        matches!(self, ImportState::Completed | ImportState::Failed | ImportState::Cancelled)
    }
}

/// An import as it is stored.
#[derive(Debug, Clone)]
pub struct ImportRecord {
    pub id: String,
    /// What it writes: `recipients`.
    pub target: String,
    /// `csv` or `ndjson`.
    pub format: String,
    /// The unique Person Data field that names each row's recipient.
    pub key_field: String,
    /// `none` or `created`.
    pub triggers: String,
    pub state: ImportState,
    /// The body's size in bytes.
    pub size: i64,
    /// The CSV header's field names, in column order (empty for NDJSON).
    pub columns: Vec<String>,
    pub created_at: i64,
    pub started_at: Option<i64>,
    pub finished_at: Option<i64>,
    /// Where the next row starts in the body, and its row number (as the customer counts).
    pub next_offset: i64,
    pub next_row: i64,
    pub counts: ImportCounts,
    /// Why it failed.
    pub message: Option<String>,
}

/// What an import did so far.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct ImportCounts {
    pub rows_read: i64,
    pub created: i64,
    pub updated: i64,
    pub rejected: i64,
}

/// A rejected row: its number, the field at fault (if one is), and why.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RejectedRow {
    pub row: i64,
    pub field: Option<String>,
    pub message: String,
}

/// What an import is created with.
#[derive(Debug, Clone)]
pub struct NewImport {
    pub id: String,
    pub target: String,
    pub format: String,
    pub key_field: String,
    pub triggers: String,
    pub created_at: i64,
}

/// Whether a queued import may run now.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ImportStart {
    /// It runs (it was queued, or was running and is being continued).
    Running,
    /// Others of the instance are running: it waits its turn.
    Wait,
    /// It is over (or gone): nothing to do.
    Over,
}

const COLUMNS: &str = "id, target, format, key_field, triggers, state, size, columns, created_at, started_at, finished_at, \
     next_offset, next_row, rows_read, created, updated, rejected, message";

fn decode(r: &sqlx::any::AnyRow) -> Result<ImportRecord, sqlx::Error> {
    let columns: String = r.try_get(7)?;
    Ok(ImportRecord {
        id: r.try_get(0)?,
        target: r.try_get(1)?,
        format: r.try_get(2)?,
        key_field: r.try_get(3)?,
        triggers: r.try_get(4)?,
        state: ImportState::parse(&r.try_get::<String, _>(5)?),
        size: r.try_get(6)?,
        columns: serde_json::from_str(&columns).unwrap_or_default(),
        created_at: r.try_get(8)?,
        started_at: r.try_get(9)?,
        finished_at: r.try_get(10)?,
        next_offset: r.try_get(11)?,
        next_row: r.try_get(12)?,
        counts: ImportCounts { rows_read: r.try_get(13)?, created: r.try_get(14)?, updated: r.try_get(15)?, rejected: r.try_get(16)? },
        message: r.try_get(17)?,
    })
}

impl TenantDb {
    /// Records an import whose body is about to arrive.
    pub async fn create_import(&self, new: &NewImport) -> StoreResult<()> {
        let sql = self.db.sql(
            "INSERT INTO _imports (id, target, format, key_field, triggers, state, size, columns, created_at, next_offset, next_row,
                 rows_read, created, updated, rejected)
             VALUES (?, ?, ?, ?, ?, 'receiving', 0, '[]', ?, 0, 0, 0, 0, 0, 0)",
        );
        sqlx::query(&sql)
            .bind(&new.id)
            .bind(&new.target)
            .bind(&new.format)
            .bind(&new.key_field)
            .bind(&new.triggers)
            .bind(new.created_at)
            .execute(&mut *self.db.writer().await?)
            .await?;
        Ok(())
    }

    /// Stores piece `seq` of import `id`'s body.
    pub async fn put_import_chunk(&self, id: &str, seq: i64, content: &[u8]) -> StoreResult<()> {
        let sql = self.db.sql("INSERT INTO _import_chunks (import_id, seq, content) VALUES (?, ?, ?)");
        sqlx::query(&sql).bind(id).bind(seq).bind(content.to_vec()).execute(&mut *self.db.writer().await?).await?;
        Ok(())
    }

    /// Piece `seq` of import `id`'s body (`None` past its end).
    pub async fn import_chunk(&self, id: &str, seq: i64) -> StoreResult<Option<Vec<u8>>> {
        let sql = self.db.sql("SELECT content FROM _import_chunks WHERE import_id = ? AND seq = ?");
        let row = sqlx::query(&sql).bind(id).bind(seq).fetch_optional(&mut *self.db.reader().await?).await?;
        Ok(row.map(|r| r.get::<Vec<u8>, _>(0)))
    }

    /// The whole body is stored: the import is queued, with its size, its CSV header's columns,
    /// and where its first row starts (`first_row`: its number).
    pub async fn import_received(&self, id: &str, size: i64, columns: &[String], data_offset: i64, first_row: i64) -> StoreResult<()> {
        let sql = self.db.sql(
            "UPDATE _imports SET state = 'queued', size = ?, columns = ?, next_offset = ?, next_row = ? WHERE id = ? AND state = 'receiving'",
        );
        let columns = serde_json::to_string(columns).expect("names serialise");
        sqlx::query(&sql)
            .bind(size)
            .bind(columns)
            .bind(data_offset)
            .bind(first_row)
            .bind(id)
            .execute(&mut *self.db.writer().await?)
            .await?;
        Ok(())
    }

    /// Forgets an import whose body did not arrive whole (or was refused), with what was stored.
    pub async fn discard_import(&self, id: &str) -> StoreResult<()> {
        let mut tx = self.db.begin().await?;
        for sql in ["DELETE FROM _import_chunks WHERE import_id = ?", "DELETE FROM _imports WHERE id = ?"] {
            sqlx::query(&self.db.sql(sql)).bind(id).execute(&mut *tx).await?;
        }
        tx.commit().await?;
        Ok(())
    }

    pub async fn import(&self, id: &str) -> StoreResult<Option<ImportRecord>> {
        let sql = self.db.sql_string(format!("SELECT {COLUMNS} FROM _imports WHERE id = ? AND state <> 'receiving'"));
        let row = sqlx::query(&sql).bind(id).fetch_optional(&mut *self.db.reader().await?).await?;
        Ok(row.map(|r| decode(&r)).transpose()?)
    }

    /// The instance's imports, newest first: at most `limit` created before `before` (all when
    /// `None`).
    pub async fn imports(&self, before: Option<(i64, &str)>, limit: i64) -> StoreResult<Vec<ImportRecord>> {
        let (at, id) = before.unwrap_or((i64::MAX, ""));
        let sql = self.db.sql_string(format!(
            "SELECT {COLUMNS} FROM _imports WHERE state <> 'receiving' AND (created_at < ? OR (created_at = ? AND id < ?) OR ? = '')
             ORDER BY created_at DESC, id DESC LIMIT ?"
        ));
        let rows = sqlx::query(&sql).bind(at).bind(at).bind(id).bind(id).bind(limit).fetch_all(&mut *self.db.reader().await?).await?;
        Ok(rows.iter().map(decode).collect::<Result<_, _>>()?)
    }

    /// How many imports are not over (those arriving included).
    pub async fn unfinished_imports(&self) -> StoreResult<i64> {
        let sql = "SELECT COUNT(*) FROM _imports WHERE state IN ('receiving', 'queued', 'running')";
        Ok(sqlx::query_scalar(sql).fetch_one(&mut *self.db.reader().await?).await?)
    }

    /// Takes import `id` into the running ones if fewer than `at_once` run: a queued import
    /// starts (at `now`), a running one goes on.
    pub async fn start_import(&self, id: &str, now: i64, at_once: i64) -> StoreResult<ImportStart> {
        let sql = self.db.sql(
            "UPDATE _imports SET state = 'running', started_at = ? WHERE id = ? AND state = 'queued'
                 AND (SELECT COUNT(*) FROM _imports WHERE state = 'running') < ?",
        );
        let started = sqlx::query(&sql).bind(now).bind(id).bind(at_once).execute(&mut *self.db.writer().await?).await?;
        if started.rows_affected() == 1 {
            return Ok(ImportStart::Running);
        }
        let state = self.import(id).await?.map(|i| i.state);
        Ok(match state {
            Some(ImportState::Running) => ImportStart::Running,
            Some(ImportState::Queued) => ImportStart::Wait,
            _ => ImportStart::Over,
        })
    }

    /// Ends import `id` (running or queued) in `state`, with `message` when it failed; its body
    /// goes. False when it was already over.
    pub async fn finish_import(&self, id: &str, state: ImportState, message: Option<&str>, now: i64) -> StoreResult<bool> {
        let mut tx = self.db.begin().await?;
        let sql = self.db.sql(
            "UPDATE _imports SET state = ?, message = ?, finished_at = ?, started_at = COALESCE(started_at, ?)
             WHERE id = ? AND state IN ('queued', 'running')",
        );
        let done = sqlx::query(&sql).bind(state.name()).bind(message).bind(now).bind(now).bind(id).execute(&mut *tx).await?;
        if done.rows_affected() == 1 {
            sqlx::query(&self.db.sql("DELETE FROM _import_chunks WHERE import_id = ?")).bind(id).execute(&mut *tx).await?;
        }
        tx.commit().await?;
        Ok(done.rows_affected() == 1)
    }

    /// The rows import `id` rejected after row `after`, in row order, at most `limit`.
    pub async fn import_errors(&self, id: &str, after: i64, limit: i64) -> StoreResult<Vec<RejectedRow>> {
        let sql = self.db.sql(
            "SELECT row_number, field, message FROM _import_errors WHERE import_id = ? AND row_number > ? ORDER BY row_number LIMIT ?",
        );
        let rows = sqlx::query(&sql).bind(id).bind(after).bind(limit).fetch_all(&mut *self.db.reader().await?).await?;
        Ok(rows.iter().map(|r| RejectedRow { row: r.get(0), field: r.get(1), message: r.get(2) }).collect())
    }

    /// Imports left receiving since before `before` (their upload was cut off with the process
    /// that took it): forgotten with what they stored.
    pub async fn discard_stale_imports(&self, before: i64) -> StoreResult<usize> {
        let sql = self.db.sql("SELECT id FROM _imports WHERE state = 'receiving' AND created_at < ?");
        let ids: Vec<String> = sqlx::query_scalar(&sql).bind(before).fetch_all(&mut *self.db.reader().await?).await?;
        for id in &ids {
            self.discard_import(id).await?;
        }
        Ok(ids.len())
    }
}

//! One instance's data: its own SQLite file (or PostgreSQL schema) with typed tables generated
//! from its model.

mod batches;
mod codec;
mod combined_reads;
mod communications;
mod direct;
mod export_pages;
mod extensions;
mod flow_runs;
mod flow_stats;
mod flows;
mod global_data;
mod import_rows;
mod import_writes;
mod imports;
mod media_files;
mod monitors;
mod paging;
mod point_reads;
mod recipients;
mod records;
mod schema;
mod secrets;
mod storage;

pub use batches::RecipientBatches;
pub use communications::Communication;
pub use export_pages::RecipientWithRecords;
pub use extensions::{ExecutionLog, ExtensionRecord, RecordsStamp, Usage, KEPT_EXECUTIONS, RECORD_TTL};
pub use flow_runs::{FlowRun, NewFlowRun, RunProgress, RunState};
pub use flow_stats::NodeCount;
pub use flows::StoredFlow;
pub use global_data::GlobalValue;
pub use import_rows::{BatchOutcome, ImportBatch, ImportRow, Refusal, Related};
pub use imports::{ImportCounts, ImportRecord, ImportStart, ImportState, NewImport, RejectedRow, IMPORT_CHUNK_BYTES, MAX_RECORDED_ERRORS};
pub use media_files::{Applied, MediaChange, SharedArea, FOLDER_DIGEST};
pub use monitors::{MonitorRun, KEPT_RUNS};
pub use paging::DocumentInfo;
pub use recipients::{EventRecord, Recipient};
pub use records::{EntryOutcome, Record, TableRef, Upserted};
pub use schema::{gdt_table, otm_table};
pub use secrets::{Sealed, SecretInfo};

pub use super::db::Conn;
use super::db::Db;
use super::{StoreError, StoreResult};
use crate::model::Model;

#[derive(Debug, Clone)]
pub struct TenantDb {
    db: Db,
    /// Point reads on the calling thread (SQLite only): `direct.rs`.
    direct: Option<std::sync::Arc<direct::DirectReaders>>,
    extension_records: extensions::RecordCache,
    flow_cache: flows::FlowCache,
    point_reads: std::sync::Arc<point_reads::PointReads>,
    /// Point reads in flight and waiting (PostgreSQL): `combined_reads.rs`.
    combined_reads: std::sync::Arc<combined_reads::CombinedReads>,
}

impl TenantDb {
    /// Opens an instance's store (`Backend::open_tenant` chooses where).
    pub(in crate::store) fn new(db: Db) -> TenantDb {
        let direct = db.sqlite_file().map(|file| std::sync::Arc::new(direct::DirectReaders::new(file.into())));
        TenantDb {
            db,
            direct,
            extension_records: extensions::RecordCache::new(),
            flow_cache: flows::FlowCache::default(),
            point_reads: std::sync::Arc::default(),
            combined_reads: std::sync::Arc::new(combined_reads::CombinedReads::new()),
        }
    }

    /// Closes the point readers unused as long as an idle sqlx reader is kept (the registry's
    /// rounds), so that an open but quiet instance holds no more descriptors than before.
    pub fn shed_idle_readers(&self) {
        if let Some(direct) = &self.direct {
            direct.shed_idle(super::db::SQLITE_READER_IDLE);
        }
    }

    pub fn dialect(&self) -> crate::rsql::Dialect {
        self.db.dialect
    }

    /// Brings the typed tables in line with `model` and stores the initial values of Global Data
    /// items that have none yet, in one transaction.
    pub async fn ensure_schema(&self, model: &Model) -> StoreResult<()> {
        let mut tx = self.db.begin().await?;
        schema::ensure(&mut tx, self.db.dialect, &model.def).await?;
        global_data::seed(&mut tx, self.db.dialect, model).await?;
        tx.commit().await?;
        Ok(())
    }

    /// Connections of this instance's own pools: (open, idle), for the operator's metrics (none
    /// on PostgreSQL, where instances share the node's pool).
    pub fn connections(&self) -> (u32, usize) {
        let (open, idle) = self.db.connections();
        let direct = self.direct.as_ref().map_or(0, |d| d.idle());
        (open + direct as u32, idle + direct)
    }

    /// A reader for a stream of rows ([`TenantDb::recipients_stream`]).
    pub async fn stream_reader(&self) -> StoreResult<Conn> {
        Ok(self.db.reader().await?)
    }

    /// Checks that the store is there and is a database (at activation).
    pub async fn check(&self) -> StoreResult<()> {
        Ok(self.db.check().await?)
    }

    /// Closes the store's own connections (an instance put to sleep).
    pub async fn close(&self) {
        self.db.close().await
    }

    /// Writes a consistent copy of this (SQLite) database to the new file `path`.
    pub async fn copy_into(&self, path: &std::path::Path) -> StoreResult<()> {
        sqlx::query("VACUUM INTO ?").bind(path.to_string_lossy().into_owned()).execute(&mut *self.db.reader().await?).await?;
        Ok(())
    }

    /// Counts recipients (for progress and tests).
    pub async fn count_recipients(&self) -> StoreResult<i64> {
        let row: (i64,) = sqlx::query_as("SELECT COUNT(*) FROM recipients").fetch_one(&mut *self.db.reader().await?).await?;
        Ok(row.0)
    }
}

/// Maps a unique violation to a conflict with `message`; other errors pass.
fn conflict_on_unique(e: sqlx::Error, message: impl FnOnce() -> String) -> StoreError {
    match e {
        sqlx::Error::Database(d) if d.is_unique_violation() => StoreError::Conflict(message()),
        e => e.into(),
    }
}

/// A select list: `key` (an internal column), then the named columns in model order, so that a
/// field's value is at its model index + 1.
fn select_list<'a>(key: &str, names: impl Iterator<Item = &'a str>) -> String {
    let mut out = String::from(key);
    for n in names {
        out.push_str(", ");
        out.push_str(&crate::model::column(n));
    }
    out
}

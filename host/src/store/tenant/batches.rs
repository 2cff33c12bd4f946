//! Reading a large selection of recipients (exports, the unpaged collection): the rows come in
//! batches through a small bounded channel, so a slow reader slows the read rather than the
//! server gathering the answer, and the reading and the writing out run side by side.
//!
//! On SQLite, sqlx would hand each row from its worker thread to the async side and copy it twice
//! on the way (into its SQLite row, then into the Any driver's): an export of a million recipients
//! spent most of its 15 s there (BENCHMARKS.md, "Bulk transfer"). The batches are read instead by
//! a connection of their own to the file, with rusqlite (`direct.rs`), on a blocking thread, each
//! row decoded straight from SQLite's memory. On PostgreSQL the rows come from sqlx's stream.
//!
//! Either way the selection is one statement: one snapshot from its first row to its last
//! (WAL on SQLite, the statement's snapshot on PostgreSQL), so rows written meanwhile are in it
//! whole or not at all.

use std::path::Path;
use std::time::Duration;

use futures_util::StreamExt;
use tokio::sync::mpsc;

use super::direct::{failed, open, read, stored};
use super::{Recipient, TenantDb};
use crate::model::{FieldType, Model, Value};
use crate::rsql::Condition;
use crate::store::StoreResult;

/// Recipients a batch holds.
const BATCH: usize = 512;
/// Batches read ahead of the consumer.
const AHEAD: usize = 4;
/// How long the SQLite read waits for a lock another connection holds (as sqlx's connections do).
const BUSY_TIMEOUT: Duration = Duration::from_secs(10);

/// The batches of a selection: a failure is the last item; the reading stops when this is dropped.
pub type RecipientBatches = mpsc::Receiver<StoreResult<Vec<Recipient>>>;

impl TenantDb {
    /// Every recipient `condition` selects, in key order, in batches.
    pub fn recipient_batches(&self, model: &Model, condition: Option<&Condition>) -> RecipientBatches {
        let (tx, rx) = mpsc::channel(AHEAD);
        let sql = self.recipients_sql(model, condition);
        let binds = condition.map(|c| c.binds.clone()).unwrap_or_default();
        let types: Vec<FieldType> = model.def.person_data.iter().map(|f| f.ty).collect();
        match self.db.sqlite_file() {
            Some(file) => {
                let file = file.to_path_buf();
                tokio::task::spawn_blocking(move || {
                    if let Err(e) = scan(&file, &sql, &binds, &types, &tx) {
                        let _ = tx.blocking_send(Err(e));
                    }
                });
            }
            None => {
                let db = self.clone();
                tokio::spawn(async move {
                    if let Err(e) = stream(&db, &sql, &binds, &types, &tx).await {
                        let _ = tx.send(Err(e)).await;
                    }
                });
            }
        }
        rx
    }
}

/// The batch to send, when `batch` is full (or, at the `last`, holds anything).
fn full(batch: &mut Vec<Recipient>, last: bool) -> Option<Vec<Recipient>> {
    (batch.len() >= BATCH || (last && !batch.is_empty())).then(|| std::mem::replace(batch, Vec::with_capacity(BATCH)))
}

type Sender = mpsc::Sender<StoreResult<Vec<Recipient>>>;

fn scan(file: &Path, sql: &str, binds: &[Value], types: &[FieldType], tx: &Sender) -> StoreResult<()> {
    let conn = open(file, BUSY_TIMEOUT)?;
    let mut statement = conn.prepare(sql).map_err(failed)?;
    let mut rows = statement.query(rusqlite::params_from_iter(binds.iter().map(stored))).map_err(failed)?;
    let mut batch = Vec::with_capacity(BATCH);
    while let Some(row) = rows.next().map_err(failed)? {
        let mut values = Vec::with_capacity(types.len());
        for (i, ty) in types.iter().enumerate() {
            values.push(read(row.get_ref(i + 1).map_err(failed)?, *ty)?);
        }
        batch.push(Recipient { key: row.get(0).map_err(failed)?, values });
        if let Some(full) = full(&mut batch, false) {
            if tx.blocking_send(Ok(full)).is_err() {
                return Ok(()); // the consumer went away
            }
        }
    }
    if let Some(rest) = full(&mut batch, true) {
        let _ = tx.blocking_send(Ok(rest));
    }
    Ok(())
}

async fn stream(db: &TenantDb, sql: &str, binds: &[Value], types: &[FieldType], tx: &Sender) -> StoreResult<()> {
    let mut reader = db.stream_reader().await?;
    let rows = db.typed_recipients_stream(&mut reader, types, binds, sql);
    futures_util::pin_mut!(rows);
    let mut batch = Vec::with_capacity(BATCH);
    while let Some(row) = rows.next().await {
        batch.push(row?);
        if let Some(full) = full(&mut batch, false) {
            if tx.send(Ok(full)).await.is_err() {
                return Ok(());
            }
        }
    }
    if let Some(rest) = full(&mut batch, true) {
        let _ = tx.send(Ok(rest)).await;
    }
    Ok(())
}

#[cfg(test)]
pub(super) mod tests {
    use chrono::{NaiveDate, NaiveDateTime};
    use futures_util::StreamExt;

    use super::*;
    use crate::model::{column, DefinitionFile, DEMO};

    async fn collect(mut batches: RecipientBatches) -> Vec<(i64, Vec<Value>)> {
        let mut all = Vec::new();
        while let Some(batch) = batches.recv().await {
            all.extend(batch.unwrap().into_iter().map(|r| (r.key, r.values)));
        }
        all
    }

    /// `n` recipients of the demo's model with a value of every type (every 7th empty).
    pub(in crate::store::tenant) fn sample_rows(model: &Model, n: u64) -> Vec<Vec<Value>> {
        let day = NaiveDate::from_ymd_opt(1990, 1, 1).unwrap();
        (1..=n)
            .map(|i| {
                model
                    .def
                    .person_data
                    .iter()
                    .map(|f| match (f.name.as_str(), f.ty) {
                        ("USER_ID", _) => Value::Number(i as f64),
                        (_, _) if i % 7 == 0 => Value::Null,
                        (name, FieldType::String) => Value::Text(format!("{name} {i}, \"quoted\" é")),
                        (_, FieldType::Number) => Value::Number(i as f64 / 4.0),
                        (_, FieldType::Boolean) => Value::Bool(i % 2 == 0),
                        (_, FieldType::Date) => Value::Date(day + chrono::Days::new(i)),
                        (_, FieldType::Timestamp) => Value::Timestamp(
                            NaiveDateTime::parse_from_str("2026-01-01T00:00:00.000", "%Y-%m-%dT%H:%M:%S%.3f").unwrap()
                                + chrono::Duration::milliseconds(i as i64 * 1001),
                        ),
                    })
                    .collect()
            })
            .collect()
    }

    /// The SQLite scan reads what sqlx reads, for every field type, filtered by a value of each.
    #[tokio::test]
    async fn the_sqlite_scan_reads_what_sqlx_reads() {
        let dir = tempfile::tempdir().unwrap();
        let db = crate::store::Backend::Sqlite { data_dir: dir.path().into() }.open_tenant("x").await.unwrap();
        let model = Model::new(DefinitionFile::from_toml(DEMO).unwrap().model).unwrap();
        db.ensure_schema(&model).await.unwrap();
        let day = NaiveDate::from_ymd_opt(1990, 1, 1).unwrap();
        db.insert_recipients(&model, &sample_rows(&model, 1300)).await.unwrap();
        let condition = Condition {
            sql: format!(
                "{} >= ? AND {} = ? AND {} > ? AND {} <> ? AND {} < ?",
                column("BIRTHDATE"),
                column("OPTIN"),
                column("SCORE"),
                column("CITY"),
                column("CREATED_AT")
            ),
            binds: vec![
                Value::Date(day + chrono::Days::new(100)),
                Value::Bool(true),
                Value::Number(30.0),
                Value::Text("CITY 200, \"quoted\" é".into()),
                Value::Timestamp(NaiveDateTime::parse_from_str("2026-01-01T00:15:00.000", "%Y-%m-%dT%H:%M:%S%.3f").unwrap()),
            ],
        };
        for condition in [None, Some(&condition)] {
            let scanned = collect(db.recipient_batches(&model, condition)).await;
            let sql = db.recipients_sql(&model, condition);
            let mut reader = db.stream_reader().await.unwrap();
            let streamed: Vec<(i64, Vec<Value>)> =
                db.recipients_stream(&mut reader, &model, condition, &sql).map(|r| r.map(|r| (r.key, r.values)).unwrap()).collect().await;
            assert!(streamed.len() > 300, "the filter selects many: {}", streamed.len());
            assert_eq!(scanned, streamed);
        }
    }

    #[tokio::test]
    async fn a_store_that_is_not_a_database_fails_the_scan() {
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join("x.db");
        std::fs::write(&file, b"not a database, not even close to one: some text to fill the header").unwrap();
        let (tx, mut rx) = mpsc::channel(AHEAD);
        let failed =
            tokio::task::spawn_blocking(move || scan(&file, "SELECT COUNT(*), 1 FROM sqlite_master", &[], &[], &tx)).await.unwrap();
        assert!(failed.is_err());
        assert!(rx.recv().await.is_none());
    }
}

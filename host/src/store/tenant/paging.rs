//! Paging documents of recipients, stored with the instance's data: a row per document (size,
//! creation, expiry) and its selection of recipient keys in encoded chunks. Nothing stays in the
//! server's memory, so a document costs no RAM while open and any node can serve it.

use futures_util::TryStreamExt;
use sqlx::Row;

use super::codec::bind_all;
use super::TenantDb;
use crate::paging::{expires_at, keys, MAX_LIVE_DOCUMENTS};
use crate::rsql::Condition;
use crate::store::db::Db;
use crate::store::{StoreError, StoreResult};

/// A live document.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct DocumentInfo {
    pub size: u64,
}

impl TenantDb {
    /// Freezes the recipients matching `condition` (all without one), in creation order, as
    /// document `id`. Streams the keys, so memory stays flat whatever the selection's size.
    pub async fn create_document(&self, id: &str, condition: Option<&Condition>, now: i64) -> StoreResult<DocumentInfo> {
        let mut sql = "SELECT _id FROM recipients".to_string();
        if let Some(c) = condition {
            sql.push_str(" WHERE ");
            sql.push_str(&c.sql);
        }
        sql.push_str(" ORDER BY _id");
        let sql = self.db.sql_string(sql);
        let binds = condition.map(|c| c.binds.as_slice()).unwrap_or_default();

        let mut tx = self.db.begin().await?;
        // Expired documents of this instance go first, so they never pile up.
        sqlx::query(&self.db.sql("DELETE FROM _paging_documents WHERE expires_at <= ?")).bind(now).execute(&mut *tx).await?;
        // So do the oldest beyond the bound of live documents, this one counted.
        let evict = "DELETE FROM _paging_documents WHERE id IN \
            (SELECT id FROM _paging_documents ORDER BY created_at DESC, id LIMIT ? OFFSET ?)";
        sqlx::query(&self.db.sql(evict)).bind(i64::MAX).bind(MAX_LIVE_DOCUMENTS - 1).execute(&mut *tx).await?;
        sqlx::query(&self.db.sql("INSERT INTO _paging_documents (id, size, created_at, expires_at) VALUES (?, 0, ?, ?)"))
            .bind(id)
            .bind(now)
            .bind(expires_at(now, now))
            .execute(&mut *tx)
            .await?;
        // The selection is read on a reader connection while the chunks are written in `tx`:
        // both see the same committed recipients (on SQLite the writer is this process's only one;
        // on PostgreSQL a recipient committed in between may or may not be in the selection, as
        // with any selection made while others write).
        let mut reader = self.db.reader().await?;
        let mut rows = bind_all(sqlx::query(&sql), binds).fetch(&mut *reader);
        let mut chunk = Vec::with_capacity(keys::CHUNK);
        let mut chunk_no = 0i64;
        let mut size = 0u64;
        while let Some(row) = rows.try_next().await? {
            chunk.push(row.try_get::<i64, _>(0)?);
            size += 1;
            if chunk.len() == keys::CHUNK {
                insert_chunk(&mut tx, &self.db, id, chunk_no, &chunk).await?;
                chunk_no += 1;
                chunk.clear();
            }
        }
        drop(rows);
        if !chunk.is_empty() {
            insert_chunk(&mut tx, &self.db, id, chunk_no, &chunk).await?;
        }
        sqlx::query(&self.db.sql("UPDATE _paging_documents SET size = ? WHERE id = ?"))
            .bind(size as i64)
            .bind(id)
            .execute(&mut *tx)
            .await?;
        tx.commit().await?;
        Ok(DocumentInfo { size })
    }

    /// The document `id` if it is alive at `now`; a live document's lifetime is extended by this
    /// use (5 minutes from now, at most 30 from its creation).
    pub async fn use_document(&self, id: &str, now: i64) -> StoreResult<Option<DocumentInfo>> {
        let sql = format!(
            "UPDATE _paging_documents SET expires_at = {} WHERE id = ? AND expires_at > ? RETURNING size",
            self.db.least("? + ?", "created_at + ?")
        );
        let sql = self.db.sql_string(sql);
        let row = sqlx::query(&sql)
            .bind(now)
            .bind(crate::paging::IDLE_LIFETIME_MS)
            .bind(crate::paging::MAX_LIFETIME_MS)
            .bind(id)
            .bind(now)
            .fetch_optional(&mut *self.db.writer().await?)
            .await?;
        Ok(row.map(|r| DocumentInfo { size: r.get::<i64, _>(0) as u64 }))
    }

    /// The recipient keys at 1-based positions `start .. start + count` of document `id`.
    pub async fn document_keys(&self, id: &str, start: u64, count: u64) -> StoreResult<Vec<i64>> {
        let first = (start - 1) / keys::CHUNK as u64;
        let last = (start - 1 + count.max(1) - 1) / keys::CHUNK as u64;
        let rows =
            sqlx::query(&self.db.sql("SELECT chunk, keys FROM _paging_chunks WHERE document = ? AND chunk BETWEEN ? AND ? ORDER BY chunk"))
                .bind(id)
                .bind(first as i64)
                .bind(last as i64)
                .fetch_all(&mut *self.db.reader().await?)
                .await?;
        let mut all = Vec::new();
        for r in &rows {
            let bytes: Vec<u8> = r.try_get(1)?;
            let decoded =
                keys::decode(&bytes).ok_or_else(|| StoreError::Db(sqlx::Error::Decode("a stored paging chunk is malformed".into())))?;
            all.extend(decoded);
        }
        let skip = ((start - 1) % keys::CHUNK as u64) as usize;
        Ok(all.into_iter().skip(skip).take(count as usize).collect())
    }
}

async fn insert_chunk(tx: &mut sqlx::AnyConnection, db: &Db, id: &str, chunk: i64, keys: &[i64]) -> StoreResult<()> {
    sqlx::query(&db.sql("INSERT INTO _paging_chunks (document, chunk, keys) VALUES (?, ?, ?)"))
        .bind(id)
        .bind(chunk)
        .bind(keys::encode(keys))
        .execute(&mut *tx)
        .await?;
    Ok(())
}

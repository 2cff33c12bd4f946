//! What the instance knows of its uploaded extensions: type, size and content hash, by path.

use sqlx::Row;

use super::TenantDb;
use crate::store::{now_millis, StoreResult};

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ExtensionRecord {
    pub path: String,
    pub kind: String,
    pub size: u64,
    pub sha256: String,
}

impl TenantDb {
    pub async fn extension(&self, path: &str) -> StoreResult<Option<ExtensionRecord>> {
        let row = sqlx::query("SELECT path, type, size, sha256 FROM _extensions WHERE path = ?")
            .bind(path)
            .fetch_optional(&self.pools.read)
            .await?;
        Ok(row.map(|r| ExtensionRecord { path: r.get(0), kind: r.get(1), size: r.get::<i64, _>(2) as u64, sha256: r.get(3) }))
    }

    /// Every extension whose path starts with `prefix` (a folder and `/`, or empty for all).
    pub async fn extensions(&self, prefix: &str) -> StoreResult<Vec<ExtensionRecord>> {
        let rows = sqlx::query("SELECT path, type, size, sha256 FROM _extensions WHERE substr(path, 1, length(?)) = ? ORDER BY path")
            .bind(prefix)
            .bind(prefix)
            .fetch_all(&self.pools.read)
            .await?;
        Ok(rows
            .iter()
            .map(|r| ExtensionRecord { path: r.get(0), kind: r.get(1), size: r.get::<i64, _>(2) as u64, sha256: r.get(3) })
            .collect())
    }

    pub async fn put_extension(&self, e: &ExtensionRecord) -> StoreResult<()> {
        sqlx::query(
            "INSERT INTO _extensions (path, type, size, sha256, updated_at) VALUES (?, ?, ?, ?, ?)
             ON CONFLICT (path) DO UPDATE SET type = excluded.type, size = excluded.size,
               sha256 = excluded.sha256, updated_at = excluded.updated_at",
        )
        .bind(&e.path)
        .bind(&e.kind)
        .bind(e.size as i64)
        .bind(&e.sha256)
        .bind(now_millis())
        .execute(&self.pools.write)
        .await?;
        Ok(())
    }

    pub async fn delete_extension(&self, path: &str) -> StoreResult<bool> {
        let done = sqlx::query("DELETE FROM _extensions WHERE path = ?").bind(path).execute(&self.pools.write).await?;
        Ok(done.rows_affected() > 0)
    }
}

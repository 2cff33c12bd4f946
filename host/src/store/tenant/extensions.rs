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

/// What one execution of an extension left for its operator.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ExecutionLog {
    pub extension: String,
    /// Milliseconds since the Unix epoch.
    pub at: i64,
    pub duration_ms: i64,
    /// `ok`, `deadline`, or `failed: <reason>`.
    pub outcome: String,
    /// Lines of the `log` interface.
    pub log: Vec<String>,
    pub stdout: String,
    pub stderr: String,
}

/// Executions kept per extension.
const KEPT_EXECUTIONS: i64 = 100;

impl TenantDb {
    /// Keeps executions (one transaction), then trims each extension's log to the newest
    /// `KEPT_EXECUTIONS`.
    pub async fn insert_execution_logs(&self, entries: &[ExecutionLog]) -> StoreResult<()> {
        let mut tx = self.pools.write.begin().await?;
        for e in entries {
            sqlx::query("INSERT INTO _extension_logs (extension, at, duration_ms, outcome, log, stdout, stderr) VALUES (?, ?, ?, ?, ?, ?, ?)")
                .bind(&e.extension)
                .bind(e.at)
                .bind(e.duration_ms)
                .bind(&e.outcome)
                .bind(serde_json::to_string(&e.log).expect("strings serialise"))
                .bind(&e.stdout)
                .bind(&e.stderr)
                .execute(&mut *tx)
                .await?;
        }
        let mut extensions: Vec<&str> = entries.iter().map(|e| e.extension.as_str()).collect();
        extensions.sort_unstable();
        extensions.dedup();
        for extension in extensions {
            sqlx::query(
                "DELETE FROM _extension_logs WHERE extension = ? AND id <= (SELECT id FROM _extension_logs WHERE extension = ? ORDER BY id DESC LIMIT 1 OFFSET ?)",
            )
            .bind(extension)
            .bind(extension)
            .bind(KEPT_EXECUTIONS)
            .execute(&mut *tx)
            .await?;
        }
        tx.commit().await?;
        Ok(())
    }

    /// The newest executions of an extension, newest first.
    pub async fn execution_logs(&self, extension: &str, limit: u32) -> StoreResult<Vec<ExecutionLog>> {
        let rows = sqlx::query(
            "SELECT extension, at, duration_ms, outcome, log, stdout, stderr FROM _extension_logs WHERE extension = ? ORDER BY id DESC LIMIT ?",
        )
        .bind(extension)
        .bind(i64::from(limit))
        .fetch_all(&self.pools.read)
        .await?;
        Ok(rows
            .iter()
            .map(|r| ExecutionLog {
                extension: r.get(0),
                at: r.get(1),
                duration_ms: r.get(2),
                outcome: r.get(3),
                log: serde_json::from_str(&r.get::<String, _>(4)).unwrap_or_default(),
                stdout: r.get(5),
                stderr: r.get(6),
            })
            .collect())
    }
}

//! Files every node must read the same (`_shared_files`): the Context Parameter Schemas and the
//! committed templates, which calls and flow runs on any node use. The media area on each node's
//! disk keeps its copy for listing and WebDAV; readers ask here first.

use sqlx::Row;

use super::TenantDb;
use crate::store::{now_millis, StoreResult};

/// Which kind of shared file.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SharedArea {
    Contexts,
    CommittedTemplates,
}

impl SharedArea {
    fn name(self) -> &'static str {
        match self {
            SharedArea::Contexts => "contexts",
            SharedArea::CommittedTemplates => "committed-templates",
        }
    }
}

impl TenantDb {
    pub async fn shared_file(&self, area: SharedArea, path: &str) -> StoreResult<Option<Vec<u8>>> {
        let sql = self.db.sql("SELECT content FROM _shared_files WHERE area = ? AND path = ?");
        let row = sqlx::query(&sql).bind(area.name()).bind(path).fetch_optional(&mut *self.db.reader().await?).await?;
        Ok(row.map(|r| r.get(0)))
    }

    /// The paths in `area` whose name is `stem` plus an extension (`welcome` finds
    /// `welcome.html`), in order.
    pub async fn shared_paths_with_stem(&self, area: SharedArea, stem: &str) -> StoreResult<Vec<String>> {
        let sql = self.db.sql("SELECT path FROM _shared_files WHERE area = ? AND path > ? AND path < ? ORDER BY path");
        // Every `stem.<extension>` sorts between `stem.` and `stem/` ('/' follows '.').
        let rows = sqlx::query(&sql)
            .bind(area.name())
            .bind(format!("{stem}."))
            .bind(format!("{stem}/"))
            .fetch_all(&mut *self.db.reader().await?)
            .await?;
        let paths: Vec<String> = rows.iter().map(|r| r.get(0)).collect();
        Ok(paths.into_iter().filter(|p| !p[stem.len() + 1..].contains(['/', '.'])).collect())
    }

    /// Stores a file; returns whether one was there.
    pub async fn put_shared_file(&self, area: SharedArea, path: &str, content: &[u8]) -> StoreResult<bool> {
        if self.insert_shared_file(area, path, content).await? {
            return Ok(false);
        }
        let sql = self.db.sql("UPDATE _shared_files SET content = ?, updated_at = ? WHERE area = ? AND path = ?");
        sqlx::query(&sql).bind(content).bind(now_millis()).bind(area.name()).bind(path).execute(&mut *self.db.writer().await?).await?;
        Ok(true)
    }

    /// Stores a file unless one is there; returns whether it stored it.
    pub async fn insert_shared_file(&self, area: SharedArea, path: &str, content: &[u8]) -> StoreResult<bool> {
        let sql = self
            .db
            .sql("INSERT INTO _shared_files (area, path, content, updated_at) VALUES (?, ?, ?, ?) ON CONFLICT (area, path) DO NOTHING");
        let done =
            sqlx::query(&sql).bind(area.name()).bind(path).bind(content).bind(now_millis()).execute(&mut *self.db.writer().await?).await?;
        Ok(done.rows_affected() == 1)
    }
}

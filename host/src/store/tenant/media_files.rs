//! The media area in the instance's store (`_media_files`): every file under the instance's
//! `media/` and `committed/` folders, keyed by its path there (`media/resources/logo.png`; a
//! folder is `path/` with no content), with its SHA-256 and size. This is the truth on every
//! backend; each node's disk holds a copy that `tenants::media` keeps in line by the generation
//! (`_media_state`), which every change raises in the transaction that makes it.
//!
//! Flow runs read Context Parameter Schemas and committed templates from here directly
//! ([`SharedArea`]), without the disk.

use sqlx::Row;

use super::TenantDb;
use crate::store::{now_millis, StoreResult};

/// Files that runs read straight from the store.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SharedArea {
    Contexts,
    CommittedTemplates,
}

impl SharedArea {
    /// The folder of the area in the media paths.
    pub fn prefix(self) -> &'static str {
        match self {
            SharedArea::Contexts => "media/contexts/",
            SharedArea::CommittedTemplates => "committed/templates/",
        }
    }
}

/// One change to the media files.
#[derive(Debug)]
pub enum MediaChange {
    /// A file (its content and SHA-256 in hex), or a folder (a path ending in `/`, no content).
    Put { path: String, content: Vec<u8>, digest: String },
    /// `path` and everything under `path/`.
    Remove { path: String },
}

/// What a change set did.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Applied {
    /// Done; the media's generation is now this.
    At(i64),
    /// Nothing done: the file a creation named exists.
    Exists,
}

/// The folder marker's digest.
pub const FOLDER_DIGEST: &str = "folder";

/// The first path after every path under `folder/` (`'0'` follows `'/'`), for range scans that
/// need no `LIKE` escaping.
fn after_folder(path: &str) -> String {
    format!("{path}0")
}

impl TenantDb {
    /// The generation of the media files: it goes up with every change.
    pub async fn media_generation(&self) -> StoreResult<i64> {
        let sql = self.db.sql("SELECT generation FROM _media_state WHERE id = 1");
        Ok(sqlx::query(&sql).fetch_one(&mut *self.db.reader().await?).await?.get(0))
    }

    /// Every path and its digest (`""` for a file not hashed yet: see [`TenantDb::set_media_digests`]).
    pub async fn media_index(&self) -> StoreResult<Vec<(String, String)>> {
        let sql = self.db.sql("SELECT path, digest FROM _media_files ORDER BY path");
        let rows = sqlx::query(&sql).fetch_all(&mut *self.db.reader().await?).await?;
        Ok(rows.iter().map(|r| (r.get(0), r.get(1))).collect())
    }

    /// The content of a file.
    pub async fn media_file(&self, path: &str) -> StoreResult<Option<Vec<u8>>> {
        let sql = self.db.sql("SELECT content FROM _media_files WHERE path = ?");
        let row = sqlx::query(&sql).bind(path).fetch_optional(&mut *self.db.reader().await?).await?;
        Ok(row.map(|r| r.get(0)))
    }

    /// The bytes the media files take (what the quota counts) plus those of the extensions.
    pub async fn media_usage(&self) -> StoreResult<u64> {
        let sql = self.db.sql(
            "SELECT CAST((SELECT COALESCE(SUM(size), 0) FROM _media_files) + (SELECT COALESCE(SUM(size), 0) FROM _extensions) AS BIGINT)",
        );
        let used: i64 = sqlx::query(&sql).fetch_one(&mut *self.db.reader().await?).await?.get(0);
        Ok(used.max(0) as u64)
    }

    /// Records the digests of files stored without one (moved in from an older layout).
    pub async fn set_media_digests(&self, digests: &[(String, String)]) -> StoreResult<()> {
        let sql = self.db.sql("UPDATE _media_files SET digest = ? WHERE path = ? AND digest = ''");
        let mut tx = self.db.begin().await?;
        for (path, digest) in digests {
            sqlx::query(&sql).bind(digest).bind(path).execute(&mut *tx).await?;
        }
        tx.commit().await?;
        Ok(())
    }

    /// Applies `changes` in one transaction and raises the generation. With `create`, the first
    /// change is a creation: when its path exists nothing is done ([`Applied::Exists`]).
    /// `keep_existing` makes every put a creation that leaves an existing file as it is.
    pub async fn apply_media_changes(&self, changes: Vec<MediaChange>, create: bool, keep_existing: bool) -> StoreResult<Applied> {
        let now = now_millis();
        let insert = self
            .db
            .sql("INSERT INTO _media_files (path, content, digest, size, updated_at) VALUES (?, ?, ?, ?, ?) ON CONFLICT (path) DO NOTHING");
        let upsert = self.db.sql(
            "INSERT INTO _media_files (path, content, digest, size, updated_at) VALUES (?, ?, ?, ?, ?)
             ON CONFLICT (path) DO UPDATE SET content = excluded.content, digest = excluded.digest, size = excluded.size, updated_at = excluded.updated_at",
        );
        let remove = self.db.sql("DELETE FROM _media_files WHERE path = ? OR (path >= ? AND path < ?)");
        let mut tx = self.db.begin().await?;
        for (i, change) in changes.into_iter().enumerate() {
            match change {
                MediaChange::Put { path, content, digest } => {
                    let only_new = keep_existing || (create && i == 0);
                    let size = content.len() as i64;
                    let sql = if only_new { &insert } else { &upsert };
                    let done = sqlx::query(sql).bind(&path).bind(content).bind(digest).bind(size).bind(now).execute(&mut *tx).await?;
                    if create && i == 0 && done.rows_affected() == 0 {
                        return Ok(Applied::Exists);
                    }
                }
                MediaChange::Remove { path } => {
                    let folder = format!("{path}/");
                    let end = after_folder(&path);
                    sqlx::query(&remove).bind(&path).bind(&folder).bind(end).execute(&mut *tx).await?;
                }
            }
        }
        let sql = self.db.sql("UPDATE _media_state SET generation = generation + 1 WHERE id = 1 RETURNING generation");
        let generation: i64 = sqlx::query(&sql).fetch_one(&mut *tx).await?.get(0);
        tx.commit().await?;
        Ok(Applied::At(generation))
    }

    pub async fn shared_file(&self, area: SharedArea, path: &str) -> StoreResult<Option<Vec<u8>>> {
        self.media_file(&format!("{}{path}", area.prefix())).await
    }

    /// The paths in `area` whose name is `stem` plus an extension (`welcome` finds
    /// `welcome.html`), in order, relative to the area.
    pub async fn shared_paths_with_stem(&self, area: SharedArea, stem: &str) -> StoreResult<Vec<String>> {
        let sql = self.db.sql("SELECT path FROM _media_files WHERE path > ? AND path < ? ORDER BY path");
        // Every `stem.<extension>` sorts between `stem.` and `stem/` ('/' follows '.').
        let prefix = area.prefix();
        let rows = sqlx::query(&sql)
            .bind(format!("{prefix}{stem}."))
            .bind(format!("{prefix}{stem}/"))
            .fetch_all(&mut *self.db.reader().await?)
            .await?;
        let paths: Vec<String> = rows.iter().map(|r| r.get::<String, _>(0)[prefix.len()..].to_string()).collect();
        Ok(paths.into_iter().filter(|p| !p[stem.len() + 1..].contains(['/', '.'])).collect())
    }
}

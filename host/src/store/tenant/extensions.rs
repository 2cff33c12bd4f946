//! What the instance knows of its uploaded extensions: type, size and content hash, by path.
//!
//! Every call of an extension looks its record up, so records are cached in memory (found or
//! not). This process's own writes invalidate the cache at once; a lookup that raced with a write
//! does not cache what it read. The time to live bounds how long a write made elsewhere (another
//! node over the same database) takes to be seen.

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use sqlx::Row;

use super::TenantDb;
use crate::store::read_cache::ReadCache;
use crate::store::{now_millis, StoreResult};

/// How long a cached extension record is trusted (a write made by another node may go unseen
/// that long).
pub const RECORD_TTL: Duration = Duration::from_secs(2);

/// Where the extension records of one open instance stand: which cache, and how many writes it
/// has seen. Whatever was derived from a record is still good while the stamp is the same (and
/// the record younger than `RECORD_TTL`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RecordsStamp {
    cache: usize,
    writes: u64,
}

#[derive(Clone)]
pub(super) struct RecordCache {
    /// By path, found or not (`ReadCache`: looked up at every extension call).
    records: Arc<ReadCache<Option<Arc<ExtensionRecord>>>>,
    by_kind: moka::future::Cache<String, Arc<Vec<ExtensionRecord>>>,
    /// Bumped by every write: a lookup caches its result only if no write happened meanwhile.
    generation: Arc<AtomicU64>,
}

impl RecordCache {
    pub(super) fn new() -> RecordCache {
        RecordCache {
            records: Arc::new(ReadCache::new(RECORD_TTL, 10_000)),
            by_kind: moka::future::Cache::builder().max_capacity(16).time_to_live(RECORD_TTL).build(),
            generation: Arc::default(),
        }
    }

    fn invalidate(&self, path: &str) {
        self.generation.fetch_add(1, Ordering::SeqCst);
        self.records.remove(path);
        self.by_kind.invalidate_all();
    }
}

impl std::fmt::Debug for RecordCache {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("RecordCache").field("entries", &self.records.len()).finish()
    }
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ExtensionRecord {
    pub path: String,
    pub kind: String,
    pub size: u64,
    pub sha256: String,
    /// The component's `herald:config` section as JSON, as read at upload (`None` for a record
    /// stored before Herald kept it, or a component without one).
    pub config: Option<String>,
}

fn record(r: &sqlx::any::AnyRow) -> ExtensionRecord {
    ExtensionRecord { path: r.get(0), kind: r.get(1), size: r.get::<i64, _>(2) as u64, sha256: r.get(3), config: r.get(4) }
}

impl TenantDb {
    pub async fn extension(&self, path: &str) -> StoreResult<Option<Arc<ExtensionRecord>>> {
        Ok(self.extension_read_at(path).await?.0)
    }

    /// `extension`, with when it was read from the database (now, or when the cached copy was).
    pub async fn extension_read_at(&self, path: &str) -> StoreResult<(Option<Arc<ExtensionRecord>>, Instant)> {
        if let Some((read, cached)) = self.extension_records.records.get_with_time(path) {
            return Ok((cached, read));
        }
        let generation = self.extension_records.generation.load(Ordering::SeqCst);
        let read = Instant::now();
        // Boxed: see `crate::cold`.
        let record = crate::cold::boxed(self.read_extension(path)).await?.map(Arc::new);
        if self.extension_records.generation.load(Ordering::SeqCst) == generation {
            self.extension_records.records.insert(path, record.clone(), read);
        }
        Ok((record, read))
    }

    /// Where this instance's extension records stand now (read it before reading a record).
    pub fn extension_records_stamp(&self) -> RecordsStamp {
        let generation = &self.extension_records.generation;
        RecordsStamp { cache: Arc::as_ptr(generation) as usize, writes: generation.load(Ordering::SeqCst) }
    }

    async fn read_extension(&self, path: &str) -> StoreResult<Option<ExtensionRecord>> {
        let row = sqlx::query(&self.db.sql("SELECT path, type, size, sha256, config FROM _extensions WHERE path = ?"))
            .bind(path)
            .fetch_optional(&mut *self.db.reader().await?)
            .await?;
        Ok(row.as_ref().map(record))
    }

    /// Every extension whose path starts with `prefix` (a folder and `/`, or empty for all).
    pub async fn extensions(&self, prefix: &str) -> StoreResult<Vec<ExtensionRecord>> {
        let rows = sqlx::query(
            &self.db.sql("SELECT path, type, size, sha256, config FROM _extensions WHERE substr(path, 1, length(?)) = ? ORDER BY path"),
        )
        .bind(prefix)
        .bind(prefix)
        .fetch_all(&mut *self.db.reader().await?)
        .await?;
        Ok(rows.iter().map(record).collect())
    }

    /// Every extension of type `kind`, by path. Outbound calls look up the authheader extensions
    /// and the schedulers the monitors, so the list is cached like the records.
    pub async fn extensions_of_kind(&self, kind: &str) -> StoreResult<Arc<Vec<ExtensionRecord>>> {
        if let Some(cached) = self.extension_records.by_kind.get(kind).await {
            return Ok(cached);
        }
        let generation = self.extension_records.generation.load(Ordering::SeqCst);
        let list = Arc::new(self.extensions_of_kind_in_store(kind).await?);
        if self.extension_records.generation.load(Ordering::SeqCst) == generation {
            self.extension_records.by_kind.insert(kind.to_string(), list.clone()).await;
        }
        Ok(list)
    }

    /// The extensions of type `kind` as the store has them now, past this node's cache: for a
    /// decision that another node's recent upload must not be missed by (forgetting a schedule).
    pub async fn extensions_of_kind_in_store(&self, kind: &str) -> StoreResult<Vec<ExtensionRecord>> {
        let rows = sqlx::query(&self.db.sql("SELECT path, type, size, sha256, config FROM _extensions WHERE type = ? ORDER BY path"))
            .bind(kind)
            .fetch_all(&mut *self.db.reader().await?)
            .await?;
        Ok(rows.iter().map(record).collect())
    }

    /// Stores an extension's record and its component (`content`, whose hash is `e.sha256`), in
    /// one transaction; components no extension uses any more go.
    pub async fn put_extension(&self, e: &ExtensionRecord, content: &[u8]) -> StoreResult<()> {
        let done = async {
            let mut tx = self.db.begin().await?;
            sqlx::query(&self.db.sql("INSERT INTO _extension_blobs (sha256, content) VALUES (?, ?) ON CONFLICT (sha256) DO NOTHING"))
                .bind(&e.sha256)
                .bind(content)
                .execute(&mut *tx)
                .await?;
            let sql = self.db.sql(
                "INSERT INTO _extensions (path, type, size, sha256, updated_at, config) VALUES (?, ?, ?, ?, ?, ?)
                 ON CONFLICT (path) DO UPDATE SET type = excluded.type, size = excluded.size,
                   sha256 = excluded.sha256, updated_at = excluded.updated_at, config = excluded.config",
            );
            sqlx::query(&sql)
                .bind(&e.path)
                .bind(&e.kind)
                .bind(e.size as i64)
                .bind(&e.sha256)
                .bind(now_millis())
                .bind(&e.config)
                .execute(&mut *tx)
                .await?;
            prune_blobs(&mut tx).await?;
            tx.commit().await
        }
        .await;
        self.extension_records.invalidate(&e.path);
        done?;
        Ok(())
    }

    pub async fn delete_extension(&self, path: &str) -> StoreResult<bool> {
        let done = async {
            let mut tx = self.db.begin().await?;
            let deleted = sqlx::query(&self.db.sql("DELETE FROM _extensions WHERE path = ?")).bind(path).execute(&mut *tx).await?;
            prune_blobs(&mut tx).await?;
            tx.commit().await?;
            Ok::<_, sqlx::Error>(deleted.rows_affected() > 0)
        }
        .await;
        self.extension_records.invalidate(path);
        Ok(done?)
    }

    /// The component whose content hash is `sha256`, as uploaded.
    pub async fn extension_content(&self, sha256: &str) -> StoreResult<Option<Vec<u8>>> {
        let row = sqlx::query(&self.db.sql("SELECT content FROM _extension_blobs WHERE sha256 = ?"))
            .bind(sha256)
            .fetch_optional(&mut *self.db.reader().await?)
            .await?;
        Ok(row.map(|r| r.get(0)))
    }
}

async fn prune_blobs(tx: &mut sqlx::AnyConnection) -> Result<(), sqlx::Error> {
    sqlx::query("DELETE FROM _extension_blobs WHERE sha256 NOT IN (SELECT sha256 FROM _extensions)").execute(&mut *tx).await?;
    Ok(())
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
    /// What a failed execution was given (`runtime::input::RecordedInput` as JSON), for replays.
    pub input: Option<String>,
    /// What it used (none in the records written before receipts).
    pub usage: Option<Usage>,
}

/// What one execution used: its receipt. CPU time is the processor's time on the execution's
/// turns (`runtime::fair`), wall time from its start to its end, waiting the part of it spent
/// waiting for a turn of the node's guest threads.
#[derive(Debug, Clone, Default, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Usage {
    pub cpu_us: u64,
    pub wall_us: u64,
    pub wait_us: u64,
    /// The most linear memory the guest's instances had during the execution.
    pub peak_memory_bytes: u64,
    /// Calls of Herald's own interfaces (`herald:platform`).
    pub host_calls: u64,
    pub outbound_requests: u64,
    /// The bytes of the outbound requests' bodies and of their answers' bodies.
    pub outbound_bytes: u64,
    /// Records its writes through `herald:platform` created, changed or deleted.
    #[serde(default)]
    pub rows_written: u64,
}

/// Executions kept per extension.
pub const KEPT_EXECUTIONS: i64 = 100;

impl TenantDb {
    /// Keeps executions (one transaction), then trims each extension's log to the newest
    /// `KEPT_EXECUTIONS`.
    pub async fn insert_execution_logs(&self, entries: &[ExecutionLog]) -> StoreResult<()> {
        // Of a burst, only each extension's newest executions would survive the trim: write those.
        let mut kept_per_extension: std::collections::HashMap<&str, i64> = std::collections::HashMap::new();
        let mut newest: Vec<&ExecutionLog> = entries
            .iter()
            .rev()
            .filter(|e| {
                let kept = kept_per_extension.entry(e.extension.as_str()).or_default();
                *kept += 1;
                *kept <= KEPT_EXECUTIONS
            })
            .collect();
        newest.reverse();
        let mut tx = self.db.begin().await?;
        // Statements of 100, 10 or 1 rows (9 parameters a row, well under either engine's limit):
        // three texts, each prepared once per connection, where a statement of every batch's own
        // length was prepared anew at every write (most of the write's cost, `bench/instructions.sh`).
        let mut rest = newest.as_slice();
        while !rest.is_empty() {
            let rows = [100, 10, 1].into_iter().find(|&n| rest.len() >= n).expect("one row at least");
            let (chunk, after) = rest.split_at(rows);
            rest = after;
            let sql = format!(
                "INSERT INTO _extension_logs (extension, at, duration_ms, outcome, log, stdout, stderr, input, receipt) VALUES {}",
                vec!["(?, ?, ?, ?, ?, ?, ?, ?, ?)"; chunk.len()].join(", ")
            );
            let sql = self.db.sql_string(sql);
            let mut insert = sqlx::query(&sql);
            for e in chunk {
                insert = insert
                    .bind(&e.extension)
                    .bind(e.at)
                    .bind(e.duration_ms)
                    .bind(&e.outcome)
                    .bind(serde_json::to_string(&e.log).expect("strings serialise"))
                    .bind(&e.stdout)
                    .bind(&e.stderr)
                    .bind(&e.input)
                    .bind(e.usage.as_ref().map(|u| serde_json::to_string(u).expect("numbers serialise")));
            }
            insert.execute(&mut *tx).await?;
        }
        let mut extensions: Vec<&str> = entries.iter().map(|e| e.extension.as_str()).collect();
        extensions.sort_unstable();
        extensions.dedup();
        let trim = self.db.sql(
            "DELETE FROM _extension_logs WHERE extension = ? AND id <= (SELECT id FROM _extension_logs WHERE extension = ? ORDER BY id DESC LIMIT 1 OFFSET ?)",
        );
        for extension in extensions {
            sqlx::query(&trim).bind(extension).bind(extension).bind(KEPT_EXECUTIONS).execute(&mut *tx).await?;
        }
        tx.commit().await?;
        Ok(())
    }

    /// The newest executions of an extension, newest first. Ordered by when each ended, not by
    /// when it was written: a failed execution's log is written at once, a successful one's a
    /// little later by the log writer (`runtime/logs.rs`), so ids do not follow the calls.
    pub async fn execution_logs(&self, extension: &str, limit: u32) -> StoreResult<Vec<ExecutionLog>> {
        let sql = self.db.sql(
            "SELECT extension, at, duration_ms, outcome, log, stdout, stderr, input, receipt FROM _extension_logs WHERE extension = ? ORDER BY at DESC, id DESC LIMIT ?",
        );
        let rows = sqlx::query(&sql).bind(extension).bind(i64::from(limit)).fetch_all(&mut *self.db.reader().await?).await?;
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
                input: r.get(7),
                usage: r.get::<Option<String>, _>(8).and_then(|u| serde_json::from_str(&u).ok()),
            })
            .collect())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::{DefinitionFile, Model, DEMO};

    fn entry(extension: &str, n: i64) -> ExecutionLog {
        ExecutionLog {
            extension: extension.into(),
            at: n,
            duration_ms: 1,
            outcome: "ok".into(),
            input: None,
            log: vec![format!("call {n}")],
            stdout: String::new(),
            stderr: String::new(),
            usage: None,
        }
    }

    #[tokio::test]
    async fn a_burst_keeps_each_extensions_newest_executions() {
        let dir = tempfile::tempdir().unwrap();
        let db = crate::store::Backend::Sqlite { data_dir: dir.path().into() }.open_tenant("x").await.unwrap();
        db.ensure_schema(&Model::new(DefinitionFile::from_toml(DEMO).unwrap().model).unwrap()).await.unwrap();
        db.insert_execution_logs(&[entry("a", 0), entry("b", 0)]).await.unwrap();
        // 250 calls of `a` and 3 of `b`, interleaved, written at once.
        let burst: Vec<ExecutionLog> = (1..=250).map(|n| entry("a", n)).chain((1..=3).map(|n| entry("b", n))).collect();
        db.insert_execution_logs(&burst).await.unwrap();
        let a = db.execution_logs("a", 1000).await.unwrap();
        assert_eq!(a.len(), KEPT_EXECUTIONS as usize);
        assert_eq!((a[0].at, a[99].at), (250, 151), "newest first, the oldest trimmed");
        assert_eq!(a[0].log, vec!["call 250".to_string()]);
        let b: Vec<i64> = db.execution_logs("b", 1000).await.unwrap().iter().map(|e| e.at).collect();
        assert_eq!(b, vec![3, 2, 1, 0], "a quiet extension keeps its older executions");
    }

    /// Every extension call awaits this lookup: its statement is boxed (`crate::cold`), so the
    /// future every caller holds is a few words, not the statement's kilobytes.
    #[tokio::test]
    async fn a_lookup_is_a_small_future() {
        let dir = tempfile::tempdir().unwrap();
        let db = crate::store::Backend::Sqlite { data_dir: dir.path().into() }.open_tenant("x").await.unwrap();
        let lookup = db.extension("hook.wasm");
        assert!(std::mem::size_of_val(&lookup) <= 256, "{} bytes", std::mem::size_of_val(&lookup));
    }

    #[tokio::test]
    async fn records_are_cached_and_writes_show_at_once() {
        let dir = tempfile::tempdir().unwrap();
        let db = crate::store::Backend::Sqlite { data_dir: dir.path().into() }.open_tenant("x").await.unwrap();
        db.ensure_schema(&Model::new(DefinitionFile::from_toml(DEMO).unwrap().model).unwrap()).await.unwrap();
        assert_eq!(db.extension("extensions/a.wasm").await.unwrap(), None);
        let found = |record: Option<Arc<ExtensionRecord>>| record.as_deref().cloned();
        let record = ExtensionRecord { path: "extensions/a.wasm".into(), kind: "http".into(), size: 1, sha256: "1".into(), config: None };
        db.put_extension(&record, b"component").await.unwrap();
        assert_eq!(found(db.extension("extensions/a.wasm").await.unwrap()), Some(record.clone()), "a cached absence is forgotten");
        assert_eq!(db.extension_content("1").await.unwrap().as_deref(), Some(&b"component"[..]));
        let newer = ExtensionRecord { sha256: "2".into(), ..record };
        db.put_extension(&newer, b"component 2").await.unwrap();
        assert_eq!(found(db.extension("extensions/a.wasm").await.unwrap()), Some(newer));
        assert_eq!(db.extension_content("1").await.unwrap(), None, "a component no extension uses goes");
        assert_eq!(db.extension_content("2").await.unwrap().as_deref(), Some(&b"component 2"[..]));
        assert!(db.delete_extension("extensions/a.wasm").await.unwrap());
        assert_eq!(db.extension("extensions/a.wasm").await.unwrap(), None);
        assert_eq!(db.extension_content("2").await.unwrap(), None);
    }
}

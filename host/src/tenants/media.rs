//! An open instance's media area on this node: the files live in the instance's store
//! (`store::tenant::media_files`, the truth every node shares) and this node's disk holds a copy
//! that the code serving them (lists, reference checks, WebDAV, webapps) reads as files.
//!
//! - Every read starts with [`InstanceMedia::sync`]: one query for the store's generation; when
//!   it moved since this node last looked, the copy is brought in line file by file, by digest
//!   (only the files whose SHA-256 differs are fetched; files and folders gone from the store are
//!   removed).
//! - Every write holds the instance's [`Writing`] (one per instance on this node, so a sync never
//!   overwrites a file being written), changes the disk, then [`Writing::publish`]es the paths it
//!   changed to the store in one transaction. A write dropped without publishing marks the copy
//!   for a rescan, so the next sync takes back whatever it left on disk.
//! - The first time a node sees an instance's folder it adds the files there that the store lacks
//!   (an instance from before the media moved into the store; a marker file says it was done).
//!
//! The quota is counted in the store ([`InstanceMedia::room`]), once for all nodes.

use std::collections::{BTreeSet, HashMap};
use std::io;
use std::ops::Deref;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::SystemTime;

use sha2::{Digest, Sha256};
use tokio::sync::{Mutex, OwnedMutexGuard};

use crate::assets::MediaArea;
use crate::store::tenant::{Applied, MediaChange, FOLDER_DIGEST};
use crate::store::{StoreError, TenantDb};

/// The folders of an instance's directory that the store holds.
const ROOTS: [&str; 2] = ["media", "committed"];
/// Written in the instance's folder once its files that predate the store were added to it.
const IMPORTED_MARKER: &str = ".media-in-store";

/// Why a media operation failed: the store (503 when it cannot be reached) or this node's disk.
#[derive(Debug, thiserror::Error)]
pub enum MediaError {
    #[error(transparent)]
    Store(#[from] StoreError),
    #[error("the media area on this node's disk: {0}")]
    Disk(#[from] io::Error),
}

impl From<sqlx::Error> for MediaError {
    fn from(e: sqlx::Error) -> Self {
        MediaError::Store(e.into())
    }
}

pub type MediaResult<T> = Result<T, MediaError>;

/// A file or folder this node's copy holds, as last seen.
#[derive(Debug, Clone)]
struct Known {
    digest: String,
    len: u64,
    modified: Option<SystemTime>,
}

#[derive(Debug, Default)]
struct CopyState {
    /// The store's generation the copy matches; `None` until the first sync.
    generation: Option<i64>,
    /// Whether `files` describes the disk (false: rescan first).
    scanned: bool,
    /// By path in the instance's folder; folders end in `/`.
    files: HashMap<String, Known>,
}

/// The state of this node's copy of one instance's media (held by the open `Tenant`).
#[derive(Debug, Clone, Default)]
pub struct MediaCopy(Arc<Mutex<CopyState>>);

/// The media area of an open instance: its disk copy (`Deref` to the paths) and the store.
pub struct InstanceMedia {
    area: MediaArea,
    db: TenantDb,
    copy: MediaCopy,
}

impl Deref for InstanceMedia {
    type Target = MediaArea;
    fn deref(&self) -> &MediaArea {
        &self.area
    }
}

impl super::Tenant {
    /// The instance's media area under `data_dir`, its writes held to `quota` bytes.
    pub fn media(&self, data_dir: &Path, quota: u64) -> InstanceMedia {
        InstanceMedia {
            area: MediaArea::new(data_dir, self.customer_id()).with_quota(quota),
            db: self.db.clone(),
            copy: self.media_copy.clone(),
        }
    }
}

impl InstanceMedia {
    /// Brings this node's copy in line with the store.
    pub async fn sync(&self) -> MediaResult<()> {
        let mut state = self.copy.0.lock().await;
        self.reconcile(&mut state).await
    }

    /// Syncs and holds the instance's writes on this node until the returned guard publishes.
    pub async fn writing(&self) -> MediaResult<Writing<'_>> {
        let mut state = self.copy.0.clone().lock_owned().await;
        self.reconcile(&mut state).await?;
        Ok(Writing { media: self, state, published: false })
    }

    /// How many more bytes may be written before the quota is reached (counted in the store).
    pub async fn room(&self) -> MediaResult<u64> {
        if self.area.quota() == u64::MAX {
            return Ok(u64::MAX);
        }
        Ok(self.area.quota().saturating_sub(self.db.media_usage().await?))
    }

    fn root(&self) -> PathBuf {
        self.area.instance_root()
    }

    async fn reconcile(&self, state: &mut CopyState) -> MediaResult<()> {
        let generation = self.db.media_generation().await?;
        if state.scanned && state.generation == Some(generation) {
            return Ok(());
        }
        let root = self.root();
        if !state.scanned {
            state.files = scan(root.clone(), std::mem::take(&mut state.files)).await?;
            state.scanned = true;
            if self.import_once(state).await? {
                return Box::pin(self.reconcile(state)).await;
            }
        }
        let index = self.db.media_index().await?;
        let mut unhashed = Vec::new();
        for (path, digest) in &index {
            if path.ends_with('/') {
                tokio::fs::create_dir_all(root.join(path)).await?;
                state.files.insert(path.clone(), Known { digest: FOLDER_DIGEST.into(), len: 0, modified: None });
                continue;
            }
            if !digest.is_empty() && state.files.get(path).is_some_and(|k| &k.digest == digest) {
                continue;
            }
            // Fetched one at a time: a large area never sits in memory at once.
            let Some(content) = self.db.media_file(path).await? else { continue };
            let target = root.join(path);
            let temp = self.area.temp_path().await?;
            tokio::fs::write(temp.path(), &content).await?;
            temp.replace(&target).await?;
            let known = known_file(&target, sha256_hex(&content)).await?;
            if digest.is_empty() {
                unhashed.push((path.clone(), known.digest.clone()));
            }
            state.files.insert(path.clone(), known);
        }
        if !unhashed.is_empty() {
            self.db.set_media_digests(&unhashed).await?;
        }
        // What the store no longer has goes, files first, then folders that nothing keeps.
        let stored: BTreeSet<&str> = index.iter().map(|(p, _)| p.as_str()).collect();
        let kept_folders: BTreeSet<String> = index.iter().flat_map(|(p, _)| ancestors(p)).collect();
        let gone: Vec<String> =
            state.files.keys().filter(|p| !stored.contains(p.as_str()) && !kept_folders.contains(*p)).cloned().collect();
        for path in gone.iter().filter(|p| !p.ends_with('/')) {
            remove_path(&root.join(path)).await?;
            state.files.remove(path);
        }
        for path in gone.iter().filter(|p| p.ends_with('/')) {
            remove_path(&root.join(path)).await?;
            state.files.remove(path);
        }
        state.generation = Some(generation);
        Ok(())
    }

    /// Adds the files on this node's disk that the store lacks, the first time this node sees
    /// the instance's folder. Returns whether it added any.
    async fn import_once(&self, state: &CopyState) -> MediaResult<bool> {
        let marker = self.root().join(IMPORTED_MARKER);
        if tokio::fs::try_exists(&marker).await? {
            return Ok(false);
        }
        let mut changes = Vec::new();
        for (path, known) in &state.files {
            changes.push(put_change(&self.root(), path, known).await?);
        }
        let any = !changes.is_empty();
        if any {
            self.db.apply_media_changes(changes, false, true).await?;
        }
        tokio::fs::create_dir_all(self.root()).await?;
        tokio::fs::write(&marker, b"").await?;
        Ok(any)
    }
}

/// The instance's writes on this node, held until published.
pub struct Writing<'a> {
    media: &'a InstanceMedia,
    state: OwnedMutexGuard<CopyState>,
    published: bool,
}

impl Writing<'_> {
    /// Publishes what is now on disk at `paths` (paths in the instance's folder: a file, a folder
    /// with everything in it, or nothing, which removes the path from the store).
    pub async fn publish(mut self, paths: &[String]) -> MediaResult<()> {
        let changes = self.changes(paths, true).await?;
        if !changes.is_empty() {
            let applied = self.media.db.apply_media_changes(changes, false, false).await?;
            self.follow(applied);
        }
        self.published = true;
        Ok(())
    }

    /// Publishes the file at `path` only if the store has none there (another node may have
    /// created it meanwhile): false, and the copy is taken back at the next sync, if it has.
    pub async fn publish_new(mut self, path: &str) -> MediaResult<bool> {
        let changes = self.changes(&[path.to_string()], false).await?;
        let applied = self.media.db.apply_media_changes(changes, true, false).await?;
        if applied == Applied::Exists {
            return Ok(false);
        }
        self.follow(applied);
        self.published = true;
        Ok(true)
    }

    /// The changes that make the store hold what the disk holds at `paths` (`replacing`: after
    /// removing what the store held there), noted in the copy's state as they are read.
    async fn changes(&mut self, paths: &[String], replacing: bool) -> MediaResult<Vec<MediaChange>> {
        let root = self.media.root();
        let mut changes = Vec::new();
        for path in paths {
            let path = path.trim_end_matches('/');
            let full = root.join(path);
            let folder = format!("{path}/");
            self.state.files.retain(|p, _| p != path && !p.starts_with(&folder));
            if replacing {
                changes.push(MediaChange::Remove { path: path.to_string() });
            }
            match tokio::fs::metadata(&full).await {
                Ok(m) if m.is_dir() => {
                    let mut under = scan_folder(full, folder.clone(), Arc::default()).await?;
                    if !is_fixed_folder(&folder) {
                        under.push((folder, Known { digest: FOLDER_DIGEST.into(), len: 0, modified: None }));
                    }
                    for (p, known) in under {
                        changes.push(put_change(&root, &p, &known).await?);
                        self.state.files.insert(p, known);
                    }
                }
                Ok(_) => {
                    let content = tokio::fs::read(&full).await?;
                    let known = known_file(&full, sha256_hex(&content)).await?;
                    changes.push(MediaChange::Put { path: path.to_string(), content, digest: known.digest.clone() });
                    self.state.files.insert(path.to_string(), known);
                }
                Err(e) if e.kind() == io::ErrorKind::NotFound => continue,
                Err(e) => return Err(e.into()),
            }
            // The folders it lies in stay when it goes, as on a disk.
            for folder in ancestors(path).into_iter().filter(|f| !is_fixed_folder(f)) {
                changes.push(MediaChange::Put { path: folder.clone(), content: Vec::new(), digest: FOLDER_DIGEST.into() });
                self.state.files.insert(folder, Known { digest: FOLDER_DIGEST.into(), len: 0, modified: None });
            }
        }
        Ok(changes)
    }

    /// After this node's change raised the generation from the one its copy matched, the copy
    /// matches the new one; otherwise another node wrote meanwhile and the next sync catches up.
    fn follow(&mut self, applied: Applied) {
        if let (Applied::At(now), Some(before)) = (applied, self.state.generation) {
            self.state.generation = if now == before + 1 { Some(now) } else { None };
        }
    }
}

impl Drop for Writing<'_> {
    fn drop(&mut self) {
        if !self.published {
            // The disk may hold what the store does not: rescan and take it back at the next sync.
            self.state.scanned = false;
            self.state.generation = None;
        }
    }
}

/// The folders above `path` that the store keeps implicitly (`media/webapps/app/` for
/// `media/webapps/app/index.html`), below the fixed ones (`media/`, `media/webapps/`).
fn ancestors(path: &str) -> Vec<String> {
    let trimmed = path.trim_end_matches('/');
    let mut out = Vec::new();
    let mut at = 0;
    while let Some(i) = trimmed[at..].find('/') {
        at += i + 1;
        out.push(trimmed[..at].to_string());
    }
    out
}

async fn put_change(root: &Path, path: &str, known: &Known) -> MediaResult<MediaChange> {
    if path.ends_with('/') {
        return Ok(MediaChange::Put { path: path.to_string(), content: Vec::new(), digest: FOLDER_DIGEST.into() });
    }
    let content = tokio::fs::read(root.join(path)).await?;
    Ok(MediaChange::Put { path: path.to_string(), content, digest: known.digest.clone() })
}

pub fn sha256_hex(bytes: &[u8]) -> String {
    Sha256::digest(bytes).iter().map(|b| format!("{b:02x}")).collect()
}

async fn known_file(path: &Path, digest: String) -> io::Result<Known> {
    let meta = tokio::fs::metadata(path).await?;
    Ok(Known { digest, len: meta.len(), modified: meta.modified().ok() })
}

async fn remove_path(path: &Path) -> io::Result<()> {
    let result = match tokio::fs::symlink_metadata(path).await {
        Ok(m) if m.is_dir() => tokio::fs::remove_dir_all(path).await,
        Ok(_) => tokio::fs::remove_file(path).await,
        Err(e) => Err(e),
    };
    match result {
        Err(e) if e.kind() != io::ErrorKind::NotFound => Err(e),
        _ => Ok(()),
    }
}

/// What the disk holds under the instance's `media/` and `committed/`, hashing only the files
/// whose size or time changed since `before`.
async fn scan(root: PathBuf, before: HashMap<String, Known>) -> io::Result<HashMap<String, Known>> {
    let before = Arc::new(before);
    let mut files = HashMap::new();
    for top in ROOTS {
        let found = scan_folder(root.join(top), format!("{top}/"), before.clone()).await?;
        files.extend(found.into_iter().filter(|(p, _)| !is_fixed_folder(p)));
    }
    Ok(files)
}

/// `media/<kind>/` and `committed/templates/`: created by whoever needs them, never stored.
fn is_fixed_folder(path: &str) -> bool {
    path.ends_with('/') && path.matches('/').count() <= 2
}

/// Every file and folder under `dir`, keyed `prefix` + its path there; files hashed unless
/// `before` knows them with the same size and time.
async fn scan_folder(dir: PathBuf, prefix: String, before: Arc<HashMap<String, Known>>) -> io::Result<Vec<(String, Known)>> {
    tokio::task::spawn_blocking(move || {
        let mut out = Vec::new();
        let mut stack = vec![(prefix, dir)];
        while let Some((prefix, dir)) = stack.pop() {
            let read = match std::fs::read_dir(&dir) {
                Ok(r) => r,
                Err(e) if e.kind() == io::ErrorKind::NotFound => continue,
                Err(e) => return Err(e),
            };
            for entry in read {
                let entry = entry?;
                let name = entry.file_name().to_string_lossy().into_owned();
                let meta = entry.metadata()?;
                if meta.is_dir() {
                    let folder = format!("{prefix}{name}/");
                    out.push((folder.clone(), Known { digest: FOLDER_DIGEST.into(), len: 0, modified: None }));
                    stack.push((folder, entry.path()));
                } else if meta.is_file() {
                    let path = format!("{prefix}{name}");
                    let modified = meta.modified().ok();
                    let same = before.get(&path).filter(|b| b.len == meta.len() && modified.is_some() && b.modified == modified);
                    let known = match same {
                        Some(known) => known.clone(),
                        None => Known { digest: sha256_hex(&std::fs::read(entry.path())?), len: meta.len(), modified },
                    };
                    out.push((path, known));
                }
            }
        }
        Ok(out)
    })
    .await
    .map_err(io::Error::other)?
}

//! The media area of an instance: resources, templates (a working copy and a committed version),
//! Context Parameter Schemas, webapps, and the files of extensions.
//!
//! On disk, under the instance's directory (`instance_dir`):
//!
//! ```text
//! media/resources/...     media/templates/...     media/contexts/<schema>.json
//! media/webapps/<name>/...                        (media/ is what WebDAV shows)
//! committed/templates/... the committed versions of templates
//! extensions/...          extension files (their type and hash are in the instance's database)
//! tmp/                    uploads in progress, renamed into place when complete
//! ```
//!
//! Every write goes to `tmp/` first and is then renamed (replace) or hard-linked (create only if
//! absent), so a reader never sees half a file and two concurrent creations cannot both win.

pub mod contexts;
pub mod names;
pub mod quota;
pub mod references;
pub mod webapps;

use std::io;
use std::path::{Path, PathBuf};

pub use names::RelPath;

/// Where an instance's files live under the data directory: its media area and extensions here,
/// and on SQLite its database (`data.db`, opened by `store`).
pub fn instance_dir(data_dir: &Path, customer_id: &str) -> PathBuf {
    data_dir.join("instances").join(customer_id)
}

/// The kinds of items in `media/`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    Resources,
    Templates,
    Contexts,
    Webapps,
}

impl Kind {
    pub fn dir(self) -> &'static str {
        match self {
            Kind::Resources => "resources",
            Kind::Templates => "templates",
            Kind::Contexts => "contexts",
            Kind::Webapps => "webapps",
        }
    }
}

/// One entry of a folder listing.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Entry {
    pub name: String,
    pub is_folder: bool,
}

/// An instance's media area.
#[derive(Debug, Clone)]
pub struct MediaArea {
    root: PathBuf,
    /// Bytes its files may take (`quota.rs`); `u64::MAX` for none.
    quota: u64,
}

impl MediaArea {
    pub fn new(data_dir: &Path, customer_id: &str) -> MediaArea {
        MediaArea { root: instance_dir(data_dir, customer_id), quota: u64::MAX }
    }

    /// The same area, with writes held to `quota` bytes in all.
    pub fn with_quota(mut self, quota: u64) -> MediaArea {
        self.quota = quota;
        self
    }

    /// The instance's folder (the media paths of the store are relative to it).
    pub fn instance_root(&self) -> PathBuf {
        self.root.clone()
    }

    /// What WebDAV shows.
    pub fn media_root(&self) -> PathBuf {
        self.root.join("media")
    }

    pub fn path(&self, kind: Kind, rel: &RelPath) -> PathBuf {
        self.media_root().join(kind.dir()).join(rel.to_fs())
    }

    /// The path of an item in the instance's folder, as the store keys it
    /// (`media/resources/images/logo.png`).
    pub fn store_path(kind: Kind, rel: &RelPath) -> String {
        match rel.is_root() {
            true => format!("media/{}", kind.dir()),
            false => format!("media/{}/{}", kind.dir(), rel.as_text()),
        }
    }

    /// The store's path of a committed template.
    pub fn committed_store_path(rel: &RelPath) -> String {
        format!("committed/templates/{}", rel.as_text())
    }

    pub fn committed_template(&self, rel: &RelPath) -> PathBuf {
        self.root.join("committed").join("templates").join(rel.to_fs())
    }

    pub fn extension(&self, rel: &RelPath) -> PathBuf {
        self.root.join("extensions").join(rel.to_fs())
    }

    pub fn extensions_root(&self) -> PathBuf {
        self.root.join("extensions")
    }

    pub fn temp_dir(&self) -> PathBuf {
        self.root.join("tmp")
    }

    /// A fresh path in `tmp/` (removed by the `TempPath` guard unless placed).
    pub async fn temp_path(&self) -> io::Result<TempPath> {
        let dir = self.temp_dir();
        tokio::fs::create_dir_all(&dir).await?;
        let mut bytes = [0u8; 12];
        rand::RngCore::fill_bytes(&mut rand::thread_rng(), &mut bytes);
        let name: String = bytes.iter().map(|b| format!("{b:02x}")).collect();
        Ok(TempPath(dir.join(name)))
    }
}

/// The entries of `dir` (folders first, then by name); `None` when it is not a folder.
pub async fn list(dir: &Path) -> io::Result<Option<Vec<Entry>>> {
    let mut read = match tokio::fs::read_dir(dir).await {
        Ok(r) => r,
        Err(e) if matches!(e.kind(), io::ErrorKind::NotFound | io::ErrorKind::NotADirectory) => return Ok(None),
        Err(e) => return Err(e),
    };
    let mut entries = Vec::new();
    while let Some(e) = read.next_entry().await? {
        let name = e.file_name().to_string_lossy().into_owned();
        if name.starts_with('.') {
            continue;
        }
        entries.push(Entry { name, is_folder: e.file_type().await?.is_dir() });
    }
    entries.sort_by(|a, b| b.is_folder.cmp(&a.is_folder).then_with(|| a.name.cmp(&b.name)));
    Ok(Some(entries))
}

/// A file in `tmp/`, removed when dropped unless it was placed.
#[derive(Debug)]
pub struct TempPath(PathBuf);

impl TempPath {
    pub fn path(&self) -> &Path {
        &self.0
    }

    /// Moves the file to `target`, replacing what is there. Returns whether it replaced a file.
    pub async fn replace(self, target: &Path) -> io::Result<bool> {
        ensure_parent(target).await?;
        let existed = tokio::fs::try_exists(target).await?;
        tokio::fs::rename(&self.0, target).await?;
        std::mem::forget(self);
        Ok(existed)
    }

    /// Moves the file to `target` only if nothing is there (atomically: a hard link fails when
    /// the target exists). Returns false, and keeps nothing, when the target exists.
    pub async fn create(self, target: &Path) -> io::Result<bool> {
        ensure_parent(target).await?;
        match tokio::fs::hard_link(&self.0, target).await {
            Ok(()) => Ok(true),
            Err(e) if e.kind() == io::ErrorKind::AlreadyExists => Ok(false),
            Err(e) => Err(e),
        }
        // The temporary name is removed by Drop either way.
    }
}

impl Drop for TempPath {
    fn drop(&mut self) {
        let _ = std::fs::remove_file(&self.0).or_else(|_| std::fs::remove_dir_all(&self.0));
    }
}

async fn ensure_parent(target: &Path) -> io::Result<()> {
    match target.parent() {
        Some(parent) => tokio::fs::create_dir_all(parent).await,
        None => Ok(()),
    }
}

/// Every file under `root`, as (path relative to root with `/`, absolute path).
pub fn walk_files(root: &Path) -> Vec<(String, PathBuf)> {
    let mut out = Vec::new();
    let mut stack = vec![(String::new(), root.to_path_buf())];
    while let Some((prefix, dir)) = stack.pop() {
        let Ok(read) = std::fs::read_dir(&dir) else { continue };
        for e in read.flatten() {
            let name = e.file_name().to_string_lossy().into_owned();
            let rel = if prefix.is_empty() { name.clone() } else { format!("{prefix}/{name}") };
            match e.file_type() {
                Ok(t) if t.is_dir() => stack.push((rel, e.path())),
                Ok(t) if t.is_file() => out.push((rel, e.path())),
                _ => {}
            }
        }
    }
    out
}

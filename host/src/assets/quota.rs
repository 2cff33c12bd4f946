//! The media quota of an instance: how many bytes its customer-written files may take (the media
//! area that WebDAV shows, committed templates, extension files). Every way a file comes in (the
//! Assets API's forms, webapp archives, WebDAV PUT and COPY) writes at most the room that is
//! left, so no credential can fill the disk or the database.
//!
//! Usage is counted in the instance's store, once for every node (`tenants::media`), when a write
//! starts; writes already under way are not counted, so concurrent uploads can overshoot by what
//! they write at once (at most the calls in flight times the payload limit).

use std::io;
use std::path::Path;

use super::MediaArea;

/// Bytes in the files under `dir` (none when it does not exist). Blocking.
fn bytes_under(dir: &Path) -> u64 {
    super::walk_files(dir).iter().filter_map(|(_, path)| std::fs::metadata(path).ok()).fold(0u64, |total, m| total.saturating_add(m.len()))
}

/// The bytes under `path`, a file or a folder, on the blocking pool.
pub async fn size_of(path: &Path) -> io::Result<u64> {
    let path = path.to_path_buf();
    tokio::task::spawn_blocking(move || match std::fs::metadata(&path) {
        Ok(m) if m.is_file() => m.len(),
        Ok(_) => bytes_under(&path),
        Err(_) => 0,
    })
    .await
    .map_err(io::Error::other)
}

impl MediaArea {
    /// The instance's quota in bytes (`u64::MAX`: none).
    pub fn quota(&self) -> u64 {
        self.quota
    }
}

/// How much one write may take: the payload limit, or the room left when that is less.
#[derive(Debug, Clone, Copy)]
pub struct Budget {
    pub bytes: u64,
    /// Whether the quota, not the payload limit, set `bytes`.
    pub by_quota: bool,
}

impl Budget {
    /// The budget of a write when `room` bytes are left under the quota.
    pub fn within(room: u64, payload_limit: u64) -> Budget {
        if room < payload_limit {
            Budget { bytes: room, by_quota: true }
        } else {
            Budget { bytes: payload_limit, by_quota: false }
        }
    }
}

/// The message of a write refused for the quota.
pub fn full_message(media: &MediaArea) -> String {
    format!("the media area of this instance is full: its quota is {} bytes; delete files to make room", media.quota())
}

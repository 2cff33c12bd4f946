//! Webapp archives: a `.zip` holding exactly one top-level folder, which names the webapp. Refused
//! with the reason: archives with no or several top-level folders or files beside the folder,
//! entries that would land outside it (`..`, absolute paths), links, more than `MAX_ENTRIES`
//! entries, or contents that expand beyond `MAX_EXPANDED_BYTES` (counted on the bytes actually
//! written, so a zip bomb that lies in its headers stops at the limit too).

use std::collections::BTreeSet;
use std::fs::File;
use std::io::{self, Read, Write};
use std::path::{Component, Path, PathBuf};

/// The largest expanded webapp.
pub const MAX_EXPANDED_BYTES: u64 = 200 * 1024 * 1024;
/// The most entries in one archive.
pub const MAX_ENTRIES: usize = 20_000;

/// Why an archive was refused (a message for the customer) or a fault.
#[derive(Debug)]
pub enum Refusal {
    Invalid(String),
    Io(io::Error),
}

impl From<io::Error> for Refusal {
    fn from(e: io::Error) -> Refusal {
        Refusal::Io(e)
    }
}

fn invalid(message: impl Into<String>) -> Refusal {
    Refusal::Invalid(message.into())
}

/// The components of an entry's path, if it stays inside the archive's root.
fn inside(name: &str) -> Option<Vec<String>> {
    if name.contains('\\') {
        return None;
    }
    let mut parts = Vec::new();
    for c in Path::new(name).components() {
        match c {
            Component::Normal(p) => parts.push(p.to_str()?.to_string()),
            Component::CurDir => {}
            _ => return None,
        }
    }
    (!parts.is_empty()).then_some(parts)
}

/// Checks `archive` and expands it into `dest` (which must not exist); returns the webapp's name.
/// Blocking: run it on the blocking pool.
pub fn extract(archive: &Path, dest: &Path) -> Result<String, Refusal> {
    let mut zip = zip::ZipArchive::new(File::open(archive)?).map_err(|e| invalid(format!("the file is not a zip archive: {e}")))?;
    if zip.len() > MAX_ENTRIES {
        return Err(invalid(format!("the archive has more than {MAX_ENTRIES} entries")));
    }
    let mut tops = BTreeSet::new();
    let mut declared = 0u64;
    for i in 0..zip.len() {
        let entry = zip.by_index_raw(i).map_err(|e| invalid(format!("entry {i} is unreadable: {e}")))?;
        let name = entry.name().to_string();
        let parts = inside(&name).ok_or_else(|| invalid(format!("entry '{name}' would be written outside the webapp")))?;
        if entry.is_symlink() {
            return Err(invalid(format!("entry '{name}' is a link; links are not accepted")));
        }
        if parts.len() == 1 && !entry.is_dir() {
            return Err(invalid(format!("'{name}' lies beside the webapp's folder: the archive must hold exactly one top-level folder")));
        }
        tops.insert(parts[0].clone());
        declared = declared.saturating_add(entry.size());
    }
    let name = match tops.len() {
        1 => tops.into_iter().next().expect("one"),
        0 => return Err(invalid("the archive is empty: it must hold exactly one top-level folder")),
        n => return Err(invalid(format!("the archive holds {n} top-level folders: it must hold exactly one"))),
    };
    super::RelPath::parse("webapp", &name).map_err(Refusal::Invalid)?;
    if declared > MAX_EXPANDED_BYTES {
        return Err(invalid(format!("the archive expands to more than {MAX_EXPANDED_BYTES} bytes")));
    }

    std::fs::create_dir_all(dest)?;
    let mut budget = MAX_EXPANDED_BYTES;
    for i in 0..zip.len() {
        let mut entry = zip.by_index(i).map_err(|e| invalid(format!("entry {i} is unreadable: {e}")))?;
        let parts = inside(entry.name()).expect("checked above");
        let target: PathBuf = parts.iter().fold(dest.to_path_buf(), |p, c| p.join(c));
        if entry.is_dir() {
            std::fs::create_dir_all(&target)?;
            continue;
        }
        if let Some(parent) = target.parent() {
            std::fs::create_dir_all(parent)?;
        }
        let mut out = File::create(&target)?;
        let written = copy_limited(&mut entry, &mut out, budget)
            .map_err(|e| match e.kind() {
                io::ErrorKind::InvalidData => invalid(format!("entry '{}' is corrupt: {e}", parts.join("/"))),
                _ => Refusal::Io(e),
            })?
            .ok_or_else(|| invalid(format!("the archive expands to more than {MAX_EXPANDED_BYTES} bytes")))?;
        budget -= written;
    }
    Ok(name)
}

/// Copies at most `limit` bytes; `None` when the source holds more.
fn copy_limited(from: &mut impl Read, to: &mut impl Write, limit: u64) -> io::Result<Option<u64>> {
    let mut buf = vec![0u8; 64 * 1024];
    let mut total = 0u64;
    loop {
        let n = from.read(&mut buf)?;
        if n == 0 {
            return Ok(Some(total));
        }
        total += n as u64;
        if total > limit {
            return Ok(None);
        }
        to.write_all(&buf[..n])?;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn entries_must_stay_inside() {
        assert_eq!(inside("app/index.html"), Some(vec!["app".into(), "index.html".into()]));
        assert_eq!(inside("./app/x"), Some(vec!["app".into(), "x".into()]));
        for bad in ["../evil", "app/../../evil", "/etc/passwd", "app\\..\\evil", ""] {
            assert_eq!(inside(bad), None, "{bad}");
        }
    }
}

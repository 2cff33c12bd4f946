//! Webapp archives: a `.zip` holding exactly one top-level folder, which names the webapp. Refused
//! with the reason: archives with no or several top-level folders or files beside the folder,
//! entries that would land outside it (`..`, absolute paths), links, more than `MAX_ENTRIES`
//! entries, or contents that expand beyond `MAX_EXPANDED_BYTES` (counted on the bytes actually
//! written, so a zip bomb that lies in its headers stops at the limit too).

use std::collections::BTreeSet;
use std::fs::File;
use std::io::{self, Read, Write};
use std::path::{Component, Path, PathBuf};

use super::names::{MAX_NAME_BYTES, MAX_PATH_BYTES};

/// The largest expanded webapp.
pub const MAX_EXPANDED_BYTES: u64 = 200 * 1024 * 1024;
/// The most entries in one archive.
pub const MAX_ENTRIES: usize = 20_000;

/// Why an archive was refused (a message for the customer) or a fault.
#[derive(Debug)]
pub enum Refusal {
    Invalid(String),
    /// The contents expand beyond the limit the caller gave.
    TooLarge,
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

/// Every name must be one the file system takes (a name over 255 bytes was a 500 from the disk):
/// the bounds of `RelPath` (archives keep their other leniencies: hidden files, colons), and no
/// control characters.
fn check_names(entry: &str, parts: &[String]) -> Result<(), String> {
    let shown: String = entry.chars().take(80).collect();
    if entry.len() > MAX_PATH_BYTES {
        return Err(format!("entry '{shown}...' has a path longer than {MAX_PATH_BYTES} bytes"));
    }
    for part in parts {
        if part.len() > MAX_NAME_BYTES {
            return Err(format!("entry '{shown}...' has a name longer than {MAX_NAME_BYTES} bytes"));
        }
        if part.chars().any(char::is_control) {
            return Err(format!("entry '{}' has a control character in its name", shown.escape_debug()));
        }
    }
    Ok(())
}

/// Checks `archive` and expands it into `dest` (which must not exist), writing at most `limit`
/// bytes (`MAX_EXPANDED_BYTES` or less: the room the media quota leaves); returns the webapp's
/// name. Blocking: run it on the blocking pool.
pub fn extract(archive: &Path, dest: &Path, limit: u64) -> Result<String, Refusal> {
    let limit = limit.min(MAX_EXPANDED_BYTES);
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
        check_names(&name, &parts).map_err(Refusal::Invalid)?;
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
    if declared > limit {
        return Err(Refusal::TooLarge);
    }

    std::fs::create_dir_all(dest)?;
    let mut budget = limit;
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
            .ok_or(Refusal::TooLarge)?;
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

    #[test]
    fn names_fit_the_file_system() {
        let long = "x".repeat(256);
        let entry = format!("app/{long}/index.html");
        assert!(check_names(&entry, &inside(&entry).unwrap()).unwrap_err().contains("255 bytes"));
        let deep = format!("app/{}", "abcdefghi/".repeat(110));
        assert!(check_names(&deep, &inside(&deep).unwrap()).unwrap_err().contains("1024 bytes"));
        assert!(check_names("app/a\u{7}b", &inside("app/a\u{7}b").unwrap()).is_err());
        assert!(check_names("app/index.html", &inside("app/index.html").unwrap()).is_ok());
    }
}

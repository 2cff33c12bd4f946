//! Which templates reference an item. A template references a resource when its text contains the
//! resource's path as `resources/<path>` (as in `<img src="resources/images/logo.png">`), and
//! another template as `templates/<path>`. Working copies and committed versions both count.

use std::collections::BTreeSet;

use super::{walk_files, MediaArea};

/// The texts of every template (working and committed), by their path.
fn template_texts(media: &MediaArea) -> Vec<(String, String)> {
    let mut texts = Vec::new();
    let working = media.media_root().join("templates");
    let committed = media.committed_template(&super::RelPath::root());
    for (label, root) in [("", working), ("committed:", committed)] {
        for (rel, path) in walk_files(&root) {
            if let Ok(bytes) = std::fs::read(&path) {
                texts.push((format!("{label}{rel}"), String::from_utf8_lossy(&bytes).into_owned()));
            }
        }
    }
    texts
}

/// The templates whose text contains `needle` (`resources/<path>` or `templates/<path>`),
/// leaving out the template `except` itself. Blocking: run it on the blocking pool.
pub fn referrers(media: &MediaArea, needle: &str, except: Option<&str>) -> Vec<String> {
    let mut found = BTreeSet::new();
    for (path, text) in template_texts(media) {
        let own = path.strip_prefix("committed:").unwrap_or(&path);
        if Some(own) == except {
            continue;
        }
        if text.contains(needle) {
            found.insert(own.to_string());
        }
    }
    found.into_iter().collect()
}

/// For each needle, whether some template (other than the needle's own) references it.
pub fn referenced(media: &MediaArea, needles: &[(String, Option<String>)]) -> Vec<bool> {
    let texts = template_texts(media);
    needles
        .iter()
        .map(|(needle, except)| {
            texts.iter().any(|(path, text)| {
                let own = path.strip_prefix("committed:").unwrap_or(path);
                Some(own) != except.as_deref() && text.contains(needle.as_str())
            })
        })
        .collect()
}

//! Names of media items and folders, as customers send them. A name is a relative path of plain
//! components: no `..`, no absolute paths, no control characters or backslashes, no hidden
//! components (leading `.`), each at most 255 bytes and the whole at most 1024.

use std::borrow::Cow;
use std::path::PathBuf;

/// The longest name of one component, and of a whole path, in bytes (what file systems take).
pub const MAX_NAME_BYTES: usize = 255;
pub const MAX_PATH_BYTES: usize = 1024;

/// A validated relative path (components joined with `/`), possibly empty (the area's root).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RelPath(Vec<String>);

impl RelPath {
    pub fn root() -> RelPath {
        RelPath(Vec::new())
    }

    /// Reads a folder or item path; `what` names it in the error ("folder", "file").
    pub fn parse(what: &str, text: &str) -> Result<RelPath, String> {
        let mut parts = Vec::new();
        for_each_part(what, text, |part| parts.push(part.to_string()))?;
        Ok(RelPath(parts))
    }

    /// `parse(what, text)?.as_text()`, borrowed from `text` when it is already written so (no
    /// empty component): an extension call looks its record up by this at every call, where
    /// the components and their join cost four allocations (issue 41).
    pub fn normalized<'a>(what: &str, text: &'a str) -> Result<Cow<'a, str>, String> {
        for_each_part(what, text, |_| {})?;
        let written_so = !text.split('/').any(str::is_empty);
        Ok(if written_so { Cow::Borrowed(text) } else { Cow::Owned(RelPath::parse(what, text)?.as_text()) })
    }

    /// An item name (the file name of an upload): one non-empty component. A name that is a path
    /// (`..`, `/` or `\\` anywhere) is refused rather than cut down to its last part: what would be
    /// stored is then not what the client named. Folders go in the form's `folder` field.
    pub fn file_name(text: &str) -> Result<String, String> {
        if text.contains(['/', '\\']) {
            return Err(format!("the file name '{text}' is a path: send the name alone, and the folder in the 'folder' field"));
        }
        match RelPath::parse("file", text)?.0.as_slice() {
            [one] => Ok(one.clone()),
            _ => Err("the file needs a name".into()),
        }
    }

    pub fn is_root(&self) -> bool {
        self.0.is_empty()
    }

    pub fn join(&self, name: &str) -> RelPath {
        let mut parts = self.0.clone();
        parts.push(name.to_string());
        RelPath(parts)
    }

    /// `self` followed by every component of `tail`.
    pub fn concat(&self, tail: &RelPath) -> RelPath {
        RelPath(self.0.iter().chain(tail.0.iter()).cloned().collect())
    }

    /// The last component.
    pub fn name(&self) -> Option<&str> {
        self.0.last().map(String::as_str)
    }

    pub fn to_fs(&self) -> PathBuf {
        self.0.iter().collect()
    }

    /// `a/b/c`
    pub fn as_text(&self) -> String {
        self.0.join("/")
    }
}

/// Calls `each` with every non-empty component of `text` once the whole and each component pass
/// the rules of the module's head; the first that does not is the error.
fn for_each_part<'a>(what: &str, text: &'a str, mut each: impl FnMut(&'a str)) -> Result<(), String> {
    if text.len() > MAX_PATH_BYTES {
        return Err(format!("the {what} path is longer than {MAX_PATH_BYTES} bytes"));
    }
    for part in text.split('/') {
        if part.is_empty() {
            continue; // "a//b", a leading or trailing slash
        }
        if part == "." || part == ".." {
            return Err(format!("the {what} path '{text}' may not contain '.' or '..'"));
        }
        if part.starts_with('.') {
            return Err(format!("the {what} path '{text}' may not contain hidden names (starting with '.')"));
        }
        if part.chars().any(|c| c.is_control() || c == '\\' || c == ':') {
            return Err(format!("the {what} path '{text}' contains a control character, '\\\\' or ':'"));
        }
        if part.len() > MAX_NAME_BYTES {
            return Err(format!("a name in the {what} path is longer than {MAX_NAME_BYTES} bytes"));
        }
        each(part);
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn plain_paths_pass_and_are_normalised() {
        assert_eq!(RelPath::parse("folder", "images/2024/").unwrap().as_text(), "images/2024");
        assert_eq!(RelPath::parse("folder", "/a//b").unwrap().as_text(), "a/b");
        assert!(RelPath::parse("folder", "").unwrap().is_root());
        assert_eq!(RelPath::parse("file", "café menu.pdf").unwrap().as_text(), "café menu.pdf");
    }

    #[test]
    fn a_normalized_path_is_the_parsed_one_and_borrowed_when_written_so() {
        for text in ["hello.wasm", "shop/hook.wasm", "/a//b.wasm", "a/b/", "", "café menu.pdf"] {
            let normalized = RelPath::normalized("extension", text).unwrap();
            assert_eq!(normalized, RelPath::parse("extension", text).unwrap().as_text(), "{text:?}");
            assert_eq!(matches!(normalized, Cow::Borrowed(_)), !text.split('/').any(str::is_empty), "{text:?}");
        }
        for bad in ["..", "a/../b.wasm", ".hidden.wasm", "a\\b", "c:evil", "a\u{0}b"] {
            assert_eq!(RelPath::normalized("extension", bad).unwrap_err(), RelPath::parse("extension", bad).unwrap_err(), "{bad:?}");
        }
    }

    #[test]
    fn traversal_and_odd_names_are_refused() {
        for bad in ["..", "a/../b", "./a", ".hidden", "a/.git/x", "a\\b", "c:evil", "a\u{0}b", "a\nb"] {
            assert!(RelPath::parse("folder", bad).is_err(), "{bad:?}");
        }
        assert!(RelPath::parse("folder", &"x".repeat(256)).is_err());
        assert!(RelPath::parse("folder", &"x/".repeat(600)).is_err());
    }

    #[test]
    fn file_names_are_names_not_paths() {
        assert_eq!(RelPath::file_name("logo.png").unwrap(), "logo.png");
        for path in ["C:\\Users\\me\\logo.png", "dir/logo.png", "../logo.png", "/logo.png", "\\logo.png", "", "..", "a/../b"] {
            assert!(RelPath::file_name(path).is_err(), "{path}");
        }
    }
}

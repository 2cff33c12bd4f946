//! The docs tell the truth about where they lead: every relative link of the README, the book in
//! `docs/` and the other pages a reader meets resolves (its file, and its heading when it names
//! one), and every flag of `herald serve --help` is documented in `docs/running.md`.

use std::collections::HashSet;
use std::path::{Path, PathBuf};

use herald_tests::process::herald_binary;

fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("..")
}

/// The pages whose links are checked (the specification's copy is checked as a target only: it
/// is kept as it was given).
fn pages() -> Vec<PathBuf> {
    let root = root();
    let mut pages: Vec<PathBuf> =
        ["README.md", "ARCHITECTURE.md", "BENCHMARKS.md", "sdk/js/README.md", "sdk/python/herald_sdk/README.md", "wit/README.md"]
            .iter()
            .map(|p| root.join(p))
            .collect();
    for entry in std::fs::read_dir(root.join("docs")).unwrap() {
        let path = entry.unwrap().path();
        if path.extension().is_some_and(|e| e == "md") {
            pages.push(path);
        }
    }
    pages
}

/// A heading's anchor as GitHub makes it: lower case, spaces to hyphens, other punctuation gone.
fn slug(heading: &str) -> String {
    heading
        .trim()
        .to_lowercase()
        .chars()
        .filter_map(|c| match c {
            ' ' => Some('-'),
            c if c.is_alphanumeric() || c == '-' || c == '_' => Some(c),
            _ => None,
        })
        .collect()
}

/// The lines of `text` outside fenced code blocks.
fn prose(text: &str) -> Vec<&str> {
    let mut fenced = false;
    text.lines()
        .filter(|line| {
            if line.trim_start().starts_with("```") {
                fenced = !fenced;
                return false;
            }
            !fenced
        })
        .collect()
}

fn anchors(text: &str) -> HashSet<String> {
    prose(text).iter().filter(|l| l.starts_with('#')).map(|l| slug(l.trim_start_matches('#'))).collect()
}

/// The targets of `[text](target)` links outside code.
fn links(text: &str) -> Vec<String> {
    let mut found = Vec::new();
    for line in prose(text) {
        let mut rest = line;
        while let Some(at) = rest.find("](") {
            rest = &rest[at + 2..];
            let Some(end) = rest.find(')') else { break };
            found.push(rest[..end].to_string());
            rest = &rest[end..];
        }
    }
    found
}

#[test]
fn every_relative_link_of_the_docs_resolves() {
    let mut broken = Vec::new();
    let mut checked = 0;
    for page in pages() {
        let text = std::fs::read_to_string(&page).unwrap();
        for link in links(&text) {
            if link.starts_with("http://") || link.starts_with("https://") || link.starts_with("mailto:") || link.contains(' ') {
                continue;
            }
            checked += 1;
            let (path, anchor) = link.split_once('#').map_or((link.as_str(), None), |(p, a)| (p, Some(a)));
            let target = if path.is_empty() { page.clone() } else { page.parent().unwrap().join(path) };
            if !target.exists() {
                broken.push(format!("{}: {link} (no such file)", page.display()));
                continue;
            }
            if let (Some(anchor), true) = (anchor, target.extension().is_some_and(|e| e == "md")) {
                if !anchors(&std::fs::read_to_string(&target).unwrap()).contains(anchor) {
                    broken.push(format!("{}: {link} (no such heading)", page.display()));
                }
            }
        }
    }
    assert!(checked > 40, "only {checked} links found: is the checker reading the pages?");
    assert!(broken.is_empty(), "broken links:\n{}", broken.join("\n"));
}

#[test]
fn the_slugs_are_github_s() {
    assert_eq!(slug("Author tools: new, deploy, run, replay"), "author-tools-new-deploy-run-replay");
    assert_eq!(slug("The OpenAPI document and the reference page"), "the-openapi-document-and-the-reference-page");
    assert_eq!(
        slug("`signatures.js`: is the call from who says it sent it? (http extensions)"),
        "signaturesjs-is-the-call-from-who-says-it-sent-it-http-extensions"
    );
}

#[test]
fn every_flag_of_herald_serve_is_documented() {
    let help = std::process::Command::new(herald_binary()).args(["serve", "--help"]).output().unwrap();
    assert!(help.status.success());
    let help = String::from_utf8(help.stdout).unwrap();
    let running = std::fs::read_to_string(root().join("docs/running.md")).unwrap();
    let mut flags: Vec<&str> = help
        .split(|c: char| c.is_whitespace() || c == ',' || c == '[' || c == ']' || c == '<')
        .filter(|word| word.starts_with("--") && word.len() > 2)
        .map(|word| word.split('=').next().unwrap())
        .filter(|flag| *flag != "--help")
        .collect();
    flags.sort_unstable();
    flags.dedup();
    assert!(flags.len() > 20, "{flags:?}");
    let missing: Vec<&&str> = flags.iter().filter(|flag| !running.contains(&format!("`{flag}`"))).collect();
    assert!(missing.is_empty(), "flags of herald serve not in docs/running.md: {missing:?}");
}

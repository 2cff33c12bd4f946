//! The allowed dependency directions between the crate's top-level modules, checked on the
//! source: a module may name (`crate::x`) only modules of a lower layer, so no two modules import
//! each other and a reader finds a concern below everything that uses it. ARCHITECTURE.md shows
//! the same table; a new module gets a layer here.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

/// Lowest first. Modules of one layer do not use each other.
const LAYERS: &[&[&str]] = &[
    &["values", "paging", "connections", "clock"],
    &["rsql", "assets"],
    &["model"],
    &["store"],
    &["auth", "limits", "seed"],
    &["tenants"],
    &["secrets", "domain", "ops"],
    &["runtime", "imports"],
    &["queue"],
    &["monitors", "flows"],
    &["http", "cli"],
    &["server"],
    &["commands"],
];

/// Test-only modules, outside the layers.
const TEST_ONLY: &[&str] = &["fuzz", "layering"];

fn layer_of(module: &str) -> Option<usize> {
    LAYERS.iter().position(|layer| layer.contains(&module))
}

/// The top-level modules (a file `x.rs` or a folder `x/`) and their source files.
fn modules(src: &Path) -> BTreeMap<String, Vec<PathBuf>> {
    let mut out = BTreeMap::new();
    for entry in std::fs::read_dir(src).expect("the source folder") {
        let path = entry.expect("a source entry").path();
        let name = path.file_stem().and_then(|n| n.to_str()).expect("a UTF-8 name").to_string();
        if name == "lib" || name == "main" {
            continue;
        }
        let mut files = Vec::new();
        collect(&path, &mut files);
        if !files.is_empty() {
            out.entry(name).or_insert_with(Vec::new).extend(files);
        }
    }
    out
}

fn collect(path: &Path, files: &mut Vec<PathBuf>) {
    if path.is_dir() {
        for entry in std::fs::read_dir(path).expect("a source folder") {
            collect(&entry.expect("a source entry").path(), files);
        }
    } else if path.extension().is_some_and(|e| e == "rs") {
        files.push(path.to_path_buf());
    }
}

/// The code of a file without its unit tests (which may reach anywhere) and without comments.
fn code(text: &str) -> String {
    let text = match text.find("#[cfg(test)]\nmod tests") {
        Some(at) => &text[..at],
        None => text,
    };
    text.lines().map(|line| line.split("//").next().unwrap_or("")).collect::<Vec<_>>().join("\n")
}

/// The names after `crate::`, including those of a `crate::{a, b::c}` group.
fn named_modules(code: &str) -> Vec<String> {
    let mut names = Vec::new();
    for (at, _) in code.match_indices("crate::") {
        let rest = &code[at + "crate::".len()..];
        if let Some(group) = rest.strip_prefix('{') {
            let inner = &group[..group.find('}').unwrap_or(group.len())];
            names.extend(inner.split(|c: char| !(c.is_ascii_alphanumeric() || c == '_')).filter(|w| !w.is_empty()).map(String::from));
        } else {
            let name: String = rest.chars().take_while(|c| c.is_ascii_alphanumeric() || *c == '_').collect();
            names.push(name);
        }
    }
    names
}

#[test]
fn every_module_uses_only_modules_of_lower_layers() {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let modules = modules(&src);
    let mut problems = Vec::new();
    for (module, files) in &modules {
        if TEST_ONLY.contains(&module.as_str()) {
            continue;
        }
        let Some(own) = layer_of(module) else {
            problems.push(format!("{module}: not in LAYERS (give it a layer in layering.rs and ARCHITECTURE.md)"));
            continue;
        };
        for file in files {
            let text = std::fs::read_to_string(file).expect("a source file");
            for used in named_modules(&code(&text)) {
                if used == *module || !modules.contains_key(&used) || TEST_ONLY.contains(&used.as_str()) {
                    continue;
                }
                match layer_of(&used) {
                    Some(theirs) if theirs < own => {}
                    _ => problems.push(format!("{}: {module} uses {used}", file.strip_prefix(&src).unwrap_or(file).display())),
                }
            }
        }
    }
    problems.sort();
    problems.dedup();
    assert!(problems.is_empty(), "dependencies against the layers:\n{}", problems.join("\n"));
}

#[test]
fn the_check_sees_single_and_grouped_imports_and_skips_comments_and_unit_tests() {
    let text = "use crate::store::Db;\n// crate::http in a comment\nuse crate::{model::Model, rsql};\nfn f() { crate::paging::now(); }\n#[cfg(test)]\nmod tests {\n    use crate::server;\n}\n";
    assert_eq!(named_modules(&code(text)), ["store", "model", "Model", "rsql", "paging"]);
}

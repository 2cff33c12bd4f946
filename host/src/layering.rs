//! The allowed dependency directions between the crate's top-level modules, checked on the
//! source: a module may name (`crate::x`) only modules of a lower layer, so no two modules import
//! each other and a reader finds a concern below everything that uses it. ARCHITECTURE.md shows
//! the same table; a new module gets a layer here.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

/// Lowest first. Modules of one layer do not use each other.
const LAYERS: &[&[&str]] = &[
    &["values", "paging", "connections", "clock", "scheduling", "cold"],
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

/// The code of a file without its unit-test modules (which may reach anywhere; code after one
/// is kept) and without comments.
fn code(text: &str) -> String {
    let text: String = text.lines().map(|line| line.split("//").next().unwrap_or("")).collect::<Vec<_>>().join("\n");
    let mut out = String::with_capacity(text.len());
    let mut rest = text.as_str();
    while let Some(at) = rest.find("#[cfg(test)]") {
        out.push_str(&rest[..at]);
        let after = &rest[at..];
        // The item the attribute marks ends at its `;` or at the `}` closing its first `{`.
        let end = match (after.find('{'), after.find(';')) {
            (Some(open), semi) if semi.is_none_or(|s| open < s) => closing(after, open).map_or(after.len(), |close| close + 1),
            (_, Some(semi)) => semi + 1,
            _ => after.len(),
        };
        rest = &after[end..];
    }
    out.push_str(rest);
    out
}

/// Where the `}` that closes the `{` at `open` is.
fn closing(text: &str, open: usize) -> Option<usize> {
    let mut depth = 0usize;
    for (i, c) in text[open..].char_indices() {
        match c {
            '{' => depth += 1,
            '}' => {
                depth -= 1;
                if depth == 0 {
                    return Some(open + i);
                }
            }
            _ => {}
        }
    }
    None
}

/// The first segment of each path of a `use` group's inside (`a::b, c::{d, e}, f` is a, c, f).
fn group_heads(inner: &str) -> Vec<String> {
    let mut heads = Vec::new();
    let mut depth = 0usize;
    let mut start_of_path = true;
    let mut word = String::new();
    for c in inner.chars() {
        match c {
            '{' => depth += 1,
            '}' => depth = depth.saturating_sub(1),
            ',' if depth == 0 => start_of_path = true,
            c if c.is_ascii_alphanumeric() || c == '_' => {
                if depth == 0 && start_of_path {
                    word.push(c);
                }
                continue;
            }
            _ => {}
        }
        if !word.is_empty() {
            heads.push(std::mem::take(&mut word));
            start_of_path = false;
        }
    }
    if !word.is_empty() {
        heads.push(word);
    }
    heads
}

/// The top-level modules a piece of code names: after `crate::` (a path or a group, nested
/// groups included), and after as many `super::` as climb from `file_path` (the file's module
/// path under `src/`, `["http", "recipients", "crud"]`) to the crate's root.
fn named_modules(code: &str, file_path: &[&str]) -> Vec<String> {
    let mut names = Vec::new();
    let mut take = |rest: &str| {
        if let Some(group) = rest.strip_prefix('{') {
            let close = closing(rest, 0).unwrap_or(rest.len());
            names.extend(group_heads(&group[..close.saturating_sub(1)]));
        } else {
            names.push(rest.chars().take_while(|c| c.is_ascii_alphanumeric() || *c == '_').collect());
        }
    };
    for (at, _) in code.match_indices("crate::") {
        take(&code[at + "crate::".len()..]);
    }
    // A module's `super` is its parent: `n` of them from a module `n` deep reach the root.
    let depth = file_path.len();
    let mut at = 0;
    while let Some(found) = code[at..].find("super::") {
        let start = at + found;
        let preceded =
            code[..start].ends_with("super::") || code[..start].chars().last().is_some_and(|c| c.is_ascii_alphanumeric() || c == '_');
        let mut end = start;
        let mut climbs = 0;
        while code[end..].starts_with("super::") {
            climbs += 1;
            end += "super::".len();
        }
        if !preceded && climbs >= depth && depth > 0 {
            take(&code[end..]);
        }
        at = end;
    }
    names
}

/// A file's module path under `src/`: `http/recipients/crud.rs` is http, recipients, crud;
/// `http/mod.rs` is http.
fn module_path(relative: &Path) -> Vec<String> {
    let mut parts: Vec<String> = relative.iter().map(|p| p.to_string_lossy().trim_end_matches(".rs").to_string()).collect();
    if parts.last().is_some_and(|last| last == "mod") {
        parts.pop();
    }
    parts
}

/// The store's methods that change an instance's data: only `domain` (and the store's own
/// callers below the doors: seeding, imports) calls them, so that a rule holds at every door.
const DATA_WRITES: &[&str] = &[
    "create_recipient",
    "update_recipient",
    "update_recipient_by",
    "delete_recipient",
    "achieve_event",
    "insert_recipients",
    "insert_record",
    "upsert_record",
    "batch_upsert",
    "delete_record",
    "batch_delete",
    "truncate",
    "set_global_value",
    "insert_communication",
];

/// The store's methods that read an instance's data one recipient, record or list at a time: the
/// doors read through `domain` too. (The bulk machinery of exports, paging documents and
/// streamed searches, which the doors drive batch by batch, is the store's own.)
const DATA_READS: &[&str] = &[
    "find_recipient",
    "recipient_by_key",
    "recipients_by_keys",
    "recipient_matches",
    "recipient_keys_after",
    "events",
    "communications",
    "records",
    "record",
    "global_value",
];

/// The doors of the data: the REST API, the extensions' host functions and the flows' nodes.
const DOORS: &[&str] = &["http", "runtime", "flows"];

#[test]
fn the_doors_reach_an_instance_s_data_through_the_domain_only() {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let mut problems = Vec::new();
    for (module, files) in modules(&src) {
        if !DOORS.contains(&module.as_str()) {
            continue;
        }
        for file in files {
            let code = code(&std::fs::read_to_string(&file).expect("a source file"));
            for method in DATA_WRITES.iter().chain(DATA_READS) {
                // `tenant.db.x(`, and a `db` borrowed from it (`let db = &tenant.db; db.x(`).
                if code.contains(&format!(".db.{method}(")) || code.contains(&format!(" db.{method}(")) {
                    problems.push(format!(
                        "{}: calls the store's {method} (go through domain::)",
                        file.strip_prefix(&src).unwrap_or(&file).display()
                    ));
                }
            }
        }
    }
    assert!(problems.is_empty(), "reads or writes around the domain:\n{}", problems.join("\n"));
}

/// The one reader of field values: `model::fields` (over `values`' typed parsers), so that every
/// door takes a field's values and refuses them in the same words.
const FIELD_READERS: &[&str] = &["values/", "model/fields.rs"];

#[test]
fn field_values_are_read_by_model_fields_only() {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let mut problems = Vec::new();
    for (module, files) in modules(&src) {
        if TEST_ONLY.contains(&module.as_str()) {
            continue;
        }
        for file in files {
            let relative = file.strip_prefix(&src).unwrap_or(&file).display().to_string();
            if FIELD_READERS.iter().any(|reader| relative.starts_with(reader)) {
                continue;
            }
            let code = code(&std::fs::read_to_string(&file).expect("a source file"));
            for parser in ["Value::from_json(", "Value::from_text("] {
                if code.contains(parser) {
                    problems.push(format!("{relative}: calls {parser}..) (read field values with model::fields)"));
                }
            }
        }
    }
    assert!(problems.is_empty(), "field values read around model::fields:\n{}", problems.join("\n"));
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
            let path = module_path(file.strip_prefix(&src).unwrap_or(file));
            let path: Vec<&str> = path.iter().map(String::as_str).collect();
            for used in named_modules(&code(&text), &path) {
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
fn the_check_sees_single_grouped_nested_and_super_imports_and_skips_comments_and_unit_tests() {
    let text = "use crate::store::Db;\n// crate::http in a comment\nuse crate::{model::Model, rsql};\nfn f() { crate::paging::now(); }\n#[cfg(test)]\nmod tests {\n    use crate::server;\n}\nuse crate::{values::{a, b}, clock};\nuse super::super::auth::X;\nuse super::sibling;\n";
    assert_eq!(named_modules(&code(text), &["http", "recipients", "crud"]), ["store", "model", "rsql", "paging", "values", "clock"]);
    assert_eq!(named_modules(&code(text), &["http", "recipients"]), ["store", "model", "rsql", "paging", "values", "clock", "auth"]);
    assert_eq!(module_path(Path::new("http/recipients/mod.rs")), ["http", "recipients"]);
    let after =
        code("#[cfg(test)]\nmod tests { fn t() { let x = { 1 }; } }\nfn g() { crate::queue::run(); }\n#[cfg(test)]\nuse crate::server;\n");
    assert_eq!(named_modules(&after, &["store"]), ["queue"], "code after a test module is read; a test-only use is not");
}

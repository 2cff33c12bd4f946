//! The document against the routers: every route of `http/` (read from the source, as
//! `layering.rs` reads imports, and the extension calls' templates) is described, method by
//! method, and every described operation has a route. A router's `{method}` segment serves the
//! described custom methods (`:achieveEvent`); `{*rest}` is the described `{path}`; a trailing
//! `/` is an alias; a route for any method is described with the methods that mean something on
//! it.

use std::path::Path;

use super::{document, operations};

/// Routes that are aliases of a described one, with no operation of their own.
const ALIASES: &[&str] = &["/dav"];

/// `(methods, path)` of every `.route("path", methods)` and `.route_service("path", service)`
/// call in the source under `dir`.
fn routes(dir: &Path, out: &mut Vec<(Vec<String>, String)>) {
    for entry in std::fs::read_dir(dir).expect("the http sources") {
        let path = entry.expect("an entry").path();
        if path.is_dir() {
            routes(&path, out);
            continue;
        }
        // The testing routes exist only in test builds and are no part of the platform.
        if path.extension().is_none_or(|e| e != "rs") || path.ends_with("testing.rs") || path.ends_with("drift.rs") {
            continue;
        }
        let text = std::fs::read_to_string(&path).expect("a source file");
        let mut rest = text.as_str();
        while let Some(at) = rest.find(".route") {
            rest = &rest[at + ".route".len()..];
            // `.route_service("path", service)`: a service of its own answers every method.
            let (opening, service) = if rest.starts_with("(\"") {
                ("(\"", false)
            } else if rest.starts_with("_service(\"") {
                ("_service(\"", true)
            } else {
                continue;
            };
            rest = &rest[opening.len()..];
            let end = rest.find('"').expect("a closed path literal");
            let route = rest[..end].to_string();
            let call = call_arguments(&rest[end..]);
            let methods = if service {
                vec!["ANY".to_string()]
            } else {
                ["get", "post", "put", "delete", "patch", "any"]
                    .iter()
                    .filter(|m| call.contains(&format!("{m}(")))
                    .map(|m| m.to_uppercase())
                    .collect()
            };
            out.push((methods, route));
        }
    }
}

/// The text up to the parenthesis that closes the `.route(` call.
fn call_arguments(text: &str) -> &str {
    let mut depth = 1;
    for (i, c) in text.char_indices() {
        match c {
            '(' => depth += 1,
            ')' => {
                depth -= 1;
                if depth == 0 {
                    return &text[..i];
                }
            }
            _ => {}
        }
    }
    text
}

fn segments(path: &str) -> Vec<&str> {
    let trimmed = if path.len() > 1 { path.trim_end_matches('/') } else { path };
    trimmed.split('/').collect()
}

/// Whether the router's `route` serves the described `described` path.
fn serves(route: &str, described: &str) -> bool {
    let (r, d) = (segments(route), segments(described));
    r.len() == d.len()
        && r.iter().zip(&d).all(|(r, d)| {
            let r_param = r.starts_with('{');
            let d_param = d.starts_with('{');
            match (r_param, d_param) {
                (true, true) => true,
                (true, false) => d.starts_with(':'),
                (false, false) => r == d,
                (false, true) => false,
            }
        })
}

#[test]
fn every_route_is_described_and_every_description_has_a_route() {
    let mut found = Vec::new();
    routes(&Path::new(env!("CARGO_MANIFEST_DIR")).join("src/http"), &mut found);
    assert!(found.len() > 40, "the routes were read from the source: {}", found.len());
    // Extension calls are matched before the router, by these templates; any method.
    let calls = crate::http::extension_calls::SECURE_ROUTES.iter().chain(crate::http::extension_calls::OPEN_ROUTES.iter());
    found.extend(calls.map(|route| (vec!["ANY".to_string()], route.to_string())));
    let described = operations(document());
    let mut problems = Vec::new();
    for (methods, route) in &found {
        if ALIASES.contains(&route.trim_end_matches('/')) {
            continue;
        }
        for method in methods {
            // `any`: described with the methods that mean something on it.
            if !described.iter().any(|(m, p)| (m == method || method == "ANY") && serves(route, p)) {
                problems.push(format!("{method} {route}: a route the document does not describe"));
            }
        }
    }
    for (method, path) in &described {
        if !found.iter().any(|(methods, route)| (methods.contains(method) || methods.iter().any(|m| m == "ANY")) && serves(route, path)) {
            problems.push(format!("{method} {path}: described, but no router serves it"));
        }
    }
    assert!(problems.is_empty(), "the document and the routers differ:\n{}", problems.join("\n"));
}

#[test]
fn the_matching_reads_custom_methods_wildcards_and_aliases() {
    assert!(serves("/recipients/{recipient_id}/{method}", "/recipients/{recipientId}/:evaluatePromotion"));
    assert!(serves("/extensions/secure/{extension_id}/{*path}", "/extensions/secure/{extensionId}/{path}"));
    assert!(serves("/globaldata/", "/globaldata/"));
    assert!(serves("/globaldata", "/globaldata/"));
    assert!(!serves("/recipients/{recipient_id}", "/recipients/{recipientId}/events"));
    assert!(!serves("/recipients/events", "/recipients/{recipientId}"));
}

/// Every `$ref` of `value`, recursively.
fn references<'a>(value: &'a serde_json::Value, out: &mut Vec<&'a str>) {
    match value {
        serde_json::Value::Object(map) => {
            for (key, v) in map {
                match (key.as_str(), v.as_str()) {
                    ("$ref", Some(target)) => out.push(target),
                    _ => references(v, out),
                }
            }
        }
        serde_json::Value::Array(items) => items.iter().for_each(|v| references(v, out)),
        _ => {}
    }
}

#[test]
fn every_reference_of_the_document_resolves() {
    let doc = document();
    let mut found = Vec::new();
    references(doc, &mut found);
    assert!(found.len() > 50, "the document's references were read: {}", found.len());
    let dangling: Vec<&str> =
        found.into_iter().filter(|r| r.strip_prefix("#/").is_none_or(|pointer| doc.pointer(&format!("/{pointer}")).is_none())).collect();
    assert!(dangling.is_empty(), "references to nothing: {dangling:?}");
}

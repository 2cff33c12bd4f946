//! A flow's `send`: renders a committed template of the Assets API (Jinja syntax, minijinja) for
//! one recipient and writes the result to the recipient's communication history.
//!
//! What a template sees: `recipient` (the Person Data, by field name; empty fields are left out),
//! `global` (the Global Data values, by name) and `context` (the contextual data of the call that
//! started the run, when there is some). A template may set `subject` (`{% set subject = "..." %}`);
//! the entry's subject is then that, otherwise the template's name. Printing a value that is not
//! there (`{{ recipient.FIRST_NAME }}` for a recipient without one) is an error: nothing is sent
//! and the run records which; testing it (`{% if recipient.FIRST_NAME %}`) is not. Rendering is
//! bounded (minijinja's fuel), so a template cannot loop for ever.

use std::path::{Path, PathBuf};

use serde_json::{Map, Value as Json};

use crate::assets::{MediaArea, RelPath};
use crate::store::tenant::{Communication, Recipient, SharedArea};
use crate::tenants::Tenant;

/// Rendering steps one template may take per recipient.
const FUEL: u64 = 200_000;

/// The largest rendered result kept.
const MAX_CONTENT: usize = 256 * 1024;

/// A template found among the committed ones.
pub struct Template {
    /// As the Assets API names it (`welcome.html`).
    pub name: String,
    pub source: String,
}

/// The committed template `wanted` (`welcome` finds `welcome.html`): from the instance's store,
/// which every node reads, else from this node's media area (templates committed before the
/// store kept them). The error says why there is none.
pub async fn find(tenant: &Tenant, media: &MediaArea, wanted: &str) -> Result<Template, String> {
    let missing = || format!("template '{wanted}' is not committed (upload and commit it with the Assets API)");
    let rel = RelPath::parse("template", wanted).map_err(|_| missing())?;
    if let Some(found) = shared(tenant, &rel).await? {
        return Ok(found);
    }
    let exact = media.committed_template(&rel);
    let path = match tokio::fs::metadata(&exact).await {
        Ok(m) if m.is_file() => exact,
        _ => same_stem(&exact).await.ok_or_else(missing)?,
    };
    let bytes = tokio::fs::read(&path).await.map_err(|_| missing())?;
    let source = String::from_utf8(bytes).map_err(|_| format!("template '{wanted}' is not UTF-8 text"))?;
    let name = match (rel.as_text().rsplit_once('/'), path.file_name()) {
        (Some((folder, _)), Some(file)) => format!("{folder}/{}", file.to_string_lossy()),
        (None, Some(file)) => file.to_string_lossy().into_owned(),
        _ => rel.as_text(),
    };
    Ok(Template { name, source })
}

async fn shared(tenant: &Tenant, rel: &RelPath) -> Result<Option<Template>, String> {
    let area = SharedArea::CommittedTemplates;
    let fault = |e: crate::store::StoreError| format!("the committed templates could not be read: {e}");
    let text = rel.as_text();
    // The exact name is read once; only a name without extension looks for one with it.
    let (path, bytes) = match tenant.db.shared_file(area, &text).await.map_err(fault)? {
        Some(bytes) => (text, bytes),
        None => {
            let Some(path) = tenant.db.shared_paths_with_stem(area, &text).await.map_err(fault)?.into_iter().next() else {
                return Ok(None);
            };
            let Some(bytes) = tenant.db.shared_file(area, &path).await.map_err(fault)? else { return Ok(None) };
            (path, bytes)
        }
    };
    let source = String::from_utf8(bytes).map_err(|_| format!("template '{path}' is not UTF-8 text"))?;
    Ok(Some(Template { name: path, source }))
}

/// The file beside `path` whose name without its extension is `path`'s name (the first by name).
async fn same_stem(path: &Path) -> Option<PathBuf> {
    let (dir, stem) = (path.parent()?, path.file_name()?.to_str()?);
    let mut entries = tokio::fs::read_dir(dir).await.ok()?;
    let mut found = Vec::new();
    while let Ok(Some(entry)) = entries.next_entry().await {
        let p = entry.path();
        if p.file_stem().and_then(|s| s.to_str()) == Some(stem) && entry.file_type().await.is_ok_and(|t| t.is_file()) {
            found.push(p);
        }
    }
    found.sort();
    found.into_iter().next()
}

/// What a template is rendered with.
pub async fn variables(tenant: &Tenant, recipient: &Recipient, context: Option<&Json>) -> Result<Json, String> {
    let formats = &tenant.model.formats;
    let mut person = Map::new();
    for (field, value) in tenant.model.def.person_data.iter().zip(&recipient.values) {
        if !value.is_null() {
            person.insert(field.name.clone(), value.to_json(formats));
        }
    }
    let mut global = Map::new();
    for def in &tenant.model.def.global_data {
        match crate::domain::global_data::get(tenant, &def.name).await {
            Ok(Some(v)) => {
                if let Some(text) = v.value {
                    global.insert(def.name.clone(), Json::String(text));
                }
            }
            Ok(None) => {}
            Err(e) => return Err(format!("the Global Data could not be read: {e}")),
        }
    }
    let mut all = Map::new();
    all.insert("recipient".into(), Json::Object(person));
    all.insert("global".into(), Json::Object(global));
    if let Some(context) = context {
        all.insert("context".into(), context.clone());
    }
    Ok(Json::Object(all))
}

/// What went wrong in a template, saying which value when one is missing (minijinja says only
/// "undefined value"): the expression at the error's place in the source, and its line.
fn rendering_error(e: &minijinja::Error, source: &str) -> String {
    let line = e.line().map(|l| format!(" (line {l})")).unwrap_or_default();
    match (e.kind(), e.range().and_then(|r| expression_around(source, r))) {
        (minijinja::ErrorKind::UndefinedError, Some(expression)) => {
            format!("'{expression}' uses a value this recipient does not have{line}")
        }
        _ => e.to_string(),
    }
}

/// The `{{ ... }}` expression of `source` that holds `range` (minijinja's span of an error may be
/// a filter's name rather than the value it was given), else the text of the range.
fn expression_around(source: &str, range: std::ops::Range<usize>) -> Option<&str> {
    let inside = source.get(range.clone())?;
    let open = source[..range.start].rfind("{{").filter(|at| !source[*at..range.start].contains("}}"));
    let close = source[range.end..].find("}}").map(|n| range.end + n).filter(|at| !source[range.end..*at].contains("{{"));
    match (open, close) {
        (Some(open), Some(close)) => Some(source[open + 2..close].trim_matches(|c: char| c.is_whitespace() || c == '-')),
        _ => Some(inside.trim()),
    }
}

/// Renders `template` with `variables`: the entry to write, or why nothing is sent.
pub fn render(template: &Template, variables: &Json, flow: &str, sent_at: chrono::NaiveDateTime) -> Result<Communication, String> {
    let mut env = minijinja::Environment::new();
    env.set_undefined_behavior(minijinja::UndefinedBehavior::SemiStrict);
    env.set_fuel(Some(FUEL));
    let why =
        |e: minijinja::Error| format!("template '{}' could not be rendered: {}", template.name, rendering_error(&e, &template.source));
    env.add_template("template", &template.source).map_err(why)?;
    let compiled = env.get_template("template").map_err(why)?;
    let rendered = compiled.render_captured(variables).map_err(why)?;
    let subject = rendered.state().lookup("subject").filter(|v| !v.is_undefined() && !v.is_none()).map(|v| v.to_string());
    let mut content = rendered.into_output();
    if content.len() > MAX_CONTENT {
        return Err(format!("template '{}' rendered more than {} KiB", template.name, MAX_CONTENT / 1024));
    }
    content.shrink_to_fit();
    Ok(Communication {
        channel: "email".into(),
        subject: Some(subject.unwrap_or_else(|| template.name.clone())),
        sent_at,
        template: Some(template.name.clone()),
        flow: Some(flow.to_string()),
        content: Some(content),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_missing_value_is_named_with_its_line() {
        let template =
            Template { name: "welcome".into(), source: "Hello\n{{ recipient.FIRST_NAME | upper }} from {{ recipient.CITY }}".into() };
        let at = chrono::NaiveDateTime::default();
        let why = render(&template, &serde_json::json!({"recipient": {"CITY": "Paris"}}), "f", at).unwrap_err();
        assert!(why.contains("'recipient.FIRST_NAME | upper' uses a value this recipient does not have (line 2)"), "{why}");
        let plain = Template { name: "t".into(), source: "Hi {{ recipient.CITY }}".into() };
        let why = render(&plain, &serde_json::json!({"recipient": {}}), "f", at).unwrap_err();
        assert!(why.contains("'recipient.CITY' uses a value"), "{why}");
        let sent = render(&template, &serde_json::json!({"recipient": {"CITY": "Paris", "FIRST_NAME": "ada"}}), "f", at).unwrap();
        assert_eq!(sent.content.as_deref(), Some("Hello\nADA from Paris"));
    }
}

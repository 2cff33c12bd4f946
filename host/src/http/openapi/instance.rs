//! The document of one instance (`GET /discovery/openapi.json`): the platform's, with the
//! instance's data model written into it, so that a client generator makes typed clients:
//!
//! - `PersonData` lists the Person Data fields with their types (no others are accepted);
//! - each One-To-Many table and Global Data Table has a schema of its own
//!   (`OneToMany_<TABLE>`, `GlobalDataTable_<TABLE>`), and the operations on a table's records
//!   are written once per table with its name in the path;
//! - the names the instance defines (events, Global Data items, the tables in Discovery) are the
//!   `enum` of their path parameters.

use axum::response::Response;
use axum::routing::get;
use axum::Router;
use serde_json::{json, Map, Value as Json};

use super::json_answer;
use crate::http::extract::PublicCaller;
use crate::http::ApiContext;
use crate::model::{Model, TableDef};
use crate::values::FieldType;

pub(crate) fn router() -> Router<ApiContext> {
    Router::new().route("/discovery/openapi.json", get(described))
}

/// `GET /discovery/openapi.json`.
#[utoipa::path(get, path = "/discovery/openapi.json", tag = "Description",
    summary = "This document for the caller's instance, with its fields and types",
    responses((status = 200, description = "The instance's document (OpenAPI 3.1).")))]
pub(super) async fn described(caller: PublicCaller) -> Response {
    json_answer(&for_instance(super::document(), &caller.tenant.model))
}

/// The JSON Schema of a value of `ty` in the instance's formats (null clears a field).
fn value_schema(ty: FieldType, model: &Model, description: Option<&str>) -> Json {
    let mut schema = match ty {
        FieldType::String => json!({ "type": ["string", "null"] }),
        FieldType::Number => json!({
            "type": ["number", "null"],
            "minimum": -crate::values::value::MAX_EXACT_NUMBER, "maximum": crate::values::value::MAX_EXACT_NUMBER,
        }),
        FieldType::Boolean => json!({ "type": ["boolean", "null"] }),
        FieldType::Date => json!({
            "type": ["string", "null"], "pattern": model.formats.date.regex(),
            "description": format!("A date, `{}`.", model.formats.date.source()),
        }),
        FieldType::Timestamp => json!({
            "type": ["string", "null"], "pattern": model.formats.timestamp.regex(),
            "description": format!("A timestamp, `{}`.", model.formats.timestamp.source()),
        }),
    };
    if let Some(d) = description {
        let typed = schema["description"].as_str().map(|t| format!("{d} {t}")).unwrap_or_else(|| d.to_string());
        schema["description"] = typed.into();
    }
    schema
}

fn table_schema(table: &TableDef, model: &Model) -> Json {
    let properties: Map<String, Json> =
        table.fields.iter().map(|f| (f.name.clone(), value_schema(f.ty, model, f.description.as_deref()))).collect();
    let mut schema = json!({ "type": "object", "properties": properties, "additionalProperties": false });
    if let Some(d) = &table.description {
        schema["description"] = d.clone().into();
    }
    schema
}

/// The platform's document, `platform`, with `model` written into it.
pub(super) fn for_instance(platform: &Json, model: &Model) -> Json {
    let mut doc = platform.clone();
    let def = &model.def;
    doc["info"]["description"] = format!(
        "The REST API of a Herald server for one instance: its Person Data, One-To-Many and Global Data Table fields and \
types are written into the schemas. Recipient Id: {}.\n\n{}",
        def.recipient_id,
        platform["info"]["description"].as_str().unwrap_or_default()
    )
    .into();
    let schemas = doc["components"]["schemas"].as_object_mut().expect("the document has schemas");
    let mut person: Map<String, Json> =
        def.person_data.iter().map(|f| (f.name.clone(), value_schema(f.ty, model, f.description.as_deref()))).collect();
    // A NUMBER Recipient Id is a whole number from 1 (absent or null: the next free one).
    if let Some(id) = person.get_mut(&def.recipient_id).filter(|s| s["type"][0] == "number") {
        *id = json!({
            "type": ["integer", "null"], "minimum": 1, "maximum": crate::values::value::MAX_EXACT_NUMBER as i64,
            "description": "The Recipient Id: absent or null on a create takes the next free number.",
        });
    }
    schemas.insert(
        "PersonData".into(),
        json!({ "type": "object", "description": "The instance's Person Data fields.", "properties": person, "additionalProperties": false }),
    );
    for t in &def.one_to_many {
        schemas.insert(format!("OneToMany_{}", t.name), table_schema(t, model));
    }
    for t in &def.global_data_tables {
        schemas.insert(format!("GlobalDataTable_{}", t.name), table_schema(t, model));
    }
    let paths = doc["paths"].as_object_mut().expect("the document has paths");
    let otm: Vec<&str> = def.one_to_many.iter().map(|t| t.name.as_str()).collect();
    let gdt: Vec<&str> = def.global_data_tables.iter().map(|t| t.name.as_str()).collect();
    per_table(paths, "/recipients/{recipientId}/oneToManyTables/{tableName}", &otm, "OneToMany_");
    per_table(paths, "/globaldata/tables/{tableName}", &gdt, "GlobalDataTable_");
    let events: Vec<&str> = def.events.iter().map(|e| e.name.as_str()).collect();
    let items: Vec<&str> = def.global_data.iter().map(|g| g.name.as_str()).collect();
    for (path, item) in paths.iter_mut() {
        let names: &[&str] = if path.contains("{eventId}") {
            &events
        } else if path.starts_with("/globaldata/{name}") {
            &items
        } else if path.starts_with("/discovery/onetomany/") {
            &otm
        } else if path.starts_with("/discovery/globaldata/tables/") {
            &gdt
        } else {
            continue;
        };
        for operation in item.as_object_mut().into_iter().flat_map(|o| o.values_mut()) {
            for p in operation["parameters"].as_array_mut().into_iter().flatten() {
                if p["in"] == "path" && matches!(p["name"].as_str(), Some("eventId" | "name" | "tableName")) {
                    p["schema"]["enum"] = json!(names);
                }
            }
        }
    }
    // What a created or updated recipient gives the operations on it (those of each table too).
    let id = format!("$response.body#/personData/{}", def.recipient_id);
    for (method, path, status) in
        [("post", "/recipients", "201"), ("put", "/recipients/{recipientId}", "201"), ("put", "/recipients/{recipientId}", "200")]
    {
        link(paths, method, path, status, "recipientId", &id, "/recipients/{recipientId}");
    }
    doc
}

/// Links the answer `status` of `method path` to every operation under `prefix` that takes
/// `parameter`, its value read by `expression` (OpenAPI runtime expressions): a client, or
/// schemathesis's stateful phase, follows them from a created resource to the calls on it.
pub(super) fn link(paths: &mut Map<String, Json>, method: &str, path: &str, status: &str, parameter: &str, expression: &str, prefix: &str) {
    let mut links = Map::new();
    for (target, item) in paths.iter() {
        if !target.starts_with(prefix) || !target.contains(&format!("{{{parameter}}}")) {
            continue;
        }
        for operation in item.as_object().into_iter().flat_map(|o| o.values()) {
            if let Some(id) = operation["operationId"].as_str() {
                links.insert(id.to_string(), json!({ "operationId": id, "parameters": { parameter: expression } }));
            }
        }
    }
    if let Some(response) = paths.get_mut(path).and_then(|item| item.get_mut(method)).and_then(|o| o["responses"].get_mut(status)) {
        response["links"] = Json::Object(links);
    }
}

/// The operations under `prefix` (a path with `{tableName}`), written once per table with its
/// name in the path and its schema in place of the open `Record`.
fn per_table(paths: &mut Map<String, Json>, prefix: &str, tables: &[&str], schema_prefix: &str) {
    let generic: Vec<String> = paths.keys().filter(|p| p.starts_with(prefix)).cloned().collect();
    for path in generic {
        let item = paths.remove(&path).expect("listed above");
        for table in tables {
            let mut text = item.to_string();
            text = text.replace("#/components/schemas/Record", &format!("#/components/schemas/{schema_prefix}{table}"));
            let mut typed: Json = serde_json::from_str(&text).expect("a document part reads back");
            for operation in typed.as_object_mut().into_iter().flat_map(|o| o.values_mut()) {
                if let Some(list) = operation["parameters"].as_array_mut() {
                    list.retain(|p| !(p["in"] == "path" && p["name"] == "tableName"));
                }
                if let Some(id) = operation["operationId"].as_str() {
                    operation["operationId"] = format!("{id}_{table}").into();
                }
            }
            paths.insert(path.replace("{tableName}", table), typed);
        }
    }
}

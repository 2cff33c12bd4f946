//! The OpenAPI 3.1 description of the API, built from the code: each resource module declares
//! its operations beside its router (`#[utoipa::path]` on the handler, a `Doc` listing them),
//! the shapes are the types of `schemas.rs`, and this module finishes the document with what the
//! layers add to every operation: the security of the listener part it is in, the status codes
//! the layers answer (401, 403, 406, 413, 415, 429 with Retry-After, 503), the path parameters
//! and their meaning. `drift.rs` checks the document against the routers' source, so a route
//! cannot be added or changed without its description.
//!
//! Served at `GET /openapi.json` (no credentials: it describes the platform, no instance), and
//! for the caller's instance at `GET /discovery/openapi.json` (`instance.rs`: the recipient and
//! table schemas carry that instance's fields and types). `reference.rs` serves the interactive
//! reference page on the platform's document at `/reference/`.

mod bulk_schemas;
#[cfg(test)]
mod drift;
mod flow_schemas;
pub(super) mod instance;
mod reference;
pub(super) mod schemas;

use std::sync::OnceLock;

use axum::http::header;
use axum::response::{IntoResponse, Response};
use serde_json::{json, Value as Json};
use utoipa::OpenApi;

use super::negotiate::JSON_UTF8;

/// The shapes every operation may name, and the document's frame.
#[derive(OpenApi)]
#[openapi(
    info(
        title = "Herald",
        description = "The REST API of a Herald server: recipients and their data, global data, discovery, assets, \
extensions, flows, secrets and monitors. Paths are relative to the server's base URL. \
Authenticate with an OAuth2 access token (`POST /oauth2/token`, client credentials) or, not \
recommended, HTTP Basic with the same credentials. The open extension endpoints, the webapps and \
this document need no credentials. Client errors answer 400 or 409 with a JSON `message`; other \
errors have empty bodies. Every call counts against the instance's daily cap and its 20 calls in \
flight (429 with Retry-After). Decisions the platform specification leaves open are documented in \
Herald's documentation (docs/api.md in its repository). `GET /discovery/openapi.json` gives this document for the caller's instance, \
with its recipients' and tables' fields and types.",
        license(name = "Apache-2.0")
    ),
    components(schemas(
        schemas::Message, schemas::OAuthError, schemas::TokenRequest, schemas::Token,
        schemas::Recipient, schemas::Recipients, schemas::PersonData, schemas::Record, schemas::RecipientPage, schemas::Link, schemas::PageInfo,
        schemas::BatchReport, schemas::BatchEntry, schemas::Truncated, schemas::Event, schemas::AchievedEvent, schemas::ContextualData,
        schemas::NamedFilter, schemas::Communication, schemas::GlobalDataItem, schemas::GlobalDataValue,
        schemas::GlobalDataUpdate, schemas::FieldDefinition, schemas::PersonDataField, schemas::PersonDataDefinition,
        schemas::TableDefinition, schemas::EventDefinition, schemas::SegmentDefinition,
        schemas::Flow, schemas::FlowSchedule, schemas::FlowFiring, schemas::FlowRun, schemas::Secret, schemas::SecretValue,
        schemas::Monitor, schemas::MonitorAlert, schemas::MonitorRun, schemas::Execution, schemas::ExecutionUsage, schemas::QueueHandle, schemas::Registered,
        schemas::AssetListItem, schemas::StoredAsset, schemas::StoredWebapp, schemas::CommittedTemplate,
        schemas::AssetForm, schemas::ExtensionForm, schemas::AssetPathForm,
    )),
    tags(
        (name = "Token", description = "Access tokens (OAuth2 client credentials)."),
        (name = "Recipients", description = "Recipients (Person Data) and what hangs off one: One-To-Many records, events, target groups, communications, promotions."),
        (name = "Imports", description = "Bulk imports of recipients from CSV or NDJSON files, run as jobs: their state, counts, rejected rows, and cancelling."),
        (name = "Register", description = "Creating a recipient with an App Api credential."),
        (name = "Global Data", description = "Global Data items and Global Data Tables."),
        (name = "Discovery", description = "The instance's data model."),
        (name = "Assets", description = "The media area: resources, templates, Context Parameter Schemas, webapps and extension files, through multipart forms."),
        (name = "Extensions", description = "Calling http extensions, their asynchronous status, their logs, secrets and monitors."),
        (name = "Flows", description = "Flows and their runs."),
        (name = "Usage", description = "What the caller's instance used, per day: its extensions' processor time, executions by outcome, outbound traffic, rows written and storage (the books its operator bills from)."),
        (name = "WebDAV", description = "The media area through WebDAV (PROPFIND, MKCOL, COPY, MOVE and LOCK are served too; OpenAPI cannot name them)."),
        (name = "Webapps", description = "Uploaded webapps, served to anyone."),
        (name = "Description", description = "This document and the interactive reference page."),
        (name = "Console", description = "The web console for an instance's team (a web page that calls this API with the token of the credential a person signs in with)."),
    )
)]
struct Frame;

/// The platform's document, as JSON, built once.
pub(super) fn document() -> &'static Json {
    static DOCUMENT: OnceLock<Json> = OnceLock::new();
    DOCUMENT.get_or_init(|| {
        let mut api = Frame::openapi();
        for part in super::described() {
            api.merge(part);
        }
        let mut doc = serde_json::to_value(&api).expect("the document serialises");
        finish(&mut doc);
        doc
    })
}

/// Which part of the listener a path is in, and so what guards it.
#[derive(Clone, Copy, PartialEq, Debug)]
enum Part {
    /// Behind authentication, rate smoothing and the instance's limits.
    Guarded,
    /// The token endpoint: smoothed per client address.
    Token,
    /// The open extension endpoints: the instance from the path, its limits, smoothed per address.
    Open,
    /// Webapps, this document, the reference page and the console: served to anyone.
    Public,
}

fn part_of(path: &str) -> Part {
    if path == "/oauth2/token" {
        Part::Token
    } else if path.starts_with("/extensions/open/") || path.starts_with("/extensions/status/open/") {
        Part::Open
    } else if path.starts_with("/webapps/") || path == "/openapi.json" || path.starts_with("/reference/") || path.starts_with("/console/") {
        Part::Public
    } else {
        Part::Guarded
    }
}

fn empty(description: &str) -> Json {
    json!({ "description": description })
}

fn with_message(description: &str) -> Json {
    json!({ "description": description, "content": { "application/json": { "schema": { "$ref": "#/components/schemas/Message" } } } })
}

fn retry_after(description: &str) -> Json {
    json!({
        "description": description,
        "headers": { "Retry-After": { "description": "Seconds to wait before calling again.", "schema": { "type": "integer" } } },
    })
}

/// The security schemes, the layers' answers and the path parameters, on every operation.
fn finish(doc: &mut Json) {
    doc["openapi"] = json!("3.1.0");
    doc["components"]["securitySchemes"] = json!({
        "oauth2": {
            "type": "oauth2",
            "description": "An access token from the instance's client credentials, sent as `Authorization: Bearer <token>`.",
            "flows": { "clientCredentials": { "tokenUrl": "/oauth2/token", "scopes": {} } },
        },
        "basic": { "type": "http", "scheme": "basic", "description": "The client id and secret (RFC 7617); accepted, not recommended." },
    });
    let Some(paths) = doc["paths"].as_object_mut() else { return };
    for (path, item) in paths.iter_mut() {
        let part = part_of(path);
        let Some(item) = item.as_object_mut() else { continue };
        for (method, operation) in item.iter_mut() {
            operation["operationId"] = operation_id(method, path).into();
            finish_operation(path, part, operation);
        }
    }
    // From a saved flow or secret to the calls on it (the recipients' links need the instance's
    // Recipient Id field: `instance.rs`).
    for status in ["200", "201"] {
        instance::link(paths, "put", "/flows/{name}", status, "name", "$response.body#/name", "/flows/{name}");
        instance::link(paths, "put", "/extensions/secrets/{name}", status, "name", "$response.body#/name", "/extensions/secrets/{name}");
    }
}

fn finish_operation(path: &str, part: Part, operation: &mut Json) {
    add_path_parameters(path, operation);
    let has_parameters = operation["parameters"].as_array().is_some_and(|p| !p.is_empty());
    let mut extra: Vec<(&str, Json)> = vec![("413", empty("The body is larger than 20 MB."))];
    match part {
        Part::Guarded => {
            operation["security"] = json!([{ "oauth2": [] }, { "basic": [] }]);
            extra.push(("401", empty("No credentials, or a token or secret that is not valid.")));
            extra.push(("403", empty("The credential's scope does not allow this operation.")));
            extra.push(("406", empty("The Accept header admits no JSON.")));
            extra.push(("415", empty("A body that is not of the media type the operation takes.")));
            extra.push(("429", retry_after("Too many calls: the instance's calls in flight, its daily cap, or the rate smoothing.")));
            extra.push(("503", retry_after("The database cannot be reached.")));
            extra.push(("400", with_message("The request does not fit the operation: the message says why.")));
        }
        Part::Token => {
            operation["security"] = json!([]);
            extra.push(("401", empty("Unknown client or wrong secret.")));
            extra.push(("415", empty("The body is not a form (application/x-www-form-urlencoded).")));
            extra.push(("429", retry_after("Too many token requests from this address.")));
            extra.push(("503", retry_after("The database cannot be reached.")));
        }
        Part::Open => {
            operation["security"] = json!([]);
            extra.push(("429", retry_after("Too many calls: the instance's calls in flight, its daily cap, or this address's rate.")));
            extra.push(("503", retry_after("The database cannot be reached.")));
            extra.push(("400", with_message("The path does not fit the operation: the message says why.")));
        }
        Part::Public => {
            operation["security"] = json!([]);
        }
    }
    if has_parameters && part != Part::Public {
        extra.push(("404", empty("Nothing of that name or identifier in the instance.")));
    }
    let responses = operation["responses"].as_object_mut().expect("every operation declares its responses");
    for (status, response) in extra {
        responses.entry(status).or_insert(response);
    }
}

/// A unique, readable id: the method and the path's words, `{parameters}` as `By<Name>`
/// (`getRecipientsByRecipientIdEvents`).
fn operation_id(method: &str, path: &str) -> String {
    let mut id = method.to_string();
    for segment in path.split('/').filter(|s| !s.is_empty()) {
        let (word, by) = match segment.strip_prefix('{').and_then(|s| s.strip_suffix('}')) {
            Some(name) => (name, true),
            None => (segment, false),
        };
        if by {
            id.push_str("By");
        }
        let mut upper = true;
        for c in word.chars() {
            if c.is_ascii_alphanumeric() {
                if upper {
                    id.extend(c.to_uppercase());
                } else {
                    id.push(c);
                }
                upper = false;
            } else {
                upper = true;
            }
        }
    }
    id
}

/// Every `{name}` of the path as a required string parameter, described by what it names.
fn add_path_parameters(path: &str, operation: &mut Json) {
    let declared: Vec<String> = operation["parameters"]
        .as_array()
        .map(|p| p.iter().filter(|p| p["in"] == "path").filter_map(|p| p["name"].as_str().map(str::to_string)).collect())
        .unwrap_or_default();
    let mut added = Vec::new();
    for name in path.split('/').filter_map(|s| s.strip_prefix('{').and_then(|s| s.strip_suffix('}'))) {
        if declared.iter().any(|d| d == name) {
            continue;
        }
        added.push(json!({
            "name": name, "in": "path", "required": true,
            "description": parameter_meaning(name),
            "schema": { "type": "string" },
        }));
    }
    if added.is_empty() {
        return;
    }
    let parameters = operation.as_object_mut().expect("an operation").entry("parameters").or_insert_with(|| json!([]));
    if let Some(list) = parameters.as_array_mut() {
        list.splice(0..0, added);
    }
}

fn parameter_meaning(name: &str) -> &'static str {
    match name {
        "recipientId" => {
            "The recipient: its Recipient Id, or `<unique Person Data field>=<value>`. Special characters are \
percent-encoded twice (`%` as `%25`)."
        }
        "tableName" => "The table's name.",
        "eventId" => "The event's name, as the instance defines it.",
        "name" => "The name of the item.",
        "recordId" => "The record's identifier (its identifier field's value).",
        "extensionId" => "The extension's path in the media area without `.wasm` (folders joined by `/`, encoded as `%2F`).",
        "customerId" => "The instance's customer id (staging and production differ).",
        "queueId" => "The handle an asynchronous call answered with.",
        "runId" => "The run's id.",
        "path" => "The rest of the path (may hold `/`), passed on to the extension or the file's path.",
        _ => "A path segment.",
    }
}

#[derive(OpenApi)]
#[openapi(paths(platform, instance::described, reference::index, reference::file))]
pub(super) struct Doc;

pub(super) fn router() -> axum::Router<super::ApiContext> {
    axum::Router::new().route("/openapi.json", axum::routing::get(platform)).merge(reference::router())
}

/// `GET /openapi.json`: the platform's document.
#[utoipa::path(get, path = "/openapi.json", tag = "Description", responses((status = 200, description = "This document (OpenAPI 3.1).")))]
pub(super) async fn platform() -> Response {
    json_answer(document())
}

pub(super) fn json_answer(doc: &Json) -> Response {
    let body = serde_json::to_vec(doc).expect("a document serialises");
    ([(header::CONTENT_TYPE, JSON_UTF8), (header::CACHE_CONTROL, "no-cache")], body).into_response()
}

/// The operations of the document, as `(method, path)`, for the drift test.
#[cfg(test)]
fn operations(doc: &Json) -> Vec<(String, String)> {
    let mut out = Vec::new();
    for (path, item) in doc["paths"].as_object().into_iter().flatten() {
        for method in item.as_object().into_iter().flatten().map(|(m, _)| m) {
            out.push((method.to_uppercase(), path.clone()));
        }
    }
    out
}

//! Discovery API: the definitions of Person Data, One-To-Many tables, Global Data and Global Data
//! Tables, and (Herald's additions, for consoles and integrators) the instance's events, target
//! groups, promotions and date and timestamp patterns (`/discovery/formats`). Person Data layout (the spec leaves it open):
//!
//! `{"recipientId": "USER_ID", "fields": [{"name", "type", "unique", "identifier", "description"?}]}`
//!
//! where `identifier` is true for the Recipient Id field.

use axum::routing::get;
use axum::{Json, Router};

use super::error::{ApiError, ApiResult};
use super::extract::{AppPath, PublicCaller};
use super::global_data::list_item;
use super::openapi::schemas as s;
use super::ApiContext;
use crate::model::{FieldType, NamedFilter, TableDef};

#[derive(utoipa::OpenApi)]
#[openapi(paths(person_data, otm_names, otm_table, global_data, gdt_names, gdt_table, events, target_groups, promotions, formats))]
pub(super) struct Doc;

pub(super) fn router() -> Router<ApiContext> {
    Router::new()
        .route("/discovery/persondata", get(person_data))
        .route("/discovery/onetomany", get(otm_names))
        .route("/discovery/onetomany/{table}", get(otm_table))
        .route("/discovery/globaldata", get(global_data))
        .route("/discovery/globaldata/", get(global_data))
        .route("/discovery/globaldata/tables", get(gdt_names))
        .route("/discovery/globaldata/tables/{table}", get(gdt_table))
        .route("/discovery/events", get(events))
        .route("/discovery/targetgroups", get(target_groups))
        .route("/discovery/promotions", get(promotions))
        .route("/discovery/formats", get(formats))
}

#[utoipa::path(get, path = "/discovery/persondata", tag = "Discovery", summary = "The Person Data fields", responses((status = 200, description = "The fields and which identifies a recipient.", body = s::PersonDataDefinition)))]
async fn person_data(caller: PublicCaller) -> Json<s::PersonDataDefinition> {
    let def = &caller.tenant.model.def;
    let fields = def
        .person_data
        .iter()
        .map(|f| s::PersonDataField {
            field: field_definition(&f.name, f.ty, f.name == def.recipient_id, f.description.as_deref()),
            unique: f.unique,
        })
        .collect();
    Json(s::PersonDataDefinition { recipient_id: def.recipient_id.clone(), fields })
}

/// A field as Discovery describes it.
fn field_definition(name: &str, ty: FieldType, identifier: bool, description: Option<&str>) -> s::FieldDefinition {
    s::FieldDefinition { name: name.into(), identifier, r#type: ty.name().into(), description: description.map(str::to_string) }
}

/// A table's definition; Global Data Tables have a description, One-To-Many tables do not.
fn table_definition(t: &TableDef, with_description: bool) -> s::TableDefinition {
    s::TableDefinition {
        name: t.name.clone(),
        fields: t.fields.iter().map(|f| field_definition(&f.name, f.ty, f.identifier, f.description.as_deref())).collect(),
        description: if with_description { t.description.clone() } else { None },
    }
}

#[utoipa::path(get, path = "/discovery/onetomany", tag = "Discovery", summary = "The One-To-Many tables' names", responses((status = 200, description = "The names.", body = Vec<String>)))]
async fn otm_names(caller: PublicCaller) -> Json<Vec<String>> {
    Json(caller.tenant.model.def.one_to_many.iter().map(|t| t.name.clone()).collect())
}

#[utoipa::path(get, path = "/discovery/onetomany/{tableName}", tag = "Discovery", summary = "A One-To-Many table's definition", responses((status = 200, description = "The table.", body = s::TableDefinition)))]
async fn otm_table(caller: PublicCaller, AppPath(name): AppPath<String>) -> ApiResult<Json<s::TableDefinition>> {
    let t = caller.tenant.model.def.one_to_many_table(&name).ok_or(ApiError::NotFound)?;
    Ok(Json(table_definition(t, false)))
}

#[utoipa::path(get, path = "/discovery/globaldata/", tag = "Discovery", summary = "The Global Data items", responses((status = 200, description = "The items (also at `/discovery/globaldata`).", body = Vec<s::GlobalDataItem>)))]
async fn global_data(caller: PublicCaller) -> Json<Vec<s::GlobalDataItem>> {
    Json(caller.tenant.model.def.global_data.iter().map(list_item).collect())
}

#[utoipa::path(get, path = "/discovery/globaldata/tables", tag = "Discovery", summary = "The Global Data Tables' names", responses((status = 200, description = "The names.", body = Vec<String>)))]
async fn gdt_names(caller: PublicCaller) -> Json<Vec<String>> {
    Json(caller.tenant.model.def.global_data_tables.iter().map(|t| t.name.clone()).collect())
}

#[utoipa::path(get, path = "/discovery/globaldata/tables/{tableName}", tag = "Discovery", summary = "A Global Data Table's definition", responses((status = 200, description = "The table.", body = s::TableDefinition)))]
async fn gdt_table(caller: PublicCaller, AppPath(name): AppPath<String>) -> ApiResult<Json<s::TableDefinition>> {
    let t = caller.tenant.model.def.global_data_table(&name).ok_or(ApiError::NotFound)?;
    Ok(Json(table_definition(t, true)))
}

#[utoipa::path(get, path = "/discovery/events", tag = "Discovery", summary = "The events recipients can achieve",
    responses((status = 200, description = "The events, in the instance definition's order.", body = Vec<s::EventDefinition>)))]
async fn events(caller: PublicCaller) -> Json<Vec<s::EventDefinition>> {
    let events = &caller.tenant.model.def.events;
    Json(events.iter().map(|e| s::EventDefinition { name: e.name.clone(), description: e.description.clone() }).collect())
}

fn segments(filters: &[NamedFilter]) -> Vec<s::SegmentDefinition> {
    filters
        .iter()
        .map(|f| s::SegmentDefinition { name: f.name.clone(), description: f.description.clone(), filter: f.filter.clone() })
        .collect()
}

#[utoipa::path(get, path = "/discovery/targetgroups", tag = "Discovery", summary = "The target groups and their filters",
    responses((status = 200, description = "The target groups.", body = Vec<s::SegmentDefinition>)))]
async fn target_groups(caller: PublicCaller) -> Json<Vec<s::SegmentDefinition>> {
    Json(segments(&caller.tenant.model.def.target_groups))
}

#[utoipa::path(get, path = "/discovery/promotions", tag = "Discovery", summary = "The promotions and their eligibility filters",
    responses((status = 200, description = "The promotions.", body = Vec<s::SegmentDefinition>)))]
async fn promotions(caller: PublicCaller) -> Json<Vec<s::SegmentDefinition>> {
    Json(segments(&caller.tenant.model.def.promotions))
}

#[utoipa::path(get, path = "/discovery/formats", tag = "Discovery", summary = "The instance's date and timestamp patterns", responses((status = 200, description = "The patterns in which the API writes and reads dates and times (UTC): a client that shows times, such as the console, reads them with these.", body = s::Formats)))]
async fn formats(caller: PublicCaller) -> Json<s::Formats> {
    let formats = &caller.tenant.model.formats;
    Json(s::Formats { date: formats.date.source().to_string(), timestamp: formats.timestamp.source().to_string() })
}

//! Discovery API: the definitions of Person Data, One-To-Many tables, Global Data and Global Data
//! Tables. Person Data layout (the spec leaves it open):
//!
//! `{"recipientId": "USER_ID", "fields": [{"name", "type", "unique", "identifier", "description"?}]}`
//!
//! where `identifier` is true for the Recipient Id field.

use axum::routing::get;
use axum::{Json, Router};
use serde_json::{json, Value as Json_};

use super::error::{ApiError, ApiResult};
use super::extract::{AppPath, PublicCaller};
use super::global_data::list_item;
use super::openapi::schemas as s;
use super::wire::field_definition;
use super::ApiContext;
use crate::model::TableDef;

#[derive(utoipa::OpenApi)]
#[openapi(paths(person_data, otm_names, otm_table, global_data, gdt_names, gdt_table))]
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
}

#[utoipa::path(get, path = "/discovery/persondata", tag = "Discovery", summary = "The Person Data fields", responses((status = 200, description = "The fields and which identifies a recipient.", body = s::PersonDataDefinition)))]
async fn person_data(caller: PublicCaller) -> Json<Json_> {
    let def = &caller.tenant.model.def;
    let fields: Vec<Json_> = def
        .person_data
        .iter()
        .map(|f| {
            let mut d = field_definition(&f.name, f.ty, f.name == def.recipient_id, f.description.as_deref());
            d["unique"] = f.unique.into();
            d
        })
        .collect();
    Json(json!({ "recipientId": def.recipient_id, "fields": fields }))
}

fn table_json(t: &TableDef, with_description: bool) -> Json_ {
    let fields: Vec<Json_> = t.fields.iter().map(|f| field_definition(&f.name, f.ty, f.identifier, f.description.as_deref())).collect();
    let mut out = json!({ "name": t.name, "fields": fields });
    if with_description {
        if let Some(d) = &t.description {
            out["description"] = d.clone().into();
        }
    }
    out
}

#[utoipa::path(get, path = "/discovery/onetomany", tag = "Discovery", summary = "The One-To-Many tables' names", responses((status = 200, description = "The names.", body = Vec<String>)))]
async fn otm_names(caller: PublicCaller) -> Json<Vec<String>> {
    Json(caller.tenant.model.def.one_to_many.iter().map(|t| t.name.clone()).collect())
}

#[utoipa::path(get, path = "/discovery/onetomany/{tableName}", tag = "Discovery", summary = "A One-To-Many table's definition", responses((status = 200, description = "The table.", body = s::TableDefinition)))]
async fn otm_table(caller: PublicCaller, AppPath(name): AppPath<String>) -> ApiResult<Json<Json_>> {
    let t = caller.tenant.model.def.one_to_many_table(&name).ok_or(ApiError::NotFound)?;
    Ok(Json(table_json(t, false)))
}

#[utoipa::path(get, path = "/discovery/globaldata/", tag = "Discovery", summary = "The Global Data items", responses((status = 200, description = "The items (also at `/discovery/globaldata`).", body = Vec<s::GlobalDataItem>)))]
async fn global_data(caller: PublicCaller) -> Json<Vec<Json_>> {
    Json(caller.tenant.model.def.global_data.iter().map(list_item).collect())
}

#[utoipa::path(get, path = "/discovery/globaldata/tables", tag = "Discovery", summary = "The Global Data Tables' names", responses((status = 200, description = "The names.", body = Vec<String>)))]
async fn gdt_names(caller: PublicCaller) -> Json<Vec<String>> {
    Json(caller.tenant.model.def.global_data_tables.iter().map(|t| t.name.clone()).collect())
}

#[utoipa::path(get, path = "/discovery/globaldata/tables/{tableName}", tag = "Discovery", summary = "A Global Data Table's definition", responses((status = 200, description = "The table.", body = s::TableDefinition)))]
async fn gdt_table(caller: PublicCaller, AppPath(name): AppPath<String>) -> ApiResult<Json<Json_>> {
    let t = caller.tenant.model.def.global_data_table(&name).ok_or(ApiError::NotFound)?;
    Ok(Json(table_json(t, true)))
}

//! Global Data API: the instance's global values. CREATED and MODIFIED are milliseconds since
//! the Unix epoch (UTC), as numeric strings; PUBLISH is "true" or "false".

use axum::routing::get;
use axum::{Json, Router};
use serde_json::Value as Json_;

use super::error::{ApiError, ApiResult};
use super::extract::{AppJson, AppPath, PublicCaller};
use super::openapi::schemas as s;
use super::ApiContext;
use crate::model::GlobalDataDef;
use crate::store::tenant::GlobalValue;

#[derive(utoipa::OpenApi)]
#[openapi(paths(list, read, update))]
pub(super) struct Doc;

pub(super) fn router() -> Router<ApiContext> {
    Router::new().route("/globaldata", get(list)).route("/globaldata/", get(list)).route("/globaldata/{name}", get(read).put(update))
}

/// `{NAME, TYPE, DESCRIPTION}`: the list form, also served by Discovery.
pub(super) fn list_item(g: &GlobalDataDef) -> s::GlobalDataItem {
    s::GlobalDataItem { name: g.name.clone(), r#type: g.ty.name().into(), description: g.description.clone().unwrap_or_default() }
}

#[utoipa::path(get, path = "/globaldata/", tag = "Global Data", summary = "The Global Data items", responses((status = 200, description = "The items (list form; also at `/globaldata`).", body = Vec<s::GlobalDataItem>)))]
async fn list(caller: PublicCaller) -> Json<Vec<s::GlobalDataItem>> {
    Json(caller.tenant.model.def.global_data.iter().map(list_item).collect())
}

fn single(g: &GlobalDataDef, v: &GlobalValue) -> s::GlobalDataValue {
    s::GlobalDataValue {
        name: g.name.clone(),
        r#type: g.ty.name().into(),
        value: v.value.clone().unwrap_or_default(),
        description: g.description.clone().unwrap_or_default(),
        publish: g.publish.to_string(),
        created: v.created.to_string(),
        modified: v.modified.to_string(),
    }
}

#[utoipa::path(get, path = "/globaldata/{name}", tag = "Global Data", summary = "A Global Data item with its value", responses((status = 200, description = "The item.", body = s::GlobalDataValue)))]
async fn read(caller: PublicCaller, AppPath(name): AppPath<String>) -> ApiResult<Json<s::GlobalDataValue>> {
    let t = &caller.tenant;
    let g = t.model.def.global_data_item(&name).ok_or(ApiError::NotFound)?;
    let v = crate::domain::global_data::get(t, &g.name).await?;
    let v = v.unwrap_or(GlobalValue { value: None, created: 0, modified: 0 });
    Ok(Json(single(g, &v)))
}

#[utoipa::path(put, path = "/globaldata/{name}", tag = "Global Data", summary = "Set a Global Data value", request_body = s::GlobalDataUpdate, responses((status = 200, description = "The item with its new value.", body = s::GlobalDataValue)))]
/// PUT `{"VALUE": "..."}`: the value is validated against the item's TYPE. A JSON number or
/// boolean is taken as its text; `null` or `""` clears the value.
async fn update(
    caller: PublicCaller,
    AppPath(name): AppPath<String>,
    AppJson(body): AppJson<Json_>,
) -> ApiResult<Json<s::GlobalDataValue>> {
    let t = &caller.tenant;
    let g = t.model.def.global_data_item(&name).ok_or(ApiError::NotFound)?;
    let object = body.as_object().ok_or_else(|| ApiError::bad("the body must be a JSON object {\"VALUE\": ...}"))?;
    if let Some(other) = object.keys().find(|k| k.as_str() != "VALUE") {
        return Err(ApiError::bad(format!("unknown member '{other}' (the body holds only VALUE)")));
    }
    let text = match object.get("VALUE") {
        None => return Err(ApiError::bad("the body needs VALUE")),
        Some(Json_::Null) => String::new(),
        Some(Json_::String(s)) => s.clone(),
        Some(v @ (Json_::Number(_) | Json_::Bool(_))) => v.to_string(),
        Some(_) => return Err(ApiError::bad("VALUE must be a string")),
    };
    let v = crate::domain::global_data::set(t, &g.name, &text).await?;
    Ok(Json(single(g, &v)))
}

//! Global Data Tables: names, records (all, filtered, one by identifier), create, upsert, delete,
//! batches and truncation. Tables themselves are defined by the operator, not through the API.

use axum::extract::{RawQuery, State};
use axum::http::{HeaderMap, StatusCode};
use axum::response::{IntoResponse, Response};
use axum::routing::{get, post};
use axum::{Json, Router};
use http_body_util::BodyExt;
use serde::Deserialize;
use serde_json::Value as Json_;

use super::error::{ApiError, ApiResult};
use super::extract::{decode_twice, json_body, AppJson, AppPath, AppQuery, PublicCaller};
use super::openapi::schemas as s;
use super::{batch, filter_condition, wire, ApiContext, MAX_PAYLOAD_BYTES};
use crate::domain;
use crate::store::tenant::{TableRef, Upserted};
use crate::tenants::Tenant;

#[derive(utoipa::OpenApi)]
#[openapi(paths(names, records, create, read, upsert, remove, method, batch_update, batch_delete, export))]
pub(super) struct Doc;

pub(super) fn router() -> Router<ApiContext> {
    Router::new()
        .route("/globaldata/tables", get(names))
        .route("/globaldata/tables/", get(names))
        .route("/globaldata/tables/{table}", get(records))
        .route("/globaldata/tables/{table}/record", post(create))
        .route("/globaldata/tables/{table}/record/{record_id}", get(read).put(upsert).delete(remove))
        .route("/globaldata/tables/{table}/{method}", post(method))
}

fn table<'a>(t: &'a Tenant, name: &str) -> ApiResult<TableRef<'a>> {
    Ok(crate::domain::tables::global(t, name)?)
}

#[utoipa::path(get, path = "/globaldata/tables", tag = "Global Data", summary = "The Global Data Tables' names", responses((status = 200, description = "The names (also at `/globaldata/tables/`).", body = Vec<String>)))]
async fn names(caller: PublicCaller) -> Json<Vec<String>> {
    Json(caller.tenant.model.def.global_data_tables.iter().map(|t| t.name.clone()).collect())
}

#[derive(Deserialize)]
struct FilterQuery {
    filter: Option<String>,
}

#[utoipa::path(get, path = "/globaldata/tables/{tableName}", tag = "Global Data", summary = "A table's records",
    params(("filter" = Option<String>, Query, description = "An RSQL filter over the table's fields.")),
    responses((status = 200, description = "The records.", body = Vec<s::Record>), (status = 422, description = "The filter names a field the table does not have.", body = s::Message)))]
async fn records(caller: PublicCaller, AppPath(name): AppPath<String>, AppQuery(q): AppQuery<FilterQuery>) -> ApiResult<Json<Vec<Json_>>> {
    let t = &caller.tenant;
    let scope = table(t, &name)?;
    let condition = filter_condition(q.filter.as_deref(), scope.def, t)?;
    let records = domain::tables::records(t, &scope, condition.as_ref()).await?;
    Ok(Json(records.iter().map(|v| wire::record_json(&scope.def.fields, v, &t.model.formats)).collect()))
}

#[utoipa::path(post, path = "/globaldata/tables/{tableName}/record", tag = "Global Data", summary = "Create a record", request_body = s::Record,
    responses((status = 201, description = "Created.", body = s::Record), (status = 409, description = "A record with that identifier exists.", body = s::Message)))]
/// POST `/record`: creates a record; 409 when its identifier exists.
async fn create(caller: PublicCaller, AppPath(name): AppPath<String>, AppJson(body): AppJson<Json_>) -> ApiResult<Response> {
    let t = &caller.tenant;
    let scope = table(t, &name)?;
    let values = wire::table_assignments(scope.def, &body, &t.model.formats).map_err(ApiError::BadRequest)?;
    domain::tables::insert(t, &scope, &values).await?;
    let id_index = scope.def.identifier_index();
    let id = values.iter().find(|(i, _)| *i == id_index).map(|(_, v)| v.clone()).expect("insert checked it");
    let stored = domain::tables::record(t, &scope, &id).await?.ok_or(ApiError::NotFound)?;
    Ok((StatusCode::CREATED, Json(wire::record_json(&scope.def.fields, &stored, &t.model.formats))).into_response())
}

#[utoipa::path(get, path = "/globaldata/tables/{tableName}/record/{recordId}", tag = "Global Data", summary = "One record",
    responses((status = 200, description = "The record.", body = s::Record)))]
async fn read(caller: PublicCaller, AppPath((name, id)): AppPath<(String, String)>) -> ApiResult<Json<Json_>> {
    let t = &caller.tenant;
    let scope = table(t, &name)?;
    let id = batch::path_identifier(scope.def, &decode_twice(&id)?, &t.model.formats)?;
    let record = domain::tables::record(t, &scope, &id).await?.ok_or(ApiError::NotFound)?;
    Ok(Json(wire::record_json(&scope.def.fields, &record, &t.model.formats)))
}

#[utoipa::path(put, path = "/globaldata/tables/{tableName}/record/{recordId}", tag = "Global Data", summary = "Update or create a record", request_body = s::Record,
    responses((status = 200, description = "Updated.", body = s::Record), (status = 201, description = "Created.", body = s::Record)))]
/// PUT: upserts the record the path names (201 created, 200 updated). An identifier in the body
/// must equal the path's.
async fn upsert(
    caller: PublicCaller,
    AppPath((name, id)): AppPath<(String, String)>,
    AppJson(body): AppJson<Json_>,
) -> ApiResult<Response> {
    let t = &caller.tenant;
    let scope = table(t, &name)?;
    let id = batch::path_identifier(scope.def, &decode_twice(&id)?, &t.model.formats)?;
    let mut values = wire::table_assignments(scope.def, &body, &t.model.formats).map_err(ApiError::BadRequest)?;
    let id_index = scope.def.identifier_index();
    if values.iter().any(|(i, v)| *i == id_index && *v != id) {
        return Err(ApiError::bad(format!("{} in the body differs from the path", scope.def.identifier().name)));
    }
    values.retain(|(i, _)| *i != id_index);
    values.push((id_index, id.clone()));
    let done = domain::tables::upsert(t, &scope, &values).await?;
    let stored = domain::tables::record(t, &scope, &id).await?.ok_or(ApiError::NotFound)?;
    let status = if done == Upserted::Created { StatusCode::CREATED } else { StatusCode::OK };
    Ok((status, Json(wire::record_json(&scope.def.fields, &stored, &t.model.formats))).into_response())
}

#[utoipa::path(delete, path = "/globaldata/tables/{tableName}/record/{recordId}", tag = "Global Data", summary = "Delete a record",
    responses((status = 204, description = "Deleted.")))]
async fn remove(caller: PublicCaller, AppPath((name, id)): AppPath<(String, String)>) -> ApiResult<StatusCode> {
    let t = &caller.tenant;
    let scope = table(t, &name)?;
    let id = batch::path_identifier(scope.def, &decode_twice(&id)?, &t.model.formats)?;
    if domain::tables::delete(t, &scope, &id).await? {
        Ok(StatusCode::NO_CONTENT)
    } else {
        Err(ApiError::NotFound)
    }
}

#[utoipa::path(post, path = "/globaldata/tables/{tableName}/:truncateTable", tag = "Global Data", summary = "Delete every record of the table",
    responses((status = 200, description = "How many records were deleted.", body = s::Truncated)))]
/// `:truncateTable` (no body), `:batchUpdateRecords` and `:batchDeleteRecords` (JSON arrays),
/// `:import` (a file: `http::imports`) and `:export` (`export`).
async fn method(
    State(ctx): State<ApiContext>,
    caller: PublicCaller,
    AppPath((name, method)): AppPath<(String, String)>,
    RawQuery(query): RawQuery,
    headers: HeaderMap,
    body: axum::body::Body,
) -> ApiResult<Response> {
    let t = &caller.tenant;
    let scope = table(t, &name)?;
    if method == ":import" {
        return super::imports::receive_table(&ctx, t, &scope.def.name, query.as_deref(), &headers, body).await;
    }
    let body = match http_body_util::Limited::new(body, MAX_PAYLOAD_BYTES).collect().await {
        Ok(body) => body.to_bytes(),
        Err(_) => return Err(ApiError::PayloadTooLarge),
    };
    match method.as_str() {
        ":export" => export(t, &scope, &body).await,
        ":truncateTable" => {
            let deleted = domain::tables::clear(t, &scope).await?;
            Ok(Json(s::Truncated { deleted }).into_response())
        }
        ":batchUpdateRecords" => Ok(Json(batch::update(t, &scope, &json_body::<serde_json::Value>(&body)?).await?).into_response()),
        ":batchDeleteRecords" => Ok(Json(batch::delete(t, &scope, &json_body::<serde_json::Value>(&body)?).await?).into_response()),
        _ => Err(ApiError::NotFound),
    }
}

/// Served by `method`.
#[utoipa::path(post, path = "/globaldata/tables/{tableName}/:batchUpdateRecords", tag = "Global Data", summary = "Create or update up to 1000 records",
    request_body(content = Vec<s::Record>, description = "Records keyed by field name, each with its identifier."),
    responses((status = 200, description = "Each entry's outcome (the batch is not one transaction).", body = s::BatchReport)))]
#[allow(dead_code)]
fn batch_update() {}

/// Served by `method`.
#[utoipa::path(post, path = "/globaldata/tables/{tableName}/:batchDeleteRecords", tag = "Global Data", summary = "Delete up to 1000 records",
    request_body(content = Vec<String>, description = "The identifiers of the records."),
    responses((status = 200, description = "Each entry's outcome.", body = s::BatchReport)))]
#[allow(dead_code)]
fn batch_delete() {}

#[utoipa::path(post, path = "/globaldata/tables/{tableName}/:export", tag = "Global Data",
    summary = "Export the records a filter selects, as CSV or NDJSON",
    request_body = crate::http::recipients::ExportRequest,
    responses(
        (status = 200, description = "The records, ordered by identifier: `text/csv; charset=utf-8` (a header row, then a row each) or \
            `application/x-ndjson` (a record a line, as a record's body). One snapshot: records written meanwhile are in it whole or not \
            at all. Counts as one call against the daily cap."),
        (status = 400, description = "An unknown field or format, or a body that is not the export's.", body = s::Message),
        (status = 404, description = "The instance has no such table (an empty body, as every 404 of the API)."),
        (status = 422, description = "The filter names a field the table does not have.", body = s::Message),
    ))]
/// `:export`: the body as `POST /recipients/:export`'s, over the table's fields.
async fn export(t: &Tenant, scope: &TableRef<'_>, body: &[u8]) -> ApiResult<Response> {
    use crate::domain::export::{self, ExportFormat};
    let request = crate::http::recipients::ExportRequest::read(body)?;
    if request.one_to_many.is_some() {
        return Err(ApiError::bad("'oneToMany' is for exports of recipients: a Global Data Table's records have none"));
    }
    let fields = export::table_fields(scope.def, request.fields.as_deref()).map_err(ApiError::BadRequest)?;
    let format = ExportFormat::parse(request.format.as_deref().unwrap_or("csv")).map_err(ApiError::BadRequest)?;
    let condition = filter_condition(request.filter.as_deref(), scope.def, t)?;
    let records = domain::tables::records(t, scope, condition.as_ref()).await?;
    let mut out = Vec::new();
    export::table_header(format, scope.def, &fields, &mut out);
    for record in &records {
        export::table_row(format, scope.def, &t.model.formats, &fields, record, &mut out);
    }
    let disposition = format!("attachment; filename=\"{}.{}\"", scope.def.name, format.extension());
    Ok((
        [(axum::http::header::CONTENT_TYPE, format.content_type().to_string()), (axum::http::header::CONTENT_DISPOSITION, disposition)],
        out,
    )
        .into_response())
}

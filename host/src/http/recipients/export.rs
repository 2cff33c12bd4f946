//! `POST /recipients/:export`: the recipients a filter selects, streamed in one answer as CSV or
//! NDJSON (`stream.rs`), for moving an instance's people out in one call instead of pages.
//!
//! Body `{"filter": "<rsql>", "fields": ["EMAIL", ...], "format": "csv" | "ndjson", "oneToMany":
//! ["PURCHASES"]}`, every member optional: no filter exports everyone, no fields every Person Data
//! field (in the model's order), the format is CSV unless asked (the formats: `domain::export`),
//! One-To-Many records only when asked (NDJSON only). The export reads one snapshot: rows written while it runs are in it whole or not
//! at all. It counts as one call against the daily cap.

use axum::extract::{RawQuery, State};
use axum::http::{header, HeaderMap, StatusCode};
use axum::response::{IntoResponse, Response};
use http_body_util::BodyExt;
use serde::Deserialize;

use super::stream::{self, Encoding};
use crate::domain::export::{self, ExportFormat};
use crate::http::error::{ApiError, ApiResult};
use crate::http::extract::{AppPath, PublicCaller};
use crate::http::openapi::schemas as s;
use crate::http::{filter_condition, ApiContext, MAX_PAYLOAD_BYTES};

#[derive(Deserialize, Default, utoipa::ToSchema)]
#[serde(deny_unknown_fields)]
pub(crate) struct ExportRequest {
    /// An RSQL filter over the fields (Person Data, or a table's); everything when absent.
    pub filter: Option<String>,
    /// The fields to write, in this order; every field when absent.
    pub fields: Option<Vec<String>>,
    /// `csv` (the default) or `ndjson`.
    pub format: Option<String>,
    /// Recipients only, NDJSON only: the One-To-Many tables whose records each line carries
    /// under the table's name (`{"personData": {...}, "PURCHASES": [{...}]}`), as an import reads
    /// them back.
    #[serde(rename = "oneToMany")]
    pub one_to_many: Option<Vec<String>>,
}

impl ExportRequest {
    /// The request a body holds; an empty body exports everything, every field, as CSV.
    pub(crate) fn read(body: &[u8]) -> ApiResult<ExportRequest> {
        match body.iter().all(u8::is_ascii_whitespace) {
            true => Ok(ExportRequest::default()),
            false => serde_json::from_slice(body).map_err(|e| ApiError::bad(format!("the body is not an export request: {e}"))),
        }
    }
}

#[utoipa::path(post, path = "/recipients/:export", tag = "Recipients",
    summary = "Export the recipients a filter selects, as CSV or NDJSON, in one streamed answer",
    request_body = ExportRequest,
    responses(
        (status = 200, description = "The recipients: `text/csv; charset=utf-8` (a header row, then a row each) or `application/x-ndjson` (a `{\"personData\": {...}}` a line)."),
        (status = 400, description = "An unknown field or format, or a body that is not the export's.", body = s::Message),
        (status = 422, description = "The filter names a field the instance does not have.", body = s::Message),
    ))]
/// POST `/recipients/{method}`: `:export`, and `:import` (`http::imports`).
pub(super) async fn method(
    State(ctx): State<ApiContext>,
    caller: PublicCaller,
    AppPath(method): AppPath<String>,
    RawQuery(query): RawQuery,
    headers: HeaderMap,
    body: axum::body::Body,
) -> ApiResult<Response> {
    match method.as_str() {
        ":export" => {}
        ":import" => return crate::http::imports::receive(&ctx, &caller.tenant, query.as_deref(), &headers, body).await,
        _ => return Err(ApiError::Explained(StatusCode::METHOD_NOT_ALLOWED, "a recipient is read with GET, written with PUT".into())),
    }
    let body = match http_body_util::Limited::new(body, MAX_PAYLOAD_BYTES).collect().await {
        Ok(body) => body.to_bytes(),
        Err(_) => return Err(ApiError::PayloadTooLarge),
    };
    let ExportRequest { filter, fields, format, one_to_many } = ExportRequest::read(&body)?;
    let tenant = caller.tenant.clone();
    let fields = export::fields(&tenant.model, fields.as_deref()).map_err(ApiError::BadRequest)?;
    let format = ExportFormat::parse(format.as_deref().unwrap_or("csv")).map_err(ApiError::BadRequest)?;
    let tables = export::one_to_many_tables(&tenant.model, one_to_many.as_deref().unwrap_or_default()).map_err(ApiError::BadRequest)?;
    if !tables.is_empty() && format != ExportFormat::Ndjson {
        return Err(ApiError::bad("One-To-Many records are exported in NDJSON only: add \"format\": \"ndjson\""));
    }
    let file = format!("recipients.{}", format.extension());
    let condition = filter_condition(filter.as_deref(), &tenant.model.def, &tenant)?;
    let mut response = if tables.is_empty() {
        stream::rows(tenant, condition, Encoding::Export(format, fields)).await?
    } else {
        stream::rows_with_records(tenant, condition, fields, tables).await?
    };
    let disposition = format!("attachment; filename=\"{file}\"").parse().expect("a valid header");
    response.headers_mut().insert(header::CONTENT_DISPOSITION, disposition);
    Ok(response.into_response())
}

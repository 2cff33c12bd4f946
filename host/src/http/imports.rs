//! Bulk imports (`crate::imports`): `POST /recipients/:import` takes the file (served through the
//! recipients' `POST /recipients/{method}`, `receive` here), and the import is watched and ended
//! through `GET /imports`, `GET /imports/{importId}`, `GET /imports/{importId}/errors` and
//! `POST /imports/{importId}/:cancel`. An import is the instance's own: another instance's id is
//! 404.
//!
//! The body is the one exception to the 20 MB payload limit: it may be as large as the
//! operator's `--import-max-mb` (1 GiB by default), and it is stored as it arrives, never held
//! whole. An import counts as one call against the daily cap, however many rows it has.

use axum::http::{header, HeaderMap, HeaderValue, StatusCode};
use axum::response::{IntoResponse, Response};
use axum::routing::{get, post};
use axum::{Json, Router};
use serde::Deserialize;

use super::error::{ApiError, ApiResult};
use super::extract::{AppPath, AppQuery, PublicCaller};
use super::flows::time;
use super::openapi::schemas as s;
use super::ApiContext;
use crate::imports::receive::{receive as store_body, Refused};
use crate::imports::{Format, ImportPlan, UNFINISHED_AT_MOST};
use crate::queue::Enqueued;
use crate::store::jobs::JobPayload;
use crate::store::tenant::{ImportRecord, ImportState};
use crate::tenants::Tenant;

#[derive(utoipa::OpenApi)]
#[openapi(paths(receive, receive_table, list, one, errors, cancel))]
pub(super) struct Doc;

pub(super) fn router() -> Router<ApiContext> {
    Router::new()
        .route("/imports", get(list))
        .route("/imports/{import_id}", get(one))
        .route("/imports/{import_id}/errors", get(errors))
        .route("/imports/{import_id}/{method}", post(cancel))
}

/// Whether `path` takes an import's body, which is neither JSON nor bound by the 20 MB limit
/// (`negotiate` lets it through; `receive` keeps its own limit).
pub fn takes_import_body(path: &str) -> bool {
    path.ends_with("/recipients/:import") || (path.ends_with("/:import") && path.contains("/globaldata/tables/"))
}

/// Whether `path` is an export, whose answer is a file (CSV or NDJSON), so that an `Accept` of
/// those is admitted as well as JSON.
pub fn answers_file(path: &str) -> bool {
    path.ends_with("/recipients/:export") || (path.ends_with("/:export") && path.contains("/globaldata/tables/"))
}

#[derive(Deserialize, Default, utoipa::IntoParams)]
#[serde(deny_unknown_fields)]
#[into_params(parameter_in = Query)]
pub(super) struct ImportQuery {
    /// The unique Person Data field that names each row's recipient (rows are upserts by it);
    /// the Recipient Id when absent.
    key: Option<String>,
    /// `none` (the default: moving people in starts no flow) or `created` (each recipient the
    /// import creates starts the flows a creation triggers, as `POST /recipients` does).
    triggers: Option<String>,
}

/// The format a Content-Type names; CSV must be UTF-8 (the default when no charset is given).
fn format_of(headers: &HeaderMap) -> ApiResult<Format> {
    let unsupported = || {
        ApiError::Explained(
            StatusCode::UNSUPPORTED_MEDIA_TYPE,
            "an import's body is 'text/csv; charset=utf-8' or 'application/x-ndjson'".into(),
        )
    };
    let text = headers.get(header::CONTENT_TYPE).and_then(|v| v.to_str().ok()).ok_or_else(unsupported)?;
    let mut parts = text.split(';').map(str::trim);
    let format = match parts.next().unwrap_or("").to_ascii_lowercase().as_str() {
        "text/csv" => Format::Csv,
        "application/x-ndjson" | "application/ndjson" | "application/jsonl" => Format::Ndjson,
        _ => return Err(unsupported()),
    };
    for part in parts {
        if let Some((name, value)) = part.split_once('=') {
            let value = value.trim().trim_matches('"');
            if name.trim().eq_ignore_ascii_case("charset") && !value.eq_ignore_ascii_case("utf-8") {
                return Err(ApiError::Explained(
                    StatusCode::UNSUPPORTED_MEDIA_TYPE,
                    format!("an import's body is UTF-8, not {value}: save the file as UTF-8"),
                ));
            }
        }
    }
    Ok(format)
}

#[utoipa::path(post, path = "/recipients/:import", tag = "Imports",
    summary = "Import recipients from a CSV or NDJSON file of up to 1 GiB, as a job",
    params(ImportQuery),
    request_body(content = String, content_type = "text/csv", description = "The file itself: `text/csv; charset=utf-8` (a header row of Person Data \
        field names, RFC 4180 quoting, a UTF-8 BOM allowed; an empty cell clears its field, an empty Recipient Id is left \
        out: an update keeps it, a new recipient gets the next number) or `application/x-ndjson` (one \
        `{\"personData\": {...}}` a line). Rows are upserts by `key`, in file order: a later row with the same key wins. \
        The size limit is the operator's `--import-max-mb` (1 GiB by default), the one exception to the 20 MB payload limit."),
    responses(
        (status = 202, description = "The whole body is stored; the import is queued. `Location` names it.", body = s::ImportStarted),
        (status = 400, description = "Empty, not UTF-8 text, a header naming unknown fields (all listed), or a bad parameter.", body = s::Message),
        (status = 413, description = "The body is over the import limit; nothing was stored.", body = s::Message),
        (status = 415, description = "Neither CSV nor NDJSON.", body = s::Message),
        (status = 429, description = "Two imports run and ten wait already; `Retry-After` says when to look again.", body = s::Message),
    ))]
/// POST `/recipients/:import`.
pub(super) async fn receive(
    ctx: &ApiContext,
    tenant: &Tenant,
    query: Option<&str>,
    headers: &HeaderMap,
    body: axum::body::Body,
) -> ApiResult<Response> {
    let format = format_of(headers)?;
    let query: ImportQuery =
        super::serde_terms::query(query.unwrap_or_default()).map_err(|m| ApiError::bad(format!("invalid query string: {m}")))?;
    let plan = ImportPlan::new(&tenant.model, format, query.key.as_deref(), query.triggers.as_deref()).map_err(ApiError::BadRequest)?;
    take(ctx, tenant, &plan, headers, body).await
}

#[derive(Deserialize, Default, utoipa::IntoParams)]
#[serde(deny_unknown_fields)]
#[into_params(parameter_in = Query)]
pub(super) struct TableImportQuery {}

#[utoipa::path(post, path = "/globaldata/tables/{tableName}/:import", tag = "Imports",
    summary = "Import a Global Data Table's records from a CSV or NDJSON file of up to 1 GiB, as a job",
    request_body(content = String, content_type = "text/csv", description = "The file itself: `text/csv; charset=utf-8` (a header row of the \
        table's field names, the identifier among them; RFC 4180 quoting, a UTF-8 BOM allowed; an empty cell clears its field) or \
        `application/x-ndjson` (one record a line, as a record's body: `{\"ID\": ..., ...}`). Rows are upserts by the table's \
        identifier, in file order: a later row with the same identifier wins. The size limit is the import limit, as for recipients."),
    responses(
        (status = 202, description = "The whole body is stored; the import is queued. `Location` names it.", body = s::ImportStarted),
        (status = 400, description = "Empty, not UTF-8 text, a header naming unknown fields (all listed) or no identifier, or a query parameter.", body = s::Message),
        (status = 404, description = "The instance has no such table (an empty body, as every 404 of the API)."),
        (status = 413, description = "The body is over the import limit; nothing was stored.", body = s::Message),
        (status = 415, description = "Neither CSV nor NDJSON.", body = s::Message),
        (status = 429, description = "Two imports run and ten wait already; `Retry-After` says when to look again.", body = s::Message),
    ))]
/// POST `/globaldata/tables/{table}/:import` (served through the tables' `method`).
pub(super) async fn receive_table(
    ctx: &ApiContext,
    tenant: &Tenant,
    table: &str,
    query: Option<&str>,
    headers: &HeaderMap,
    body: axum::body::Body,
) -> ApiResult<Response> {
    let format = format_of(headers)?;
    let TableImportQuery {} = super::serde_terms::query(query.unwrap_or_default()).map_err(|m| {
        ApiError::bad(format!("invalid query string: {m} (a table's import takes no parameter: rows are keyed by its identifier)"))
    })?;
    let plan = ImportPlan::for_table(&tenant.model, format, table).map_err(ApiError::BadRequest)?;
    take(ctx, tenant, &plan, headers, body).await
}

/// Stores the body of an import planned as `plan` and queues it.
async fn take(ctx: &ApiContext, tenant: &Tenant, plan: &ImportPlan, headers: &HeaderMap, body: axum::body::Body) -> ApiResult<Response> {
    let declared = headers.get(header::CONTENT_LENGTH).and_then(|v| v.to_str().ok()).and_then(|v| v.trim().parse::<u64>().ok());
    if declared.is_some_and(|n| n > ctx.import_max_bytes) {
        return Err(too_large(ctx.import_max_bytes));
    }
    // An upload cut off with the process that took it stays `receiving`: forgotten after a day.
    tenant.db.discard_stale_imports(crate::store::now_millis() - STALE_UPLOAD_MS).await?;
    if tenant.db.unfinished_imports().await? >= UNFINISHED_AT_MOST {
        let mut r = ApiError::Explained(
            StatusCode::TOO_MANY_REQUESTS,
            "two imports of this instance are running and ten are waiting: send this one once one of them is over".into(),
        )
        .into_response();
        r.headers_mut().insert(header::RETRY_AFTER, HeaderValue::from(60));
        return Ok(r);
    }
    let new = plan.new_import(&tenant.model, crate::queue::Queue::new_id());
    store_body(tenant, &new, plan, body.into_data_stream(), ctx.import_max_bytes).await.map_err(|refused| match refused {
        Refused::Empty => ApiError::bad("the body is empty: send the file itself as the body"),
        Refused::TooLarge(limit) => too_large(limit),
        Refused::Invalid(message) => ApiError::BadRequest(message),
        Refused::Broken(message) => ApiError::bad(format!("the body could not be read to its end: {message}")),
        Refused::Store(e) => e.into(),
    })?;
    let payload = JobPayload::work(crate::imports::JOB_KIND, crate::imports::job_payload(&new.id));
    if !matches!(ctx.queue.enqueue(tenant.customer_id(), "import", payload).await, Enqueued::Stored(_)) {
        let message = "the import could not be queued";
        tenant.db.finish_import(&new.id, ImportState::Failed, Some(message), crate::store::now_millis()).await?;
        return Err(ApiError::Unavailable(message.into()));
    }
    let location = format!("/imports/{}", new.id);
    Ok((StatusCode::ACCEPTED, [(header::LOCATION, location)], Json(s::ImportStarted { import_id: new.id })).into_response())
}

/// How long an upload may stay unfinished before it is taken for cut off.
const STALE_UPLOAD_MS: i64 = 24 * 3600 * 1000;

fn too_large(limit: u64) -> ApiError {
    ApiError::Explained(
        StatusCode::PAYLOAD_TOO_LARGE,
        match limit % (1024 * 1024) {
            0 => format!("an import's body may be at most {} MiB (the operator's --import-max-mb)", limit / (1024 * 1024)),
            _ => format!("an import's body may be at most {limit} bytes (the operator's limit)"),
        },
    )
}

fn described(t: &Tenant, i: &ImportRecord) -> s::Import {
    s::Import {
        import_id: i.id.clone(),
        target: i.target.clone(),
        state: i.state.name().to_string(),
        format: i.format.clone(),
        key: i.key_field.clone(),
        triggers: i.triggers.clone(),
        size: i.size,
        bytes_read: if i.state == ImportState::Completed { i.size } else { i.next_offset.min(i.size) },
        rows_read: i.counts.rows_read,
        created: i.counts.created,
        updated: i.counts.updated,
        rejected: i.counts.rejected,
        created_at: time(t, i.created_at),
        started_at: i.started_at.map(|at| time(t, at)),
        finished_at: i.finished_at.map(|at| time(t, at)),
        message: i.message.clone(),
    }
}

#[derive(Deserialize, utoipa::IntoParams)]
#[serde(deny_unknown_fields)]
#[into_params(parameter_in = Query)]
pub(super) struct ListQuery {
    /// The most imports to list (1 to 1000, default 100).
    limit: Option<i64>,
    /// List those created before this import (the last of the previous page).
    before: Option<String>,
}

#[utoipa::path(get, path = "/imports", tag = "Imports", summary = "The instance's imports, newest first", params(ListQuery),
    responses((status = 200, description = "The imports.", body = Vec<s::Import>)))]
async fn list(caller: PublicCaller, AppQuery(q): AppQuery<ListQuery>) -> ApiResult<Json<Vec<s::Import>>> {
    let t = &caller.tenant;
    let limit = q.limit.unwrap_or(100);
    if !(1..=1000).contains(&limit) {
        return Err(ApiError::bad("'limit' is from 1 to 1000"));
    }
    let before = match &q.before {
        Some(id) => Some(t.db.import(id).await?.ok_or_else(|| ApiError::bad(format!("'before' names no import: {id}")))?),
        None => None,
    };
    let imports = t.db.imports(before.as_ref().map(|b| (b.created_at, b.id.as_str())), limit).await?;
    Ok(Json(imports.iter().map(|i| described(t, i)).collect()))
}

#[utoipa::path(get, path = "/imports/{importId}", tag = "Imports", summary = "An import's state and counts",
    responses((status = 200, description = "The import.", body = s::Import)))]
async fn one(caller: PublicCaller, AppPath(id): AppPath<String>) -> ApiResult<Json<s::Import>> {
    let t = &caller.tenant;
    let import = t.db.import(&id).await?.ok_or(ApiError::NotFound)?;
    Ok(Json(described(t, &import)))
}

#[derive(Deserialize, utoipa::IntoParams)]
#[serde(deny_unknown_fields)]
#[into_params(parameter_in = Query)]
pub(super) struct ErrorsQuery {
    /// Rows after this row number (the last of the previous page); from the first when absent.
    after: Option<i64>,
    /// The most rows to list (1 to 10000, default 1000).
    limit: Option<i64>,
}

#[utoipa::path(get, path = "/imports/{importId}/errors", tag = "Imports",
    summary = "The rows an import rejected, in row order",
    description = "Each with its row number (CSV: the header is row 1; NDJSON: the line), the field at fault when one is, and \
        why. The first 100,000 rejected rows of an import are kept; `rejected` counts them all.",
    params(ErrorsQuery),
    responses((status = 200, description = "The rejected rows.", body = Vec<s::RejectedRow>)))]
async fn errors(
    caller: PublicCaller,
    AppPath(id): AppPath<String>,
    AppQuery(q): AppQuery<ErrorsQuery>,
) -> ApiResult<Json<Vec<s::RejectedRow>>> {
    let t = &caller.tenant;
    t.db.import(&id).await?.ok_or(ApiError::NotFound)?;
    let limit = q.limit.unwrap_or(1000);
    if !(1..=10_000).contains(&limit) {
        return Err(ApiError::bad("'limit' is from 1 to 10000"));
    }
    let rows = t.db.import_errors(&id, q.after.unwrap_or(0), limit).await?;
    Ok(Json(rows.into_iter().map(|r| s::RejectedRow { row: r.row, field: r.field, message: r.message }).collect()))
}

#[utoipa::path(post, path = "/imports/{importId}/:cancel", tag = "Imports", summary = "Cancel an import",
    description = "A queued import writes nothing; a running one stops after the batch it is writing (the rows written so \
        far stay).",
    responses(
        (status = 200, description = "Cancelled.", body = s::Import),
        (status = 409, description = "The import is already over.", body = s::Message),
    ))]
async fn cancel(caller: PublicCaller, AppPath((id, method)): AppPath<(String, String)>) -> ApiResult<Json<s::Import>> {
    if method != ":cancel" {
        return Err(ApiError::NotFound);
    }
    let t = &caller.tenant;
    let import = t.db.import(&id).await?.ok_or(ApiError::NotFound)?;
    if !t.db.finish_import(&id, ImportState::Cancelled, None, crate::store::now_millis()).await? {
        let state = t.db.import(&id).await?.map_or(import.state, |i| i.state);
        return Err(ApiError::Conflict(format!("the import is already {}", state.name())));
    }
    let import = t.db.import(&id).await?.ok_or(ApiError::NotFound)?;
    Ok(Json(described(t, &import)))
}

//! Calling http extensions: the secure endpoint (authenticated, `/extensions/secure/{extensionId}/{path}`)
//! and the open endpoint (no credentials, `/extensions/open/{customerId}/{extensionId}/{path}`,
//! smoothed per client address and inside the instance's limits).
//!
//! An extension's id is its path under the extensions area without `.wasm`; a folder's `/` is
//! written `%252F` (the spec's double encoding). The guest receives the method, `/{path}` with the
//! query, the headers (less `Authorization`: the caller's credential is not the extension's
//! business) and the body, and its response goes back as it made it. Answers of Herald itself:
//! 404 unknown extension (or not an http extension); 403 an open extension on the secure endpoint
//! or the other way round; then by the call's outcome (`runtime::outcome`): 502 `trap` or
//! `memory`, 504 `deadline` or `cpu`, 500 `fault` (Herald's). These have empty bodies; the reason is in
//! the execution's log. An `error` (an answer 5xx) is the extension's own answer, passed on. An asynchronous
//! extension's call is answered 202 `{"queueId"}` instead (see `extension_status`).

use std::sync::Arc;

use axum::body::Body;
use axum::extract::Request;
use axum::http::{header, StatusCode, Uri};
use axum::response::{IntoResponse, Response};
use axum::routing::get;
use axum::Router;
use http_body_util::BodyExt;

use super::error::ApiError;
use super::extract::{decode_twice, AppPath, PublicCaller};
use super::openapi::schemas as s;
use super::ApiContext;
use crate::assets::RelPath;
use crate::queue::Enqueued;
use crate::runtime::{Call, Outcome, Prepared};
use crate::store::jobs::{CapturedRequest, Door, JobPayload};
use crate::tenants::Tenant;

#[derive(utoipa::OpenApi)]
#[openapi(paths(secure, secure_with_path, open, open_with_path, logs))]
pub(super) struct Doc;

pub(super) fn logs_router() -> Router<ApiContext> {
    Router::new().route("/extensions/logs/{extension_id}", get(logs))
}

#[utoipa::path(method(get, put, post, delete), path = "/extensions/secure/{extensionId}", tag = "Extensions",
    summary = "Call an http extension (not open) with the instance's credential",
    request_body(content = Vec<u8>, content_type = "*/*", description = "Passed on to the extension with the query and headers (not the credential)."),
    responses((status = 200, description = "The extension's own answer (any status, headers and body it makes)."),
        (status = 202, description = "An asynchronous extension: the call is stored; ask its status with the handle.", body = s::QueueHandle),
        (status = 403, description = "The extension is not of this endpoint (open or secure)."),
        (status = 502, description = "The extension failed (a trap or a broken answer)."),
        (status = 504, description = "The extension ran past its deadline, or used up its CPU budget (`cpu_ms`).")))]
#[allow(dead_code)]
fn secure() {}

/// A call on the secure endpoint (`extension_calls.rs` admitted it): `id` and `path` are the
/// route's extension id and the rest of the path, each decoded once.
pub(super) async fn call_secure(ctx: &ApiContext, tenant: &Arc<Tenant>, id: &str, path: &str, request: Request) -> Response {
    let (id, extension) = match load(ctx, tenant, id).await {
        Ok(e) => e,
        Err(refusal) => return refusal.into_response(),
    };
    if extension.config.open {
        return ApiError::Forbidden.into_response();
    }
    call(ctx, tenant, id, extension, Door::Secure, path, request).await
}

#[utoipa::path(method(get, put, post, delete), path = "/extensions/open/{customerId}/{extensionId}", tag = "Extensions",
    summary = "Call an open http extension of an instance (no credentials)",
    request_body(content = Vec<u8>, content_type = "*/*", description = "Passed on to the extension with the query and headers."),
    responses((status = 200, description = "The extension's own answer (any status, headers and body it makes)."),
        (status = 202, description = "An asynchronous extension: the call is stored; ask its status with the handle.", body = s::QueueHandle),
        (status = 403, description = "The extension is not of this endpoint (open or secure)."),
        (status = 502, description = "The extension failed (a trap or a broken answer)."),
        (status = 504, description = "The extension ran past its deadline, or used up its CPU budget (`cpu_ms`).")))]
#[allow(dead_code)]
fn open() {}

/// A call on the open endpoint (`extension_calls.rs` admitted it, its instance the route's):
/// `id` and `path` as for `call_secure`.
pub(super) async fn call_open(ctx: &ApiContext, tenant: &Arc<Tenant>, id: &str, path: &str, request: Request) -> Response {
    let (id, extension) = match load(ctx, tenant, id).await {
        Ok(e) => e,
        Err(refusal) => return refusal.into_response(),
    };
    if !extension.config.open {
        return ApiError::Forbidden.into_response();
    }
    call(ctx, tenant, id, extension, Door::Open, path, request).await
}

/// The http extension `raw_id` (the route's segment, decoded once) names, decoded twice, and its
/// prepared component; or 404. A segment an earlier call wrote the same way is found in one
/// lookup (`runtime::call_targets`).
async fn load(ctx: &ApiContext, tenant: &Tenant, raw_id: &str) -> Result<(String, Prepared), ApiError> {
    match ctx.runtime.http_call_target(tenant, raw_id) {
        Some(found) => Ok(found),
        None => crate::cold::boxed(load_named(ctx, tenant, raw_id)).await,
    }
}

async fn load_named(ctx: &ApiContext, tenant: &Tenant, raw_id: &str) -> Result<(String, Prepared), ApiError> {
    let id = decode_twice(raw_id)?;
    match ctx.runtime.http_extension_named(tenant, raw_id, &id).await? {
        Some(extension) => Ok((id, extension)),
        None => Err(not_found(tenant, &id).await),
    }
}

/// 404 for extension `id`; when `id` is a folder of the instance's extensions (the caller wrote
/// the folder's `/` plainly, so the rest of the id went into the path), the message says how to
/// address the extension.
async fn not_found(tenant: &Tenant, id: &str) -> ApiError {
    let Ok(Some(first)) = tenant.db.extensions(&format!("{id}/")).await.map(|found| found.into_iter().next()) else {
        return ApiError::NotFound;
    };
    let path = first.path.trim_end_matches(".wasm");
    ApiError::Explained(
        StatusCode::NOT_FOUND,
        format!(
            "no extension '{id}'; '{id}' is a folder, holding '{path}': write the folder's '/' as %252F in the extension id, as in '{}'",
            id_in_url(path)
        ),
    )
}

/// An extension's id (`shop/hook`) as a URL's path segment names it: its folder's `/` encoded
/// twice (`shop%252Fhook`), the specification's rule, which `decode_twice` undoes.
pub(super) fn id_in_url(id: &str) -> String {
    id.replace('/', "%252F")
}

async fn call(
    ctx: &ApiContext,
    tenant: &Arc<Tenant>,
    id: String,
    extension: Prepared,
    door: Door,
    path: &str,
    request: Request,
) -> Response {
    let (mut parts, body) = request.into_parts();
    // One payload limit on every listener. A declared length over it was refused before the call
    // (`front.rs`), and hyper holds a body to the length it declares, so such a
    // body streams to the guest as it arrives. A body of undeclared length (chunked) is read
    // first, up to the limit: past it the call is answered 413 and the guest never runs.
    // A body already at its end (most GETs: no length, no chunks) has nothing to read.
    let body = if parts.headers.contains_key(header::CONTENT_LENGTH) || hyper::body::Body::is_end_stream(&body) {
        body
    } else {
        match http_body_util::Limited::new(body, super::MAX_PAYLOAD_BYTES).collect().await {
            Ok(read) => Body::from(read.to_bytes()),
            Err(e) if e.is::<http_body_util::LengthLimitError>() => return ApiError::PayloadTooLarge.into_response(),
            Err(_) => return ApiError::bad("the request body could not be read to its end").into_response(),
        }
    };
    let host = parts.headers.get(header::HOST).and_then(|h| h.to_str().ok()).unwrap_or("localhost");
    let query = parts.uri.query();
    // `http://{host}/{path}?{query}`, written into one buffer of its size.
    let mut uri = String::with_capacity("http:///?".len() + host.len() + path.len() + query.map_or(0, str::len));
    for part in ["http://", host, "/", path] {
        uri.push_str(part);
    }
    if let Some(query) = query {
        uri.push('?');
        uri.push_str(query);
    }
    parts.uri = match Uri::try_from(uri) {
        Ok(uri) => uri,
        Err(_) => return ApiError::bad("the path cannot be passed to the extension").into_response(),
    };
    parts.headers.remove(header::AUTHORIZATION);
    if extension.config.asynchronous {
        return crate::cold::boxed(enqueue(ctx, tenant, &id, door, parts, body)).await;
    }
    let request = hyper::Request::from_parts(parts, body);
    let deadline = ctx.runtime.deadline(&extension.config);
    let call = Call { extension, id, tenant: Arc::clone(tenant), deadline, context: None, lineage: Default::default(), journal: None };
    match ctx.runtime.call_http(call, request).await {
        Ok(response) => {
            let (parts, body) = response.into_parts();
            let body = body.map_err(|e| std::io::Error::other(format!("{e:?}")));
            guest_answer(Response::from_parts(parts, Body::new(body)))
        }
        // The call path has logged it (an error for Herald's fault only).
        Err(failure) => failure.outcome().caller_status().unwrap_or(StatusCode::BAD_GATEWAY).into_response(),
    }
}

/// Marks a response as the guest made it: the layers that label Herald's own answers leave it
/// untouched (`negotiate::label_json`).
pub(super) fn guest_answer(mut response: Response) -> Response {
    response.extensions_mut().insert(super::negotiate::GuestAnswer);
    response
}

/// Seconds a caller is asked to wait when its instance's queue backlog is full.
const BACKLOG_RETRY_AFTER: u64 = 5;

/// An asynchronous extension: the call is stored (durably) and answered 202 `{"queueId"}`, or
/// 429 when the instance's backlog of waiting calls is full (`queue::backlog`).
async fn enqueue(ctx: &ApiContext, tenant: &Tenant, id: &str, door: Door, parts: axum::http::request::Parts, body: Body) -> Response {
    let body = match http_body_util::Limited::new(body, super::MAX_PAYLOAD_BYTES).collect().await {
        Ok(body) => body.to_bytes().to_vec(),
        Err(_) => return ApiError::PayloadTooLarge.into_response(),
    };
    let request = CapturedRequest {
        method: parts.method.to_string(),
        uri: parts.uri.to_string(),
        headers: parts.headers.iter().map(|(n, v)| (n.as_str().to_string(), String::from_utf8_lossy(v.as_bytes()).into_owned())).collect(),
        body,
        door,
    };
    match ctx.queue.enqueue(tenant.customer_id(), id, JobPayload::Http(request)).await {
        Enqueued::Stored(queue_id) => (StatusCode::ACCEPTED, axum::Json(s::QueueHandle { queue_id })).into_response(),
        Enqueued::BacklogFull => ApiError::TooManyRequests { retry_after: BACKLOG_RETRY_AFTER }.into_response(),
        Enqueued::Failed => StatusCode::SERVICE_UNAVAILABLE.into_response(),
    }
}

#[derive(serde::Deserialize)]
struct LogQuery {
    limit: Option<u32>,
}

#[utoipa::path(get, path = "/extensions/logs/{extensionId}", tag = "Extensions", summary = "An extension's newest executions",
    params(("limit" = Option<u32>, Query, description = "At most this many, newest first (default 20, at most 100).")),
    responses((status = 200, description = "The executions.", body = Vec<s::Execution>)))]
/// GET `/extensions/logs/{extensionId}?limit=20`: the newest executions of an extension (at most
/// 100 are kept), for the instance's operator: `[{"at", "durationMs", "outcome", "log", "stdout",
/// "stderr", "input"?, "usage"?}]`, newest first. `outcome` is a word of `runtime::outcome` (`ok`,
/// `error`, `deadline`, `cpu`, `memory`, `trap`, `fault`) with its `reason`; an execution that did not
/// end `ok` has its `input`, which `herald extension run --input` and `replay` take.
async fn logs(
    caller: PublicCaller,
    AppPath(id): AppPath<String>,
    super::extract::AppQuery(q): super::extract::AppQuery<LogQuery>,
) -> Result<axum::Json<Vec<s::Execution>>, ApiError> {
    let id = decode_twice(&id)?;
    let rel = RelPath::parse("extension", &format!("{id}.wasm")).map_err(|_| ApiError::NotFound)?;
    caller.tenant.db.extension(&rel.as_text()).await?.ok_or(ApiError::NotFound)?;
    let entries = caller.tenant.db.execution_logs(&id, q.limit.unwrap_or(20).min(100)).await?;
    Ok(axum::Json(
        entries
            .into_iter()
            .map(|e| {
                let (outcome, reason) = Outcome::read_stored(&e.outcome);
                s::Execution {
                    at: e.at,
                    duration_ms: e.duration_ms,
                    outcome: outcome.name(),
                    reason: reason.map(str::to_string),
                    log: e.log,
                    stdout: e.stdout,
                    stderr: e.stderr,
                    input: e.input.as_deref().and_then(|i| serde_json::from_str(i).ok()),
                    usage: e.usage.map(Into::into),
                }
            })
            .collect(),
    ))
}

/// Served by `secure`: the rest of the path goes to the extension.
#[utoipa::path(method(get, put, post, delete), path = "/extensions/secure/{extensionId}/{path}", tag = "Extensions",
    summary = "Call an http extension (not open) on a path of its own",
    request_body(content = Vec<u8>, content_type = "*/*", description = "Passed on to the extension with the query and headers (not the credential)."),
    responses((status = 200, description = "The extension's own answer (any status, headers and body it makes)."),
        (status = 202, description = "An asynchronous extension: the call is stored; ask its status with the handle.", body = s::QueueHandle),
        (status = 403, description = "The extension is not of this endpoint (open or secure)."),
        (status = 502, description = "The extension failed (a trap or a broken answer)."),
        (status = 504, description = "The extension ran past its deadline, or used up its CPU budget (`cpu_ms`).")))]
#[allow(dead_code)]
fn secure_with_path() {}

/// Served by `open`: the rest of the path goes to the extension.
#[utoipa::path(method(get, put, post, delete), path = "/extensions/open/{customerId}/{extensionId}/{path}", tag = "Extensions",
    summary = "Call an open http extension on a path of its own",
    request_body(content = Vec<u8>, content_type = "*/*", description = "Passed on to the extension with the query and headers."),
    responses((status = 200, description = "The extension's own answer (any status, headers and body it makes)."),
        (status = 202, description = "An asynchronous extension: the call is stored; ask its status with the handle.", body = s::QueueHandle),
        (status = 403, description = "The extension is not of this endpoint (open or secure)."),
        (status = 502, description = "The extension failed (a trap or a broken answer)."),
        (status = 504, description = "The extension ran past its deadline, or used up its CPU budget (`cpu_ms`).")))]
#[allow(dead_code)]
fn open_with_path() {}

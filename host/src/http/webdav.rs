//! The media area over WebDAV at `/dav/` (same credentials as the API, Basic or Bearer; the
//! instance is the credential's): `resources/`, `templates/`, `contexts/` and `webapps/` can be
//! mounted, read and written. Two rules of the API hold here too: Context Parameter Schemas are
//! read-only over WebDAV (use the API, which checks that a schema only grows), and a resource that
//! a template references cannot be deleted or moved away (409).
//!
//! Every request is checked here before the WebDAV library sees it, so a client's mistake is a
//! 4xx with a message (`check.rs`), never the library's panic or 5xx. PUT is Herald's own: the
//! body goes to a temporary file within the payload limit and the media quota, and is renamed
//! into place, so a refused or broken upload leaves nothing behind.

mod check;

use axum::body::Body;
use axum::extract::{Request, State};
use axum::http::{Method, StatusCode};
use axum::response::{IntoResponse, Response};
use axum::routing::any;
use axum::Router;
use dav_server::fakels::FakeLs;
use dav_server::localfs::LocalFs;
use dav_server::DavHandler;

use super::assets::upload::write_limited;
use super::assets::{media, refuse_if_referenced};
use super::error::{ApiError, ApiResult};
use super::extract::PublicCaller;
use super::openapi::schemas as s;
use super::{ApiContext, MAX_PAYLOAD_BYTES};
use crate::assets::quota::{full_message, size_of, Budget};
use crate::assets::RelPath;
use crate::tenants::InstanceMedia;
use check::{top, Checked};

#[derive(utoipa::OpenApi)]
#[openapi(paths(dav))]
pub(super) struct Doc;

pub(super) fn router() -> Router<ApiContext> {
    Router::new().route("/dav", any(dav)).route("/dav/", any(dav)).route("/dav/{*path}", any(dav))
}

#[utoipa::path(method(get, put, delete), path = "/dav/{path}", tag = "WebDAV",
    summary = "A file of the media area (PROPFIND, MKCOL, COPY, MOVE, LOCK and UNLOCK are served as well)",
    request_body(content = Vec<u8>, content_type = "*/*", description = "PUT: the file's content."),
    responses((status = 200, description = "GET: the file."), (status = 201, description = "PUT: created."), (status = 204, description = "PUT: replaced; DELETE: deleted."),
        (status = 409, description = "A referenced resource cannot be deleted, or the folder does not exist.", body = s::Message)))]
async fn dav(State(ctx): State<ApiContext>, caller: PublicCaller, request: Request) -> Response {
    let media = media(&ctx, &caller.tenant);
    match serve(&media, request).await {
        Ok(response) => response,
        Err(e) => e.into_response(),
    }
}

async fn serve(media: &InstanceMedia, request: Request) -> ApiResult<Response> {
    let Checked { path, destination } = check::request(&request)?;
    let method = request.method().clone();
    // Reads see this node's copy brought in line with the store; writes hold the instance's
    // writes on this node and publish the paths they touched, whatever the library answered.
    let writing = match check::is_write(&method) {
        true => Some(media.writing().await?),
        false => {
            media.sync().await?;
            None
        }
    };
    let touched: Vec<String> = match method.as_str() {
        "PUT" | "DELETE" | "MKCOL" => vec![in_store(&path)],
        "MOVE" => [Some(&path), destination.as_ref()].into_iter().flatten().map(in_store).collect(),
        "COPY" => destination.iter().map(in_store).collect(),
        _ => Vec::new(),
    };
    let response = handle(media, &method, path, destination, request).await;
    if let Some(writing) = writing {
        writing.publish(&touched).await?;
    }
    response
}

/// The store's path of a path under `/dav/` (`resources/a.png` is `media/resources/a.png`).
fn in_store(path: &RelPath) -> String {
    format!("media/{}", path.as_text())
}

async fn handle(
    media: &InstanceMedia,
    method: &Method,
    path: RelPath,
    destination: Option<RelPath>,
    request: Request,
) -> ApiResult<Response> {
    let removes_source = *method == Method::DELETE || method.as_str() == "MOVE";
    if removes_source && top(&path) == "resources" {
        let inside = RelPath::parse("path", path.as_text().trim_start_matches("resources")).unwrap_or_else(|_| RelPath::root());
        refuse_if_referenced(crate::assets::MediaArea::clone(media), &inside).await?;
    }
    let root = media.media_root();
    for kind in ["resources", "templates", "contexts", "webapps"] {
        tokio::fs::create_dir_all(root.join(kind)).await.map_err(|e| ApiError::Internal(e.into()))?;
    }
    if *method == Method::PUT {
        return put(media, &path, request.into_body()).await;
    }
    if method.as_str() == "COPY" && destination.is_some() {
        let size = size_of(&root.join(path.to_fs())).await.map_err(|e| ApiError::Internal(e.into()))?;
        if size > media.room().await? {
            return Err(ApiError::quota_exceeded(full_message(media)));
        }
    }
    let handler = DavHandler::builder()
        .filesystem(LocalFs::new(root, false, false, false))
        .locksystem(FakeLs::new())
        .strip_prefix("/dav")
        .build_handler();
    let response = handler.handle(request).await.map(Body::new);
    if response.status().is_server_error() {
        // The checks above leave the library only its own faults (the disk): logged, and a 500
        // with the platform's empty body.
        tracing::error!(status = %response.status(), %method, "the WebDAV library failed");
        return Err(ApiError::Internal(anyhow::anyhow!("WebDAV {method} answered {}", response.status())));
    }
    Ok(response)
}

/// PUT: 201 created or 204 replaced (RFC 4918 9.7); the parent folder must exist (409), the
/// target must not be a folder (405).
async fn put(media: &InstanceMedia, path: &RelPath, body: Body) -> ApiResult<Response> {
    let target = media.media_root().join(path.to_fs());
    let parent_is_folder = match target.parent() {
        Some(parent) => tokio::fs::metadata(parent).await.is_ok_and(|m| m.is_dir()),
        None => false,
    };
    if !parent_is_folder {
        return Err(ApiError::Conflict("the folder of this file does not exist: create it first (MKCOL)".into()));
    }
    if tokio::fs::metadata(&target).await.is_ok_and(|m| m.is_dir()) {
        return Err(ApiError::Explained(StatusCode::METHOD_NOT_ALLOWED, "a folder is there: PUT writes files".into()));
    }
    let budget = Budget::within(media.room().await?, MAX_PAYLOAD_BYTES as u64);
    let temp = media.temp_path().await.map_err(|e| ApiError::Internal(e.into()))?;
    let read_error = |e: axum::Error| ApiError::bad(format!("the body could not be read: {e}"));
    write_limited(media, &temp, body.into_data_stream(), budget, read_error).await?;
    let replaced = temp.replace(&target).await.map_err(|e| ApiError::Internal(e.into()))?;
    Ok(if replaced { StatusCode::NO_CONTENT } else { StatusCode::CREATED }.into_response())
}

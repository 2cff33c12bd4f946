//! The media area over WebDAV at `/dav/` (same credentials as the API, Basic or Bearer; the
//! instance is the credential's): `resources/`, `templates/`, `contexts/` and `webapps/` can be
//! mounted, read and written. Two rules of the API hold here too: Context Parameter Schemas are
//! read-only over WebDAV (use the API, which checks that a schema only grows), and a resource that
//! a template references cannot be deleted or moved away (409).

use axum::extract::{Request, State};
use axum::http::{HeaderMap, Method};
use axum::response::{IntoResponse, Response};
use axum::routing::any;
use axum::Router;
use dav_server::fakels::FakeLs;
use dav_server::localfs::LocalFs;
use dav_server::DavHandler;
use percent_encoding::percent_decode_str;

use super::assets::resource_referrers;
use super::error::ApiError;
use super::extract::PublicCaller;
use super::ApiContext;
use crate::assets::{MediaArea, RelPath};

pub(super) fn router() -> Router<ApiContext> {
    Router::new().route("/dav", any(dav)).route("/dav/", any(dav)).route("/dav/{*path}", any(dav))
}

/// The media path a DAV URL or `Destination` header names, if it is a valid one.
fn media_path(uri_path: &str) -> Option<RelPath> {
    let rest = uri_path.strip_prefix("/dav").unwrap_or(uri_path);
    let decoded = percent_decode_str(rest).decode_utf8().ok()?;
    RelPath::parse("path", &decoded).ok()
}

fn destination(headers: &HeaderMap) -> Option<RelPath> {
    let value = headers.get("destination")?.to_str().ok()?;
    let path = match value.find("://") {
        Some(i) => &value[value[i + 3..].find('/').map(|j| i + 3 + j)?..],
        None => value,
    };
    media_path(path)
}

fn is_write(method: &Method) -> bool {
    !matches!(method.as_str(), "GET" | "HEAD" | "OPTIONS" | "PROPFIND")
}

fn top(path: &RelPath) -> String {
    path.as_text().split('/').next().unwrap_or("").to_string()
}

async fn dav(State(ctx): State<ApiContext>, caller: PublicCaller, request: Request) -> Response {
    let media = MediaArea::new(&ctx.data_dir, caller.tenant.customer_id());
    let method = request.method().clone();
    let Some(path) = media_path(request.uri().path()) else { return ApiError::NotFound.into_response() };
    if is_write(&method) {
        let dest = destination(request.headers());
        if top(&path) == "contexts" || dest.as_ref().is_some_and(|d| top(d) == "contexts") {
            return ApiError::Forbidden.into_response();
        }
        let removes_source = method == Method::DELETE || method.as_str() == "MOVE";
        if removes_source && top(&path) == "resources" {
            let inside: RelPath = RelPath::parse("path", path.as_text().trim_start_matches("resources")).unwrap_or_else(|_| RelPath::root());
            match resource_referrers(media.clone(), &inside).await {
                Ok(r) if r.is_empty() => {}
                Ok(r) => {
                    return ApiError::Conflict(format!("resources/{} is referenced by templates/{}", inside.as_text(), r.join(", templates/")))
                        .into_response()
                }
                Err(e) => return e.into_response(),
            }
        }
    }
    let root = media.media_root();
    for kind in ["resources", "templates", "contexts", "webapps"] {
        if let Err(e) = tokio::fs::create_dir_all(root.join(kind)).await {
            return ApiError::Internal(e.into()).into_response();
        }
    }
    let handler = DavHandler::builder()
        .filesystem(LocalFs::new(root, false, false, false))
        .locksystem(FakeLs::new())
        .strip_prefix("/dav")
        .build_handler();
    handler.handle(request).await.map(axum::body::Body::new).into_response()
}

//! Uploaded webapps, served as static sites to anyone at `/webapps/{customerId}/{name}/{path}`
//! (a folder serves its `index.html`). Only files inside the webapp are reachable, and each is
//! served sandboxed in an opaque origin (`browser_policy`): a webapp's script cannot reach the
//! console's session or any answer of this server.

use axum::extract::{Request, State};
use axum::response::{IntoResponse, Response};
use axum::routing::get;
use axum::Router;
use tower::ServiceExt;
use tower_http::services::ServeFile;

use super::error::ApiError;
use super::ApiContext;
use crate::assets::{Kind, RelPath};

#[derive(utoipa::OpenApi)]
#[openapi(paths(serve))]
pub(super) struct Doc;

pub(super) fn router() -> Router<ApiContext> {
    Router::new().route("/webapps/{customer_id}/{*path}", get(serve))
}

#[utoipa::path(get, path = "/webapps/{customerId}/{path}", tag = "Webapps", summary = "A file of an uploaded webapp (`<webapp>/<file>`; a folder serves its index.html)",
    responses((status = 200, description = "The file."), (status = 404, description = "No such file.")))]
async fn serve(
    State(ctx): State<ApiContext>,
    crate::http::extract::AppPath((customer_id, path)): crate::http::extract::AppPath<(String, String)>,
    request: Request,
) -> Response {
    let Ok(rel) = RelPath::parse("path", &path) else { return ApiError::NotFound.into_response() };
    if rel.is_root() {
        return ApiError::NotFound.into_response();
    }
    let tenant = match ctx.tenants.activate(&customer_id).await {
        Ok(tenant) => tenant,
        Err(inactive) => return ApiError::inactive(inactive, ApiError::NotFound).into_response(),
    };
    // Uploaded through any node: this node's copy is brought in line first.
    let media = tenant.media(&ctx.data_dir, ctx.media_quota);
    if let Err(e) = media.sync().await {
        return ApiError::from(e).into_response();
    }
    let mut file = media.path(Kind::Webapps, &rel);
    if tokio::fs::metadata(&file).await.is_ok_and(|m| m.is_dir()) {
        file = file.join("index.html");
    }
    if !tokio::fs::metadata(&file).await.is_ok_and(|m| m.is_file()) {
        return ApiError::NotFound.into_response();
    }
    let mut response = match ServeFile::new(file).oneshot(request).await {
        Ok(r) => r.into_response(),
        Err(never) => match never {},
    };
    // Served sandboxed, in an origin of its own (`browser_policy`); other sites may frame it.
    response.extensions_mut().insert(super::browser_policy::Frameable);
    response
}

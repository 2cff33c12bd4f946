//! The interactive API reference at `/reference/`: Swagger UI (vendored from npm by
//! `scripts/reference-ui.sh` into `host/reference/`, embedded in the binary) on the platform's
//! document. Served to anyone with no asset from another host, so that an operator's browser on
//! a closed network renders it; its own policy allows nothing else.

use axum::http::header;
use axum::response::{IntoResponse, Redirect, Response};
use axum::routing::get;
use axum::Router;

use crate::http::error::ApiError;
use crate::http::extract::AppPath;
use crate::http::ApiContext;

const FILES: &[(&str, &str, &[u8])] = &[
    ("index.html", "text/html; charset=utf-8", include_bytes!("../../../reference/index.html")),
    ("init.js", "text/javascript; charset=utf-8", include_bytes!("../../../reference/init.js")),
    ("swagger-ui-bundle.js", "text/javascript; charset=utf-8", include_bytes!("../../../reference/swagger-ui-bundle.js")),
    ("swagger-ui.css", "text/css; charset=utf-8", include_bytes!("../../../reference/swagger-ui.css")),
    ("LICENSE", "text/plain; charset=utf-8", include_bytes!("../../../reference/LICENSE")),
];

/// Scripts and styles from this server only (Swagger UI sets inline styles), images also as data
/// URIs, calls to this server only.
const POLICY: &str = "default-src 'self'; img-src 'self' data:; style-src 'self' 'unsafe-inline'; frame-ancestors 'none'";

pub(super) fn router() -> Router<ApiContext> {
    Router::new()
        .route("/reference", get(|| async { Redirect::permanent("/reference/") }))
        .route("/reference/", get(index))
        .route("/reference/{file}", get(file))
}

#[utoipa::path(get, path = "/reference/", tag = "Description", summary = "The interactive reference of this API (a web page)",
    responses((status = 200, description = "The page.", content_type = "text/html")))]
pub(super) async fn index() -> Response {
    serve("index.html")
}

#[utoipa::path(get, path = "/reference/{file}", tag = "Description", summary = "A file of the reference page",
    responses((status = 200, description = "The file."), (status = 404, description = "No such file.")))]
pub(super) async fn file(AppPath(name): AppPath<String>) -> Response {
    serve(&name)
}

fn serve(name: &str) -> Response {
    match FILES.iter().find(|(file, _, _)| *file == name) {
        Some((_, media_type, bytes)) => (
            [
                (header::CONTENT_TYPE, *media_type),
                (header::CACHE_CONTROL, "public, max-age=3600"),
                (header::CONTENT_SECURITY_POLICY, POLICY),
            ],
            *bytes,
        )
            .into_response(),
        None => ApiError::NotFound.into_response(),
    }
}

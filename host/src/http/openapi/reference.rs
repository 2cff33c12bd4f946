//! The interactive API reference at `/reference/`: Swagger UI (vendored from npm by
//! `scripts/reference-ui.sh` into `host/reference/`, embedded in the binary) on the platform's
//! document. Served to anyone with no asset from another host, so that an operator's browser on
//! a closed network renders it; its own policy allows nothing else.

use axum::response::{Redirect, Response};
use axum::routing::get;
use axum::Router;

use crate::http::embedded::{self, EmbeddedFile, CSS, HTML, SCRIPT, TEXT};
use crate::http::extract::AppPath;
use crate::http::ApiContext;

const FILES: &[EmbeddedFile] = &[
    EmbeddedFile { name: "index.html", media_type: HTML, bytes: include_bytes!("../../../reference/index.html") },
    EmbeddedFile { name: "init.js", media_type: SCRIPT, bytes: include_bytes!("../../../reference/init.js") },
    EmbeddedFile { name: "swagger-ui-bundle.js", media_type: SCRIPT, bytes: include_bytes!("../../../reference/swagger-ui-bundle.js") },
    EmbeddedFile { name: "swagger-ui.css", media_type: CSS, bytes: include_bytes!("../../../reference/swagger-ui.css") },
    EmbeddedFile { name: "LICENSE", media_type: TEXT, bytes: include_bytes!("../../../reference/LICENSE") },
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
    embedded::serve(FILES, name, POLICY, "public, max-age=3600")
}

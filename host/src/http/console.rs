//! The web console at `/console/`: a single-page application (Preact, uPlot; sources in
//! `console/`, built by `scripts/console.sh` into `host/console/`, embedded in the binary). The
//! page itself is public; everything it shows comes from the REST API with the token of the
//! credential a person signs in with, so it sees exactly what that credential may see.

use axum::response::{Redirect, Response};
use axum::routing::get;
use axum::Router;

use crate::http::embedded::{self, EmbeddedFile, CSS, HTML, SCRIPT, SVG, TEXT};
use crate::http::extract::AppPath;
use crate::http::ApiContext;

const FILES: &[EmbeddedFile] = &[
    EmbeddedFile { name: "index.html", media_type: HTML, bytes: include_bytes!("../../console/index.html") },
    EmbeddedFile { name: "console.js", media_type: SCRIPT, bytes: include_bytes!("../../console/console.js") },
    EmbeddedFile { name: "console.css", media_type: CSS, bytes: include_bytes!("../../console/console.css") },
    EmbeddedFile { name: "LICENSES.txt", media_type: TEXT, bytes: include_bytes!("../../console/LICENSES.txt") },
    EmbeddedFile { name: "favicon.svg", media_type: SVG, bytes: include_bytes!("../../console/favicon.svg") },
];

/// Everything from this server only: no inline script or style, calls to the API here, and no
/// framing (the sign-in form must not be overlaid by another site).
const POLICY: &str = "default-src 'self'; img-src 'self' data:; connect-src 'self'; object-src 'none'; base-uri 'none'; \
                      form-action 'self'; frame-ancestors 'none'";

/// The files' names do not change between builds, so a browser asks again each time (they are
/// small) and a new binary's console is never hidden behind an old copy.
const CACHE: &str = "no-cache";

pub(super) fn router() -> Router<ApiContext> {
    Router::new()
        .route("/console", get(|| async { Redirect::permanent("/console/") }))
        .route("/console/", get(index))
        .route("/console/{file}", get(file))
        .route("/favicon.ico", get(icon))
}

#[utoipa::path(get, path = "/console/", tag = "Console", summary = "The web console (a web page; it signs in with an instance's Public Api credential)",
    responses((status = 200, description = "The page.", content_type = "text/html")))]
pub(super) async fn index() -> Response {
    embedded::serve(FILES, "index.html", POLICY, CACHE)
}

#[utoipa::path(get, path = "/console/{file}", tag = "Console", summary = "A file of the web console",
    responses((status = 200, description = "The file."), (status = 404, description = "No such file.")))]
pub(super) async fn file(AppPath(name): AppPath<String>) -> Response {
    embedded::serve(FILES, &name, POLICY, CACHE)
}

/// Browsers ask every origin for `/favicon.ico` (the reference page, an instance's webapp): it is
/// Herald's icon, public, rather than the 401 an unknown path answers a caller without credentials.
#[utoipa::path(get, path = "/favicon.ico", tag = "Console", summary = "Herald's icon (SVG), which browsers ask every site for",
    responses((status = 200, description = "The icon.", content_type = "image/svg+xml")))]
pub(super) async fn icon() -> Response {
    embedded::serve(FILES, "favicon.svg", POLICY, "max-age=86400")
}

#[derive(utoipa::OpenApi)]
#[openapi(paths(index, file, icon))]
pub(super) struct Doc;

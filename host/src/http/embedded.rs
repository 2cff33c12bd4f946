//! Files built into the binary and served as they are (the reference page, the console), so that
//! a browser on a closed network loads every part of them from this server.

use axum::http::header;
use axum::response::{IntoResponse, Response};

use crate::http::error::ApiError;

pub(super) const HTML: &str = "text/html; charset=utf-8";
pub(super) const SCRIPT: &str = "text/javascript; charset=utf-8";
pub(super) const CSS: &str = "text/css; charset=utf-8";
pub(super) const TEXT: &str = "text/plain; charset=utf-8";
pub(super) const SVG: &str = "image/svg+xml";

/// A file of an embedded page: its name under the page's path, media type and content.
pub(super) struct EmbeddedFile {
    pub name: &'static str,
    pub media_type: &'static str,
    pub bytes: &'static [u8],
}

/// `name` of `files` with the page's content security policy and cache rule, or 404.
pub(super) fn serve(files: &[EmbeddedFile], name: &str, policy: &str, cache: &'static str) -> Response {
    match files.iter().find(|file| file.name == name) {
        Some(file) => {
            let mut response = (
                [
                    (header::CONTENT_TYPE, file.media_type),
                    (header::CACHE_CONTROL, cache),
                    (header::CONTENT_SECURITY_POLICY, policy),
                    (header::X_CONTENT_TYPE_OPTIONS, "nosniff"),
                ],
                file.bytes,
            )
                .into_response();
            response.extensions_mut().insert(super::browser_policy::HeraldPage);
            response
        }
        None => ApiError::NotFound.into_response(),
    }
}

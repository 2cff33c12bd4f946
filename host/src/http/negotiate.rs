//! Content negotiation for the JSON API: request bodies must be `application/json` in UTF-8
//! (otherwise 415), an `Accept` header must admit JSON (otherwise 406; an export's may admit CSV or
//! NDJSON instead), and JSON responses are
//! labelled `application/json; charset=utf-8` (by `label_json`, which the router applies to all).

use axum::extract::Request;
use axum::http::{header, HeaderMap, HeaderValue};
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};

use super::error::ApiError;

pub const JSON_UTF8: &str = "application/json; charset=utf-8";

pub async fn json_only(request: Request, next: Next) -> Response {
    let headers = request.headers();
    // An import's body is its file (CSV or NDJSON); its handler checks which.
    if has_body(headers) && !is_json(headers.get(header::CONTENT_TYPE)) && !super::imports::takes_import_body(request.uri().path()) {
        return ApiError::UnsupportedMediaType.into_response();
    }
    let accepted = accepts_json(headers.get_all(header::ACCEPT).iter())
        || (super::imports::answers_file(request.uri().path()) && accepts(headers.get_all(header::ACCEPT).iter(), EXPORT_TYPES));
    if !accepted {
        return ApiError::NotAcceptable.into_response();
    }
    // The router labels JSON answers for every route (`label_json`), these included.
    next.run(request).await
}

/// For routes whose bodies are not JSON (multipart uploads) but whose answers are: only the
/// `Accept` header is checked.
pub async fn answers_json(request: Request, next: Next) -> Response {
    if !accepts_json(request.headers().get_all(header::ACCEPT).iter()) {
        return ApiError::NotAcceptable.into_response();
    }
    next.run(request).await
}

/// Marks a response an extension made: its headers pass through as the guest set them.
#[derive(Clone, Copy, Debug)]
pub struct GuestAnswer;

/// Made at compile time, as `browser_policy`'s values: `from_static` at run time checks every
/// byte, at every JSON answer.
static JSON_UTF8_VALUE: HeaderValue = HeaderValue::from_static(JSON_UTF8);

/// Sets the charset on Herald's JSON responses (axum's `Json` says only `application/json`);
/// an extension's answer is left as it is.
pub fn label_json(response: &mut Response) {
    if response.extensions().get::<GuestAnswer>().is_some() {
        return;
    }
    let is_plain_json = response.headers().get(header::CONTENT_TYPE).is_some_and(|v| v == "application/json");
    if is_plain_json {
        response.headers_mut().insert(header::CONTENT_TYPE, JSON_UTF8_VALUE.clone());
    }
}

fn has_body(headers: &HeaderMap) -> bool {
    let length = headers.get(header::CONTENT_LENGTH).and_then(|v| v.to_str().ok()).and_then(|v| v.trim().parse::<u64>().ok());
    match length {
        Some(n) => n > 0,
        None => headers.contains_key(header::TRANSFER_ENCODING),
    }
}

/// `application/json`, optionally with `charset=utf-8` (any case).
pub fn is_json(value: Option<&HeaderValue>) -> bool {
    let Some(text) = value.and_then(|v| v.to_str().ok()) else { return false };
    let mut parts = text.split(';');
    let essence = parts.next().unwrap_or("").trim();
    if !essence.eq_ignore_ascii_case("application/json") {
        return false;
    }
    parts.all(|p| match p.split_once('=') {
        Some((k, v)) if k.trim().eq_ignore_ascii_case("charset") => v.trim().trim_matches('"').eq_ignore_ascii_case("utf-8"),
        _ => true,
    })
}

/// What an export may answer besides JSON (its errors), for `Accept` to admit.
const EXPORT_TYPES: &[&str] = &["*/*", "text/*", "text/csv", "application/*", "application/x-ndjson"];

/// True when there is no `Accept`, or one of its ranges with a non-zero q admits JSON.
pub fn accepts_json<'a>(values: impl Iterator<Item = &'a HeaderValue>) -> bool {
    accepts(values, &["*/*", "application/*", "application/json"])
}

/// True when there is no `Accept`, or one of its ranges with a non-zero q is one of `ranges`.
fn accepts<'a>(values: impl Iterator<Item = &'a HeaderValue>, ranges: &[&str]) -> bool {
    let mut any = false;
    for value in values {
        let Ok(text) = value.to_str() else { continue };
        for range in text.split(',') {
            let mut parts = range.split(';');
            let media = parts.next().unwrap_or("").trim().to_ascii_lowercase();
            if media.is_empty() {
                continue;
            }
            any = true;
            let refused =
                parts.any(|p| p.split_once('=').is_some_and(|(k, v)| k.trim() == "q" && v.trim().parse::<f32>().is_ok_and(|q| q == 0.0)));
            if !refused && ranges.contains(&media.as_str()) {
                return true;
            }
        }
    }
    !any
}

#[cfg(test)]
mod tests {
    use super::*;

    fn hv(s: &'static str) -> HeaderValue {
        HeaderValue::from_static(s)
    }

    #[test]
    fn json_content_types() {
        assert!(is_json(Some(&hv("application/json"))));
        assert!(is_json(Some(&hv("Application/JSON; charset=UTF-8"))));
        assert!(!is_json(Some(&hv("application/json; charset=latin1"))));
        assert!(!is_json(Some(&hv("text/plain"))));
        assert!(!is_json(None));
    }

    #[test]
    fn accept_ranges() {
        assert!(accepts_json([].iter()));
        assert!(accepts_json([hv("*/*")].iter()));
        assert!(accepts_json([hv("text/html, application/json;q=0.5")].iter()));
        assert!(!accepts_json([hv("text/html")].iter()));
        assert!(!accepts_json([hv("application/json;q=0")].iter()));
        assert!(accepts_json([hv("application/*")].iter()));
    }
}

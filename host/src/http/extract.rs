//! Extractors whose rejections are the platform's own errors: JSON bodies, paths, queries, and
//! the authenticated caller with its instance.

use std::sync::Arc;

use axum::extract::{FromRequest, FromRequestParts};
use axum::http::header;
use axum::http::request::Parts;
use percent_encoding::percent_decode_str;
use serde::de::DeserializeOwned;

use super::error::ApiError;
use super::serde_terms;
use super::ApiContext;
use crate::auth::{Principal, Scope};
use crate::tenants::Tenant;

/// A JSON body; malformed bodies are 400 with a message in the customer's terms
/// (`serde_terms`), other media types 415, too large 413.
pub struct AppJson<T>(pub T);

impl<T: DeserializeOwned, S: Send + Sync> FromRequest<S> for AppJson<T> {
    type Rejection = ApiError;

    async fn from_request(request: axum::extract::Request, state: &S) -> Result<AppJson<T>, ApiError> {
        if !super::negotiate::is_json(request.headers().get(header::CONTENT_TYPE)) {
            return Err(ApiError::UnsupportedMediaType);
        }
        let AppBytes(body) = AppBytes::from_request(request, state).await?;
        serde_terms::json(&body).map(AppJson).map_err(ApiError::BadRequest)
    }
}

/// The parameters of a path. Every identifier a path names passes `no_nul` first: the NUL
/// character (U+0000) is in no name, and PostgreSQL takes none in text.
pub struct AppPath<T>(pub T);

impl<T: DeserializeOwned + Send, S: Send + Sync> FromRequestParts<S> for AppPath<T> {
    type Rejection = ApiError;

    async fn from_request_parts(parts: &mut Parts, state: &S) -> Result<AppPath<T>, ApiError> {
        // The router decoded the path once: a NUL in a segment was `%00` in it.
        refuse_encoded_nul(parts.uri.path())?;
        let axum::extract::Path(value) = axum::extract::Path::<T>::from_request_parts(parts, state).await?;
        Ok(AppPath(value))
    }
}

/// The query string's parameters; a wrong one is 400 naming it (`serde_terms`).
pub struct AppQuery<T>(pub T);

impl<T: DeserializeOwned, S: Send + Sync> FromRequestParts<S> for AppQuery<T> {
    type Rejection = ApiError;

    async fn from_request_parts(parts: &mut Parts, _state: &S) -> Result<AppQuery<T>, ApiError> {
        let query = parts.uri.query().unwrap_or_default();
        if has_encoded_nul(query) {
            return Err(nul_in("a query parameter"));
        }
        serde_terms::query(query).map(AppQuery).map_err(|m| ApiError::bad(format!("invalid query string: {m}")))
    }
}

/// A path segment decoded once, as the router decodes a route's parameters: 400 when the
/// result is not UTF-8. For the paths split by hand (`extension_calls.rs`); the router's own
/// parameters get the same refusal (`error.rs`).
pub fn decode_once(segment: &str) -> Result<std::borrow::Cow<'_, str>, ApiError> {
    percent_decode_str(segment).decode_utf8().map_err(|_| ApiError::bad(format!("invalid path: {SEGMENT_NOT_UTF8}")))
}

/// What is wrong with a path segment that is not UTF-8 once decoded.
pub const SEGMENT_NOT_UTF8: &str = "a path segment is not valid UTF-8 once percent-decoded";

/// `AppPath`'s first check, for the paths split by hand: no `%00` anywhere in `path`.
pub fn refuse_encoded_nul(path: &str) -> Result<(), ApiError> {
    if has_encoded_nul(path) {
        return Err(nul_in("a path segment"));
    }
    Ok(())
}

/// Whether percent-encoded `text` holds `%00`.
fn has_encoded_nul(text: &str) -> bool {
    text.as_bytes().windows(3).any(|w| w == b"%00")
}

fn nul_in(what: &str) -> ApiError {
    ApiError::bad(format!("{what} holds the NUL character (U+0000), which no name or value here may hold"))
}

/// The second decoding of a path segment (the spec encodes special characters twice; the router
/// has decoded once). `+` stays a plus. A NUL is refused as in `AppPath`.
pub fn decode_twice(once: &str) -> Result<String, ApiError> {
    let decoded = percent_decode_str(once)
        .decode_utf8()
        .map(|s| s.into_owned())
        .map_err(|_| ApiError::bad("a path segment is not UTF-8 after decoding"))?;
    if decoded.contains('\0') {
        return Err(nul_in("a path segment"));
    }
    Ok(decoded)
}

/// A caller with a valid credential of any scope, and its instance.
#[derive(Clone)]
pub struct Caller {
    pub principal: Arc<Principal>,
    pub tenant: Arc<Tenant>,
}

impl FromRequestParts<ApiContext> for Caller {
    type Rejection = ApiError;

    /// The caller the `guard::authenticate` middleware found, or (for routes outside it) the
    /// caller the headers name.
    async fn from_request_parts(parts: &mut Parts, ctx: &ApiContext) -> Result<Caller, ApiError> {
        match parts.extensions.get::<Caller>() {
            Some(caller) => Ok(caller.clone()),
            None => Caller::authenticate(&parts.headers, ctx).await,
        }
    }
}

impl Caller {
    /// Resolves the `Authorization` header (Bearer or Basic) to a caller and its instance.
    pub async fn authenticate(headers: &axum::http::HeaderMap, ctx: &ApiContext) -> Result<Caller, ApiError> {
        let header = headers.get(header::AUTHORIZATION).and_then(|v| v.to_str().ok()).ok_or(ApiError::Unauthorized)?;
        let principal = ctx.auth.check_header(header).await.map_err(ApiError::from)?.ok_or(ApiError::Unauthorized)?;
        let tenant = ctx.tenants.activate(&principal.customer_id).await.map_err(|e| ApiError::inactive(e, ApiError::Unauthorized))?;
        Ok(Caller { principal, tenant })
    }
}

/// A caller with the Public Api scope: every public operation. App Api credentials get 403.
pub struct PublicCaller {
    pub tenant: Arc<Tenant>,
}

impl FromRequestParts<ApiContext> for PublicCaller {
    type Rejection = ApiError;

    async fn from_request_parts(parts: &mut Parts, ctx: &ApiContext) -> Result<PublicCaller, ApiError> {
        let caller = Caller::from_request_parts(parts, ctx).await?;
        if caller.principal.scope != Scope::Public {
            return Err(ApiError::Forbidden);
        }
        Ok(PublicCaller { tenant: caller.tenant })
    }
}

/// A JSON body read from bytes, for handlers that check their route (a custom method's name)
/// before they read it, so an unknown method is 404 whatever its body.
pub fn json_body<T: DeserializeOwned>(body: &[u8]) -> Result<T, ApiError> {
    if body.is_empty() {
        return Err(ApiError::bad("the body is empty: this method takes a JSON body"));
    }
    serde_terms::json(body).map_err(ApiError::BadRequest)
}

/// A raw body (for methods whose body is optional); too large is 413 with no body.
pub struct AppBytes(pub axum::body::Bytes);

impl<S: Send + Sync> FromRequest<S> for AppBytes {
    type Rejection = ApiError;

    async fn from_request(req: axum::extract::Request, state: &S) -> Result<AppBytes, ApiError> {
        match axum::body::Bytes::from_request(req, state).await {
            Ok(b) => Ok(AppBytes(b)),
            Err(r) if r.status() == axum::http::StatusCode::PAYLOAD_TOO_LARGE => Err(ApiError::PayloadTooLarge),
            Err(r) => Err(ApiError::bad(format!("the body could not be read: {}", r.body_text()))),
        }
    }
}

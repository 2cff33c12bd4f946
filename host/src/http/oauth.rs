//! POST /oauth2/token: the OAuth 2.0 client-credentials grant. Takes form data (`grant_type`,
//! `client_id`, `client_secret`), or the client in a Basic header (RFC 6749 2.3.1). Answers the
//! standard fields `access_token`, `token_type` (Bearer), `expires_in` (7200) and `scope`.
//! Wrong client credentials: 401 with an empty body; a malformed request: 400 with `message`
//! and the OAuth `error` code, as is a client that authenticates both ways at once (a Basic header
//! and `client_secret` in the form; RFC 6749 2.3 allows one method per request).

use std::collections::HashMap;

use axum::extract::State;
use axum::http::{header, HeaderMap, StatusCode};
use axum::response::{IntoResponse, Response};
use axum::routing::post;
use axum::{Json, Router};

use super::error::{ApiError, ApiResult};
use super::extract::AppBytes;
use super::openapi::schemas as s;
use super::ApiContext;
use crate::auth::decode_basic;

#[derive(utoipa::OpenApi)]
#[openapi(paths(token))]
pub(super) struct Doc;

pub(super) fn router() -> Router<ApiContext> {
    Router::new().route("/oauth2/token", post(token))
}

fn oauth_error(code: &str, message: &str) -> Response {
    (StatusCode::BAD_REQUEST, Json(s::OAuthError { error: code.into(), message: message.into() })).into_response()
}

#[utoipa::path(post, path = "/oauth2/token", tag = "Token", summary = "An access token for client credentials",
    request_body(content = s::TokenRequest, content_type = "application/x-www-form-urlencoded",
        description = "The client authenticates in the form (client_id, client_secret) or with a Basic authorization header, not both."),
    responses(
        (status = 200, description = "The token (not to be cached: `Cache-Control: no-store`).", body = s::Token),
        (status = 400, description = "The form is not a client-credentials request (RFC 6749 5.2).", body = s::OAuthError),
    ))]
async fn token(State(ctx): State<ApiContext>, headers: HeaderMap, AppBytes(body): AppBytes) -> ApiResult<Response> {
    let is_form = headers
        .get(header::CONTENT_TYPE)
        .and_then(|v| v.to_str().ok())
        .is_some_and(|v| v.split(';').next().unwrap_or("").trim().eq_ignore_ascii_case("application/x-www-form-urlencoded"));
    if !is_form {
        return Err(ApiError::UnsupportedMediaType);
    }
    let form: HashMap<String, String> = match serde_urlencoded::from_bytes(&body) {
        Ok(f) => f,
        Err(_) => return Ok(oauth_error("invalid_request", "the body is not valid form data")),
    };
    match form.get("grant_type").map(String::as_str) {
        None => return Ok(oauth_error("invalid_request", "grant_type is required")),
        Some("client_credentials") => {}
        Some(_) => return Ok(oauth_error("unsupported_grant_type", "only grant_type=client_credentials is supported")),
    }
    let basic = headers
        .get(header::AUTHORIZATION)
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.strip_prefix("Basic ").or_else(|| v.strip_prefix("basic ")));
    let from_header = match basic {
        Some(encoded) => match decode_basic(encoded) {
            Some(pair) => Some(pair),
            None => return Ok(oauth_error("invalid_request", "the Basic authorization header cannot be read")),
        },
        None => None,
    };
    // RFC 6749 2.3: a client uses one authentication method per request. A form that names
    // another client than the header, or carries a secret beside it, is refused, not resolved.
    let (id, secret) = match (form.get("client_id"), form.get("client_secret"), from_header) {
        (_, Some(_), Some(_)) => {
            return Ok(oauth_error(
                "invalid_request",
                "the client authenticates twice (a Basic header and client_secret in the form): use one of them",
            ))
        }
        (Some(form_id), None, Some((id, _))) if *form_id != id => {
            return Ok(oauth_error("invalid_request", "client_id in the form differs from the client of the Basic header"))
        }
        (Some(id), Some(secret), None) => (id.clone(), secret.clone()),
        (_, None, Some(pair)) => pair,
        _ => return Ok(oauth_error("invalid_request", "client_id and client_secret are required")),
    };
    let principal = ctx.auth.check_secret(&id, &secret).await?.ok_or(ApiError::Unauthorized)?;
    if !ctx.tenants.exists(&principal.customer_id) {
        return Err(ApiError::Unauthorized);
    }
    let (access_token, expires_in) = ctx.auth.issue(&principal);
    let body = s::Token { access_token, token_type: "Bearer".into(), expires_in, scope: principal.scope.name().into() };
    Ok((StatusCode::OK, [(header::CACHE_CONTROL, "no-store"), (header::PRAGMA, "no-cache")], Json(body)).into_response())
}

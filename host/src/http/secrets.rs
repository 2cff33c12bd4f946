//! The instance's secrets (Public Api credential of the instance). No answer ever holds a value:
//!
//! - `GET /extensions/secrets`: `[{"name", "setAt"}]`, by name;
//! - `GET /extensions/secrets/{name}`: `{"name", "setAt"}`; **404** when unset;
//! - `PUT /extensions/secrets/{name}` with `{"value": "..."}`: **201** set / **200** replaced,
//!   with `{"name", "setAt"}`; **400** for a name or value that is not allowed (the message never
//!   repeats the value);
//! - `DELETE /extensions/secrets/{name}`: **204**; **404**.
//!
//! A change forgets, on this node at once, the headers the instance's authheader extensions
//! made (other nodes keep theirs until their lifetime ends).

use axum::extract::State;
use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};
use axum::routing::get;
use axum::{Json, Router};
use serde_json::Value as Json_;

use super::error::{ApiError, ApiResult};
use super::extract::{json_body, AppBytes, AppPath, PublicCaller};
use super::flows::time;
use super::openapi::schemas as s;
use super::ApiContext;
use crate::secrets::{self, SecretError};
use crate::store::tenant::SecretInfo;
use crate::tenants::Tenant;

#[derive(utoipa::OpenApi)]
#[openapi(paths(list, one, put, remove))]
pub(super) struct Doc;

pub(super) fn router() -> Router<ApiContext> {
    Router::new().route("/extensions/secrets", get(list)).route("/extensions/secrets/{name}", get(one).put(put).delete(remove))
}

fn info_json(t: &Tenant, info: &SecretInfo) -> s::Secret {
    s::Secret { name: info.name.clone(), set_at: time(t, info.set_at) }
}

#[utoipa::path(get, path = "/extensions/secrets", tag = "Extensions", summary = "The instance's secrets (names and when they were set; never values)", responses((status = 200, description = "The secrets.", body = Vec<s::Secret>)))]
async fn list(caller: PublicCaller) -> ApiResult<Json<Vec<s::Secret>>> {
    let t = &caller.tenant;
    Ok(Json(t.db.secrets().await?.iter().map(|s| info_json(t, s)).collect()))
}

#[utoipa::path(get, path = "/extensions/secrets/{name}", tag = "Extensions", summary = "When a secret was set (never its value)", responses((status = 200, description = "The secret.", body = s::Secret)))]
async fn one(caller: PublicCaller, AppPath(name): AppPath<String>) -> ApiResult<Json<s::Secret>> {
    let t = &caller.tenant;
    let info = t.db.secret_info(&name).await?.ok_or(ApiError::NotFound)?;
    Ok(Json(info_json(t, &info)))
}

#[utoipa::path(put, path = "/extensions/secrets/{name}", tag = "Extensions", summary = "Set a secret for the instance's authheader extensions", request_body = s::SecretValue,
    responses((status = 201, description = "Created.", body = s::Secret), (status = 200, description = "Replaced.", body = s::Secret)))]
async fn put(
    State(ctx): State<ApiContext>,
    caller: PublicCaller,
    AppPath(name): AppPath<String>,
    AppBytes(body): AppBytes,
) -> ApiResult<Response> {
    let t = &caller.tenant;
    let body: serde_json::Value = json_body(&body)?;
    let Some(members) = body.as_object() else { return Err(ApiError::bad(r#"the body must be {"value": "..."}"#)) };
    if let Some(other) = members.keys().find(|k| *k != "value") {
        return Err(ApiError::bad(format!(r#"unknown member '{other}': the body is {{"value": "..."}}"#)));
    }
    let Some(value) = members.get("value").and_then(Json_::as_str) else {
        return Err(ApiError::bad(r#"'value' must be text: the body is {"value": "..."}"#));
    };
    let (info, created) = match secrets::set(ctx.runtime.secrets(), t, &name, value).await {
        Ok(done) => done,
        Err(SecretError::Invalid(message)) => return Err(ApiError::BadRequest(message)),
        Err(SecretError::Store(e)) => return Err(e.into()),
        Err(e @ SecretError::Unopenable { .. }) => return Err(ApiError::Internal(e.into())),
    };
    ctx.runtime.forget_headers(t.customer_id());
    let status = if created { StatusCode::CREATED } else { StatusCode::OK };
    Ok((status, Json(info_json(t, &info))).into_response())
}

#[utoipa::path(delete, path = "/extensions/secrets/{name}", tag = "Extensions", summary = "Delete a secret", responses((status = 204, description = "Deleted.")))]
async fn remove(State(ctx): State<ApiContext>, caller: PublicCaller, AppPath(name): AppPath<String>) -> ApiResult<StatusCode> {
    let t = &caller.tenant;
    if !t.db.delete_secret(&name).await? {
        return Err(ApiError::NotFound);
    }
    ctx.runtime.forget_headers(t.customer_id());
    Ok(StatusCode::NO_CONTENT)
}

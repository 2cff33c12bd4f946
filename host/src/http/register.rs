//! The Register API: what App Api credentials (embedded in devices) may call.
//!
//! POST /register/recipients `{"personData": {...}}` creates a recipient from the fields the
//! instance lists in its `register.fields` (any other field: 400). The answer is 201 with
//! `{"recipientId": <value>}` and nothing else, so a device learns no stored data; a unique value
//! that is taken is 409.

use axum::http::StatusCode;
use axum::routing::post;
use axum::{Json, Router};
use serde_json::Value as Json_;

use super::error::{ApiError, ApiResult};
use super::extract::{AppJson, Caller};
use super::openapi::schemas as s;
use super::{wire, ApiContext};
use crate::domain::triggers::{Happening, Lineage, Triggers};
use crate::model::fields::Fields;
use axum::extract::State;

#[derive(utoipa::OpenApi)]
#[openapi(paths(register))]
pub(super) struct Doc;

pub(super) fn router() -> Router<ApiContext> {
    Router::new().route("/register/recipients", post(register))
}

#[utoipa::path(post, path = "/register/recipients", tag = "Register", summary = "Register a recipient (App Api or Public Api credential)",
    request_body(content = s::Recipient, description = "The fields the instance opens to registration."),
    responses((status = 201, description = "Registered.", body = s::Registered), (status = 409, description = "A unique field's value is taken.", body = s::Message)))]
async fn register(
    State(ctx): State<ApiContext>,
    caller: Caller,
    AppJson(body): AppJson<Json_>,
) -> ApiResult<(StatusCode, Json<s::Registered>)> {
    let t = &caller.tenant;
    let model = &t.model;
    let person_data = wire::person_data(&body)?;
    if let Some(name) = person_data.keys().find(|k| !model.def.register.fields.contains(k)) {
        return Err(ApiError::bad(format!(
            "field '{name}' cannot be set through the Register API (allowed: {})",
            model.def.register.fields.join(", ")
        )));
    }
    let values = Fields::person_data(&model.def).assign_json(person_data, &model.formats).map_err(ApiError::BadRequest)?;
    let r = crate::domain::recipients::create(t, values).await?;
    ctx.flows.happened(t, r.key, Happening::Created, Lineage::outside()).await;
    let id_index = model.def.recipient_id_index();
    Ok((StatusCode::CREATED, Json(s::Registered { recipient_id: r.values[id_index].to_json(&model.formats) })))
}

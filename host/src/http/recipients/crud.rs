//! The collection and single recipients (Person Data): list, create, read, upsert, delete.

use axum::extract::State;
use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};
use axum::routing::get;
use axum::{Json, Router};
use serde_json::Value as Json_;

use super::identity::{parse_ref, resolve};
use super::json::{created, recipient_body};
use super::paged::{self, CollectionQuery};
use super::stream;
use crate::domain;
use crate::domain::triggers::{Happening, Lineage, Triggers};
use crate::http::error::{ApiError, ApiResult};
use crate::http::extract::{AppJson, AppPath, AppQuery, PublicCaller};
use crate::http::openapi::schemas as s;
use crate::http::{filter_condition, wire, ApiContext};
use crate::model::fields::Fields;

#[derive(utoipa::OpenApi)]
#[openapi(paths(list, create, read, upsert, remove, super::export::method))]
pub(super) struct Doc;

pub(super) fn router() -> Router<ApiContext> {
    Router::new()
        .route("/recipients", get(list).post(create))
        .route("/recipients/{recipient_id}", get(read).put(upsert).delete(remove).post(super::export::method))
}

/// GET /recipients: a JSON array, or with `objectResponse=true` a paged object (`paged.rs`).
#[utoipa::path(get, path = "/recipients", tag = "Recipients",
    summary = "The recipients, filtered, as one array or in pages",
    params(
        ("filter" = Option<String>, Query, description = "An RSQL filter over Person Data fields (422 when a selector is not a field)."),
        ("objectResponse" = Option<bool>, Query, description = "true: a paged document instead of one array."),
        ("pageStart" = Option<u64>, Query, description = "The first recipient of the page, from 1 (paged)."),
        ("pageSize" = Option<u64>, Query, description = "1 to 1000, default 1000 (paged)."),
        ("documentId" = Option<String>, Query, description = "The paged document of an earlier call (404 once it expired)."),
    ),
    responses(
        (status = 200, description = "Every matching recipient (an array), or a page of the document (`objectResponse=true` or `documentId`).",
            body = s::Recipients),
        (status = 422, description = "The filter names a field the instance does not have.", body = s::Message),
    ))]
async fn list(State(ctx): State<ApiContext>, caller: PublicCaller, AppQuery(q): AppQuery<CollectionQuery>) -> ApiResult<Response> {
    let t = &caller.tenant;
    if q.is_paged()? {
        return Ok(Json(paged::recipients(&ctx, t, &q).await?).into_response());
    }
    let condition = filter_condition(q.filter.as_deref(), &t.model.def, t)?;
    stream::json_array(caller.tenant.clone(), condition).await
}

#[utoipa::path(post, path = "/recipients", tag = "Recipients", summary = "Create a recipient",
    request_body = s::Recipient,
    responses(
        (status = 201, description = "Created; `Location` names it.", body = s::Recipient,
            headers(("Location" = String, description = "The new recipient's path."))),
        (status = 409, description = "A unique field's value is taken, or the Recipient Id cannot be numbered.", body = s::Message),
    ))]
async fn create(State(ctx): State<ApiContext>, caller: PublicCaller, AppJson(body): AppJson<Json_>) -> ApiResult<Response> {
    let t = &caller.tenant;
    let values =
        Fields::person_data(&t.model.def).assign_json(wire::person_data(&body)?, &t.model.formats).map_err(ApiError::BadRequest)?;
    let r = domain::recipients::create(t, values).await?;
    ctx.flows.happened(t, r.key, Happening::Created, Lineage::outside()).await;
    Ok(created(&t.model, &r))
}

#[utoipa::path(get, path = "/recipients/{recipientId}", tag = "Recipients", summary = "One recipient",
    responses((status = 200, description = "The recipient with every Person Data field.", body = s::Recipient)))]
async fn read(caller: PublicCaller, AppPath(id): AppPath<String>) -> ApiResult<Response> {
    let t = &caller.tenant;
    let r = resolve(t, &id).await?;
    Ok(Json(recipient_body(&t.model, &r)).into_response())
}

/// PUT: updates the recipient the path names (200) or creates it with the path's identifier
/// (201). Fields sent empty or null are cleared; the Recipient Id of an existing recipient
/// cannot change.
#[utoipa::path(put, path = "/recipients/{recipientId}", tag = "Recipients", summary = "Update or create a recipient",
    request_body = s::Recipient,
    responses(
        (status = 200, description = "Updated.", body = s::Recipient),
        (status = 201, description = "Created with the path's identifier.", body = s::Recipient),
        (status = 409, description = "A unique field's value is taken.", body = s::Message),
    ))]
async fn upsert(
    State(ctx): State<ApiContext>,
    caller: PublicCaller,
    AppPath(id): AppPath<String>,
    AppJson(body): AppJson<Json_>,
) -> ApiResult<Response> {
    let t = &caller.tenant;
    let model = &t.model;
    let target = parse_ref(model, &id)?;
    let mut values =
        Fields::person_data(&model.def).assign_json(wire::person_data(&body)?, &model.formats).map_err(ApiError::BadRequest)?;
    match domain::recipients::find(t, target.field, &target.value).await? {
        Some(existing) => {
            let r = domain::recipients::update(t, &existing, values).await?;
            Ok((StatusCode::OK, Json(recipient_body(model, &r))).into_response())
        }
        None => {
            if let Some((_, v)) = values.iter().find(|(i, _)| *i == target.field) {
                if *v != target.value {
                    return Err(ApiError::bad(format!("{} in the body differs from the path", model.def.person_data[target.field].name)));
                }
            }
            values.retain(|(i, _)| *i != target.field);
            values.push((target.field, target.value));
            let r = domain::recipients::create(t, values).await?;
            ctx.flows.happened(t, r.key, Happening::Created, Lineage::outside()).await;
            Ok(created(model, &r))
        }
    }
}

#[utoipa::path(delete, path = "/recipients/{recipientId}", tag = "Recipients", summary = "Delete a recipient and its data",
    responses((status = 204, description = "Deleted.")))]
async fn remove(caller: PublicCaller, AppPath(id): AppPath<String>) -> ApiResult<StatusCode> {
    let t = &caller.tenant;
    let r = resolve(t, &id).await?;
    if domain::recipients::delete(t, r.key).await? {
        Ok(StatusCode::NO_CONTENT)
    } else {
        Err(ApiError::NotFound)
    }
}

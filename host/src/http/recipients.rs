//! Recipients API: the collection and single recipients (Person Data).

use axum::extract::State;
use axum::http::{header, StatusCode};
use axum::response::{IntoResponse, Response};
use axum::routing::get;
use axum::{Json, Router};
use serde_json::{json, Value as Json_};

use super::error::{ApiError, ApiResult};
use super::extract::{decode_twice, AppJson, AppPath, AppQuery, PublicCaller};
use super::paged::{self, CollectionQuery};
use super::stream;
use super::{filter_condition, wire, ApiContext};
use crate::domain;
use crate::domain::triggers::{Happening, Triggers};
use crate::model::{Model, Value};
use crate::store::tenant::Recipient;
use crate::tenants::Tenant;

pub(super) fn router() -> Router<ApiContext> {
    Router::new()
        .route("/recipients", get(list).post(create))
        .route("/recipients/{recipient_id}", get(read).put(upsert).delete(remove))
}

/// A `{recipientId}` path segment: which unique field, and the value to look for.
pub(crate) struct RecipientRef {
    pub field: usize,
    pub value: Value,
}

/// Reads a `{recipientId}` segment (decoded once by the router): the Recipient Id value, or
/// `<unique field>=<value>`, each part decoded a second time.
pub(crate) fn parse_ref(model: &Model, segment: &str) -> ApiResult<RecipientRef> {
    let fields = &model.def.person_data;
    let (field, raw_value) = match segment.split_once('=') {
        Some((name, value)) => {
            let name = decode_twice(name)?;
            let index = fields
                .iter()
                .position(|f| f.name == name)
                .ok_or_else(|| ApiError::bad(format!("the path expression field '{name}' is not a Person Data field")))?;
            if !fields[index].unique {
                return Err(ApiError::bad(format!("the path expression field '{name}' is not unique")));
            }
            (index, value)
        }
        None => (model.def.recipient_id_index(), segment),
    };
    let text = decode_twice(raw_value)?;
    if text.is_empty() {
        return Err(ApiError::bad("the recipient identifier in the path is empty"));
    }
    let value = Value::from_text(fields[field].ty, &text, &model.formats)
        .map_err(|e| ApiError::bad(format!("the path expression field {} {e}", fields[field].name)))?;
    Ok(RecipientRef { field, value })
}

/// The recipient a `{recipientId}` segment names, or 404.
pub(super) async fn resolve(tenant: &Tenant, segment: &str) -> ApiResult<Recipient> {
    let r = parse_ref(&tenant.model, segment)?;
    tenant.db.find_recipient(&tenant.model, r.field, &r.value).await?.ok_or(ApiError::NotFound)
}

/// `{"personData": {...}}` with every field, empty ones as null.
pub(super) fn recipient_json(model: &Model, r: &Recipient) -> Json_ {
    json!({ "personData": wire::record_json(&model.def.person_data, &r.values, &model.formats) })
}

fn location(model: &Model, r: &Recipient) -> String {
    let index = model.def.recipient_id_index();
    let id = r.values[index].to_text(&model.formats);
    let encoded = percent_encoding::utf8_percent_encode(&id, percent_encoding::NON_ALPHANUMERIC).to_string();
    format!("/recipients/{}", encoded.replace('%', "%25"))
}

fn created(model: &Model, r: &Recipient) -> Response {
    (StatusCode::CREATED, [(header::LOCATION, location(model, r))], Json(recipient_json(model, r))).into_response()
}

/// GET /recipients: a JSON array, or with `objectResponse=true` a paged object (`paged.rs`).
async fn list(State(ctx): State<ApiContext>, caller: PublicCaller, AppQuery(q): AppQuery<CollectionQuery>) -> ApiResult<Response> {
    let t = &caller.tenant;
    if q.is_paged()? {
        return Ok(Json(paged::recipients(&ctx, t, &q).await?).into_response());
    }
    let condition = filter_condition(q.filter.as_deref(), &t.model.def, &t)?;
    stream::json_array(caller.tenant.clone(), condition).await
}

async fn create(State(ctx): State<ApiContext>, caller: PublicCaller, AppJson(body): AppJson<Json_>) -> ApiResult<Response> {
    let t = &caller.tenant;
    let values = wire::assignments("Person Data", &t.model.def.person_data, wire::person_data(&body)?, &t.model.formats)
        .map_err(ApiError::BadRequest)?;
    let r = domain::recipients::create(t, values).await?;
    ctx.flows.happened(t, r.key, Happening::Created, 0).await;
    Ok(created(&t.model, &r))
}

async fn read(caller: PublicCaller, AppPath(id): AppPath<String>) -> ApiResult<Json<Json_>> {
    let t = &caller.tenant;
    let r = resolve(t, &id).await?;
    Ok(Json(recipient_json(&t.model, &r)))
}

/// PUT: updates the recipient the path names (200) or creates it with the path's identifier
/// (201). Fields sent empty or null are cleared; the Recipient Id of an existing recipient
/// cannot change.
async fn upsert(State(ctx): State<ApiContext>, caller: PublicCaller, AppPath(id): AppPath<String>, AppJson(body): AppJson<Json_>) -> ApiResult<Response> {
    let t = &caller.tenant;
    let model = &t.model;
    let target = parse_ref(model, &id)?;
    let mut values = wire::assignments("Person Data", &model.def.person_data, wire::person_data(&body)?, &model.formats)
        .map_err(ApiError::BadRequest)?;
    match domain::recipients::find(t, target.field, &target.value).await? {
        Some(existing) => {
            let r = domain::recipients::update(t, &existing, values).await?;
            Ok((StatusCode::OK, Json(recipient_json(model, &r))).into_response())
        }
        None => {
            if let Some((_, v)) = values.iter().find(|(i, _)| *i == target.field) {
                if *v != target.value {
                    return Err(ApiError::bad(format!(
                        "{} in the body differs from the path",
                        model.def.person_data[target.field].name
                    )));
                }
            }
            values.retain(|(i, _)| *i != target.field);
            values.push((target.field, target.value));
            let r = domain::recipients::create(t, values).await?;
            ctx.flows.happened(t, r.key, Happening::Created, 0).await;
            Ok(created(model, &r))
        }
    }
}

async fn remove(caller: PublicCaller, AppPath(id): AppPath<String>) -> ApiResult<StatusCode> {
    let t = &caller.tenant;
    let r = resolve(t, &id).await?;
    if t.db.delete_recipient(r.key).await? {
        Ok(StatusCode::NO_CONTENT)
    } else {
        Err(ApiError::NotFound)
    }
}


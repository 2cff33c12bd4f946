//! Data hanging off one recipient: One-To-Many records, events, target groups, promotions and
//! communication history. Every operation stays within the recipient the path names.

use axum::extract::State;
use axum::routing::{get, post};
use axum::{Json, Router};
use serde::Deserialize;
use serde_json::{json, Value as Json_};

use super::error::{ApiError, ApiResult};
use super::extract::{decode_twice, AppJson, AppPath, AppQuery, PublicCaller};
use super::recipients::resolve;
use super::{batch, filter_condition, wire, ApiContext};
use crate::model::NamedFilter;
use crate::rsql;
use crate::store::tenant::{otm_table, TableRef};
use crate::tenants::Tenant;

pub(super) fn router() -> Router<ApiContext> {
    Router::new()
        .route("/recipients/{recipient_id}/oneToManyTables/{table}", get(otm_records))
        .route("/recipients/{recipient_id}/oneToManyTables/{table}/{method}", post(otm_batch))
        .route("/recipients/{recipient_id}/events", get(events))
        .route("/recipients/{recipient_id}/events/{event}/{method}", post(achieve_event))
        .route("/recipients/{recipient_id}/targetGroups", get(target_groups))
        .route("/recipients/{recipient_id}/communicationHistory", get(communication_history))
        .route("/recipients/{recipient_id}/{method}", post(recipient_method))
}

#[derive(Deserialize)]
struct FilterQuery {
    filter: Option<String>,
}

fn table<'a>(tenant: &'a Tenant, name: &str) -> ApiResult<&'a crate::model::TableDef> {
    tenant.model.def.one_to_many_table(name).ok_or(ApiError::NotFound)
}

async fn otm_records(
    caller: PublicCaller,
    AppPath((id, name)): AppPath<(String, String)>,
    AppQuery(q): AppQuery<FilterQuery>,
) -> ApiResult<Json<Vec<Json_>>> {
    let t = &caller.tenant;
    let def = table(t, &name)?;
    let r = resolve(t, &id).await?;
    let condition = filter_condition(q.filter.as_deref(), def, &t)?;
    let scope = TableRef { sql_name: otm_table(&def.name), def, recipient: Some(r.key) };
    let records = t.db.records(&scope, condition.as_ref()).await?;
    Ok(Json(records.iter().map(|v| wire::record_json(&def.fields, v, &t.model.formats)).collect()))
}

async fn otm_batch(
    caller: PublicCaller,
    AppPath((id, name, method)): AppPath<(String, String, String)>,
    AppJson(body): AppJson<Json_>,
) -> ApiResult<Json<Json_>> {
    let t = &caller.tenant;
    let def = table(t, &name)?;
    if !matches!(method.as_str(), ":batchUpdateRecords" | ":batchDeleteRecords") {
        return Err(ApiError::NotFound);
    }
    let r = resolve(t, &id).await?;
    let scope = TableRef { sql_name: otm_table(&def.name), def, recipient: Some(r.key) };
    let report = match method.as_str() {
        ":batchUpdateRecords" => batch::update(t, &scope, &body).await?,
        _ => batch::delete(t, &scope, &body).await?,
    };
    Ok(Json(report))
}

async fn events(caller: PublicCaller, AppPath(id): AppPath<String>) -> ApiResult<Json<Vec<Json_>>> {
    let t = &caller.tenant;
    let r = resolve(t, &id).await?;
    let events = t.db.events(r.key).await?;
    Ok(Json(
        events
            .iter()
            .map(|e| json!({ "eventId": e.event, "achievedAt": t.model.formats.timestamp.format_timestamp(e.achieved_at) }))
            .collect(),
    ))
}

/// POST `/recipients/{id}/events/{eventId}/:achieveEvent`: records the event (UTC now).
async fn achieve_event(
    caller: PublicCaller,
    AppPath((id, event, method)): AppPath<(String, String, String)>,
) -> ApiResult<Json<Json_>> {
    if method != ":achieveEvent" {
        return Err(ApiError::NotFound);
    }
    let t = &caller.tenant;
    let event = decode_twice(&event)?;
    if !t.model.def.events.iter().any(|e| e.name == event) {
        return Err(ApiError::NotFound);
    }
    let r = resolve(t, &id).await?;
    let now = chrono::Utc::now().naive_utc();
    t.db.achieve_event(r.key, &event, now).await?;
    Ok(Json(json!({ "eventId": event, "achievedAt": t.model.formats.timestamp.format_timestamp(now) })))
}

/// The named filters (target groups or promotions) that recipient `key` satisfies.
async fn matching(t: &Tenant, key: i64, filters: &[NamedFilter]) -> ApiResult<Vec<Json_>> {
    let mut out = Vec::new();
    for f in filters {
        let holds = if f.filter.trim().is_empty() {
            true
        } else {
            // Stored filters were validated when the model was applied: a failure is a fault.
            let condition = rsql::compile_text(&f.filter, &t.model.def, &t.model.formats, t.db.dialect())
                .map_err(|e| anyhow::anyhow!("stored filter of {}: {e:?}", f.name))?;
            t.db.recipient_matches(key, &condition).await?
        };
        if holds {
            out.push(json!({ "name": f.name, "description": f.description }));
        }
    }
    Ok(out)
}

async fn target_groups(caller: PublicCaller, AppPath(id): AppPath<String>) -> ApiResult<Json<Vec<Json_>>> {
    let t = &caller.tenant;
    let r = resolve(t, &id).await?;
    Ok(Json(matching(t, r.key, &t.model.def.target_groups).await?))
}

async fn communication_history(caller: PublicCaller, AppPath(id): AppPath<String>) -> ApiResult<Json<Vec<Json_>>> {
    let t = &caller.tenant;
    let r = resolve(t, &id).await?;
    let items = t.db.communications(r.key).await?;
    Ok(Json(
        items
            .iter()
            .map(|c| {
                json!({
                    "channel": c.channel,
                    "subject": c.subject,
                    "sentAt": t.model.formats.timestamp.format_timestamp(c.sent_at),
                })
            })
            .collect(),
    ))
}

/// POST `/recipients/{id}/:evaluatePromotion`: the promotions the recipient is eligible for.
async fn recipient_method(
    caller: PublicCaller,
    State(_): State<ApiContext>,
    AppPath((id, method)): AppPath<(String, String)>,
) -> ApiResult<Json<Vec<Json_>>> {
    if method != ":evaluatePromotion" {
        return Err(ApiError::NotFound);
    }
    let t = &caller.tenant;
    let r = resolve(t, &id).await?;
    Ok(Json(matching(t, r.key, &t.model.def.promotions).await?))
}

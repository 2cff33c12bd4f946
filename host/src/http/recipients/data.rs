//! Data hanging off one recipient: One-To-Many records, events, target groups, promotions and
//! communication history. Every operation stays within the recipient the path names.

use axum::extract::State;
use axum::routing::{get, post};
use axum::{Json, Router};
use serde::Deserialize;
use serde_json::Value as Json_;

use super::identity::resolve;
use crate::domain;
use crate::domain::triggers::{Happening, Lineage};
use crate::flows::FlowEngine;
use crate::http::error::{ApiError, ApiResult};
use crate::http::extract::{decode_twice, json_body, AppBytes, AppPath, AppQuery, PublicCaller};
use crate::http::openapi::schemas as s;
use crate::http::{batch, filter_condition, wire, ApiContext};
use crate::model::NamedFilter;
use crate::rsql;
use crate::tenants::Tenant;

#[derive(utoipa::OpenApi)]
#[openapi(paths(otm_records, otm_batch, otm_batch_delete, events, achieve_event, target_groups, communication_history, recipient_method))]
pub(super) struct Doc;

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

#[utoipa::path(get, path = "/recipients/{recipientId}/oneToManyTables/{tableName}", tag = "Recipients",
    summary = "The recipient's records of a One-To-Many table",
    params(("filter" = Option<String>, Query, description = "An RSQL filter over the table's fields.")),
    responses(
        (status = 200, description = "The records.", body = Vec<s::Record>),
        (status = 422, description = "The filter names a field the table does not have.", body = s::Message),
    ))]
async fn otm_records(
    caller: PublicCaller,
    AppPath((id, name)): AppPath<(String, String)>,
    AppQuery(q): AppQuery<FilterQuery>,
) -> ApiResult<Json<Vec<Json_>>> {
    let t = &caller.tenant;
    let def = table(t, &name)?;
    let r = resolve(t, &id).await?;
    let condition = filter_condition(q.filter.as_deref(), def, t)?;
    let scope = domain::tables::one_to_many(t, &def.name, r.key)?;
    let records = domain::tables::records(t, &scope, condition.as_ref()).await?;
    Ok(Json(records.iter().map(|v| wire::record_json(&def.fields, v, &t.model.formats)).collect()))
}

/// The batch update (this handler serves `:batchDeleteRecords` too, `otm_batch_delete`).
#[utoipa::path(post, path = "/recipients/{recipientId}/oneToManyTables/{tableName}/:batchUpdateRecords", tag = "Recipients",
    summary = "Create or update up to 1000 records of the recipient",
    request_body(content = Vec<s::Record>, description = "Records keyed by field name, each with its identifier."),
    responses((status = 200, description = "Each entry's outcome (the batch is not one transaction).", body = s::BatchReport)))]
async fn otm_batch(
    caller: PublicCaller,
    AppPath((id, name, method)): AppPath<(String, String, String)>,
    AppBytes(body): AppBytes,
) -> ApiResult<Json<s::BatchReport>> {
    let t = &caller.tenant;
    let def = table(t, &name)?;
    if !matches!(method.as_str(), ":batchUpdateRecords" | ":batchDeleteRecords") {
        return Err(ApiError::NotFound);
    }
    let body: serde_json::Value = json_body(&body)?;
    let r = resolve(t, &id).await?;
    let scope = domain::tables::one_to_many(t, &def.name, r.key)?;
    let report = match method.as_str() {
        ":batchUpdateRecords" => batch::update(t, &scope, &body).await?,
        _ => batch::delete(t, &scope, &body).await?,
    };
    Ok(Json(report))
}

#[utoipa::path(get, path = "/recipients/{recipientId}/events", tag = "Recipients", summary = "The events the recipient achieved",
    responses((status = 200, description = "The events, oldest first.", body = Vec<s::Event>)))]
async fn events(caller: PublicCaller, AppPath(id): AppPath<String>) -> ApiResult<Json<Vec<s::Event>>> {
    let t = &caller.tenant;
    let r = resolve(t, &id).await?;
    let events = domain::recipients::events(t, r.key).await?;
    Ok(Json(
        events
            .iter()
            .map(|e| s::Event { event_id: e.event.clone(), achieved_at: t.model.formats.timestamp.format_timestamp(e.achieved_at) })
            .collect(),
    ))
}

/// POST `/recipients/{id}/events/{eventId}/:achieveEvent`: records the event (at the server's
/// clock). An optional body carries contextual data (`flows::context`), checked against its
/// schema and against the flows the event triggers before anything is recorded.
#[utoipa::path(post, path = "/recipients/{recipientId}/events/{eventId}/:achieveEvent", tag = "Recipients",
    summary = "Record an event for the recipient and start the flows it triggers",
    request_body(content = Option<s::ContextualData>, description = "Optional contextual data for the flows the event triggers."),
    responses((status = 200, description = "Recorded at the server's clock, with the runs it started.", body = s::AchievedEvent)))]
async fn achieve_event(
    State(ctx): State<ApiContext>,
    caller: PublicCaller,
    AppPath((id, event, method)): AppPath<(String, String, String)>,
    AppBytes(body): AppBytes,
) -> ApiResult<Json<s::AchievedEvent>> {
    if method != ":achieveEvent" {
        return Err(ApiError::NotFound);
    }
    let t = &caller.tenant;
    let event = decode_twice(&event)?;
    if !t.model.def.events.iter().any(|e| e.name == event) {
        return Err(ApiError::NotFound);
    }
    let r = resolve(t, &id).await?;
    let body: Option<serde_json::Value> = if body.is_empty() { None } else { Some(json_body(&body)?) };
    let context = crate::flows::context::read(body, t, &crate::http::assets::media(&ctx, t)).await.map_err(ApiError::BadRequest)?;
    let what = Happening::EventAchieved(&event);
    let triggered = FlowEngine::triggered(t, what).await?;
    let flows: Vec<_> = triggered.iter().map(|f| &f.flow).collect();
    crate::flows::context::fits(&flows, context.as_ref()).map_err(ApiError::BadRequest)?;
    let now = ctx.clock.now_utc();
    domain::recipients::achieve_event(t, r.key, &event, now).await?;
    // The contextual data goes to these runs alone, and the runs' ids to the caller.
    // An outside call: no chain yet, so its runs always start.
    let runs = ctx.flows.start(t, r.key, &triggered, what, context.as_ref(), &Lineage::outside()).await?.unwrap_or_default();
    Ok(Json(s::AchievedEvent { event_id: event, achieved_at: t.model.formats.timestamp.format_timestamp(now), flow_runs: runs }))
}

/// The named filters (target groups or promotions) that recipient `key` satisfies.
async fn matching(t: &Tenant, key: i64, filters: &[NamedFilter]) -> ApiResult<Vec<s::NamedFilter>> {
    let mut out = Vec::new();
    for f in filters {
        let holds = if f.filter.trim().is_empty() {
            true
        } else {
            // Stored filters were validated when the model was applied: a failure is a fault.
            let condition = rsql::compile_text(&f.filter, &t.model.def, &t.model.formats, t.db.dialect())
                .map_err(|e| anyhow::anyhow!("stored filter of {}: {e:?}", f.name))?;
            domain::recipients::matches(t, key, &condition).await?
        };
        if holds {
            out.push(s::NamedFilter { name: f.name.clone(), description: f.description.clone() });
        }
    }
    Ok(out)
}

#[utoipa::path(get, path = "/recipients/{recipientId}/targetGroups", tag = "Recipients",
    summary = "The target groups the recipient is in", responses((status = 200, description = "The target groups.", body = Vec<s::NamedFilter>)))]
async fn target_groups(caller: PublicCaller, AppPath(id): AppPath<String>) -> ApiResult<Json<Vec<s::NamedFilter>>> {
    let t = &caller.tenant;
    let r = resolve(t, &id).await?;
    Ok(Json(matching(t, r.key, &t.model.def.target_groups).await?))
}

#[utoipa::path(get, path = "/recipients/{recipientId}/communicationHistory", tag = "Recipients",
    summary = "The communications sent to the recipient", responses((status = 200, description = "The communications.", body = Vec<s::Communication>)))]
async fn communication_history(caller: PublicCaller, AppPath(id): AppPath<String>) -> ApiResult<Json<Vec<s::Communication>>> {
    let t = &caller.tenant;
    let r = resolve(t, &id).await?;
    let items = domain::recipients::communications(t, r.key).await?;
    Ok(Json(
        items
            .iter()
            .map(|c| s::Communication {
                channel: c.channel.clone(),
                subject: c.subject.clone(),
                sent_at: t.model.formats.timestamp.format_timestamp(c.sent_at),
                template: c.template.clone(),
                flow: c.flow.clone(),
                content: c.content.clone(),
            })
            .collect(),
    ))
}

#[utoipa::path(post, path = "/recipients/{recipientId}/:evaluatePromotion", tag = "Recipients",
    summary = "The promotions the recipient is eligible for", responses((status = 200, description = "The promotions.", body = Vec<s::NamedFilter>)))]
/// POST `/recipients/{id}/:evaluatePromotion`: the promotions the recipient is eligible for.
async fn recipient_method(
    caller: PublicCaller,
    State(_): State<ApiContext>,
    AppPath((id, method)): AppPath<(String, String)>,
) -> ApiResult<Json<Vec<s::NamedFilter>>> {
    if method != ":evaluatePromotion" {
        return Err(ApiError::NotFound);
    }
    let t = &caller.tenant;
    let r = resolve(t, &id).await?;
    Ok(Json(matching(t, r.key, &t.model.def.promotions).await?))
}

/// Served by `otm_batch`; described here as the operation of its own that it is.
#[utoipa::path(post, path = "/recipients/{recipientId}/oneToManyTables/{tableName}/:batchDeleteRecords", tag = "Recipients",
    summary = "Delete up to 1000 records of the recipient",
    request_body(content = Vec<String>, description = "The identifiers of the records."),
    responses((status = 200, description = "Each entry's outcome.", body = s::BatchReport)))]
#[allow(dead_code)]
fn otm_batch_delete() {}

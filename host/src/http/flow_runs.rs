//! A flow's runs and their traces (Public Api credential of the instance):
//!
//! - `GET /flows/{name}/runs`: the newest runs first, each with its `id`, `recipientId`, `state`
//!   (`running`, `waiting`, `done`, `failed`), `outcome`, `trigger`, `version` (of the flow it
//!   follows), `startedAt`, `updatedAt` and `resumeAt` (of a waiting run). Query: `recipientId`
//!   (that recipient's runs), `limit` (1 to 100, default 20), `before` (a run's `startedAt`
//!   milliseconds, `startedAtMs`: the page after it);
//! - `GET /flows/{name}/runs/{runId}`: one run, with its `trace`: an entry per node visited
//!   (`node` as the flow checks name it, `kind`, `result`, `at`, `durationMs`, and `log`: what an
//!   extension logged) and `took` (which way the run went on: `next`, `else`, `end`, `failed`,
//!   `wait`), and the flow as the run follows it (`definition`).
//!
//! The runs of a flow deleted or replaced stay readable under its name.

use axum::routing::get;
use axum::{Json, Router};
use serde::Deserialize;
use serde_json::Value as Json_;

use super::error::{ApiError, ApiResult};
use super::extract::{AppPath, AppQuery, PublicCaller};
use super::openapi::schemas as s;
use super::recipients::resolve;
use super::ApiContext;
use crate::store::tenant::FlowRun;
use crate::tenants::Tenant;

#[derive(utoipa::OpenApi)]
#[openapi(paths(list, one))]
pub(super) struct Doc;

pub(super) fn router() -> Router<ApiContext> {
    Router::new().route("/flows/{name}/runs", get(list)).route("/flows/{name}/runs/{run}", get(one))
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
struct RunsQuery {
    recipient_id: Option<String>,
    limit: Option<i64>,
    before: Option<i64>,
}

use super::flows::time;

fn run_json(t: &Tenant, run: &FlowRun, recipient_id: Json_) -> s::FlowRun {
    let p = &run.progress;
    s::FlowRun {
        id: run.id.clone(),
        flow: run.flow.clone(),
        version: run.version,
        recipient_id,
        trigger: run.trigger.clone(),
        depth: run.depth,
        state: p.state.name().into(),
        outcome: p.outcome.clone(),
        started_at: time(t, run.started_at),
        started_at_ms: run.started_at,
        updated_at: time(t, p.updated_at),
        resume_at: p.resume_at.map(|at| time(t, at)),
        trace: None,
        definition: None,
    }
}

/// The Recipient Ids of `runs`' recipients, in order (null for one deleted meanwhile).
async fn recipient_ids(t: &Tenant, runs: &[FlowRun]) -> ApiResult<Vec<Json_>> {
    let keys: Vec<i64> = runs.iter().map(|r| r.recipient).collect();
    let found = crate::domain::recipients::by_keys(t, &keys).await?;
    let index = t.model.def.recipient_id_index();
    Ok(keys.iter().map(|k| found.iter().find(|r| r.key == *k).map_or(Json_::Null, |r| r.values[index].to_json(&t.model.formats))).collect())
}

#[utoipa::path(get, path = "/flows/{name}/runs", tag = "Flows", summary = "A flow's runs, newest first",
    params(("recipientId" = Option<String>, Query, description = "Only this recipient's runs (as in a recipient path)."),
        ("limit" = Option<i64>, Query, description = "1 to 100, default 20."),
        ("before" = Option<i64>, Query, description = "Only runs started before this time (`startedAtMs` of the last run of a page).")),
    responses((status = 200, description = "The runs.", body = Vec<s::FlowRun>)))]
async fn list(caller: PublicCaller, AppPath(name): AppPath<String>, AppQuery(q): AppQuery<RunsQuery>) -> ApiResult<Json<Vec<s::FlowRun>>> {
    let t = &caller.tenant;
    let limit = q.limit.unwrap_or(20);
    if !(1..=100).contains(&limit) {
        return Err(ApiError::bad("limit must be from 1 to 100"));
    }
    let recipient = match &q.recipient_id {
        Some(id) => Some(resolve(t, id).await?.key),
        None => None,
    };
    let runs = t.db.flow_runs(&name, recipient, q.before, limit).await?;
    let ids = recipient_ids(t, &runs).await?;
    Ok(Json(runs.iter().zip(ids).map(|(run, id)| run_json(t, run, id)).collect()))
}

#[utoipa::path(get, path = "/flows/{name}/runs/{runId}", tag = "Flows", summary = "One run with its trace", responses((status = 200, description = "The run.", body = s::FlowRun)))]
async fn one(caller: PublicCaller, AppPath((name, id)): AppPath<(String, String)>) -> ApiResult<Json<s::FlowRun>> {
    let t = &caller.tenant;
    let run = t.db.flow_run(&id).await?.filter(|r| r.flow == name).ok_or(ApiError::NotFound)?;
    let ids = recipient_ids(t, std::slice::from_ref(&run)).await?;
    let mut out = run_json(t, &run, ids.into_iter().next().unwrap_or(Json_::Null));
    let mut trace: Vec<Json_> = serde_json::from_str(&run.progress.trace).unwrap_or_default();
    for entry in &mut trace {
        if let Some(at) = entry.get("at").and_then(Json_::as_i64) {
            entry["at"] = time(t, at).into();
        }
    }
    out.trace = Some(trace);
    out.definition = serde_json::from_str(&run.definition).ok();
    Ok(Json(out))
}

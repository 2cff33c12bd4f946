//! `GET /extensions/monitors` (Public Api credential of the instance): each monitor extension of
//! the instance, by id, with its `schedule`, `nextRunAt` (null until a scheduler has seen it, which
//! takes a few seconds), its `alert` (or null), its `status` (`healthy`, `unhealthy`, `failed` when
//! it reported nothing (trap, deadline), or `pending` before its first run), `lastRun`, and
//! `history`: the newest runs first (`at`, `status`, `message`, `durationMs`; the newest 50 are
//! kept).

use axum::extract::State;
use axum::routing::get;
use axum::{Json, Router};

use super::error::ApiResult;
use super::extract::PublicCaller;
use super::flows::time;
use super::openapi::schemas as s;
use super::ApiContext;
use crate::monitors::monitor_id;
use crate::runtime::{stored_config, ExtensionKind};
use crate::store::tenant::KEPT_RUNS;

#[derive(utoipa::OpenApi)]
#[openapi(paths(list))]
pub(super) struct Doc;

pub(super) fn router() -> Router<ApiContext> {
    Router::new().route("/extensions/monitors", get(list))
}

#[utoipa::path(get, path = "/extensions/monitors", tag = "Extensions", summary = "The monitors with their schedule, status and history", responses((status = 200, description = "The monitors.", body = Vec<s::Monitor>)))]
async fn list(State(ctx): State<ApiContext>, caller: PublicCaller) -> ApiResult<Json<Vec<s::Monitor>>> {
    let t = &caller.tenant;
    let mut out = Vec::new();
    for record in t.db.extensions_of_kind(ExtensionKind::Monitor.name()).await?.iter() {
        let id = monitor_id(&record.path);
        let config = stored_config(t, record).await?;
        let scheduled = ctx.flows.control.monitor_schedule(t.customer_id(), id).await?.filter(|s| s.sha256 == record.sha256);
        let history: Vec<s::MonitorRun> =
            t.db.monitor_runs(id, KEPT_RUNS)
                .await?
                .into_iter()
                .map(|r| s::MonitorRun { at: time(t, r.at), status: r.status, message: r.message, duration_ms: r.duration_ms })
                .collect();
        out.push(s::Monitor {
            id: id.to_string(),
            schedule: config.schedule.map(|s| s.to_string()),
            next_run_at: scheduled.map(|s| time(t, s.next_at)),
            alert: config.alert.map(|a| s::MonitorAlert { event: a.event, recipient: a.recipient }),
            status: history.first().map_or_else(|| "pending".to_string(), |run| run.status.clone()),
            last_run: history.first().cloned(),
            history,
        });
    }
    Ok(Json(out))
}

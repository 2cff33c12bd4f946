//! The operator's listener (`--ops-listen`, off by default, never the public one): `/metrics`
//! (Prometheus text), `/healthz` (the process answers) and `/readyz` (the control database answers
//! and the server accepts calls: 503 otherwise), for scrapers, load balancers and orchestrators.

pub mod logs;
pub mod metrics;

use std::sync::Arc;

use axum::extract::State;
use axum::http::{header, StatusCode};
use axum::response::IntoResponse;
use axum::routing::get;
use axum::Router;

use crate::limits::DailyCounters;
use crate::paging::Clock;
use crate::store::ControlDb;
use crate::tenants::Tenants;

#[derive(Clone)]
pub struct OpsContext {
    pub control: ControlDb,
    pub tenants: Arc<Tenants>,
    pub daily: Arc<DailyCounters>,
    pub clock: Arc<dyn Clock>,
}

pub fn router(ctx: OpsContext) -> Router {
    Router::new().route("/metrics", get(scrape)).route("/healthz", get(healthz)).route("/readyz", get(readyz)).with_state(ctx)
}

async fn healthz() -> &'static str {
    "ok"
}

async fn readyz(State(ctx): State<OpsContext>) -> impl IntoResponse {
    match ctx.control.ping().await {
        Ok(()) => (StatusCode::OK, "ready".to_string()),
        Err(e) => (StatusCode::SERVICE_UNAVAILABLE, format!("the database does not answer: {e}")),
    }
}

async fn scrape(State(ctx): State<OpsContext>) -> impl IntoResponse {
    let (queued_jobs, oldest) = ctx.control.queue_depth().await.unwrap_or((0, None));
    let now = ctx.clock.now_millis();
    let caps: std::collections::HashMap<String, u64> = ctx
        .tenants
        .customer_ids()
        .into_iter()
        .filter_map(|id| ctx.tenants.get(&id).map(|t| (id, t.settings.effective_daily_cap())))
        .collect();
    let sample = metrics::Sample {
        queued_jobs,
        oldest_job_age_seconds: oldest.map_or(0.0, |at| (now - at).max(0) as f64 / 1000.0),
        daily: ctx.daily.used_today().into_iter().filter_map(|(id, used)| caps.get(&id).map(|cap| (id, used, *cap))).collect(),
        connections: caps
            .keys()
            .filter_map(|id| ctx.tenants.get(id).map(|t| (id.clone(), t.db.connections())))
            .map(|(id, (open, idle))| (id, open, idle))
            .collect(),
    };
    metrics::record(&sample);
    let handle = metrics::handle();
    handle.run_upkeep();
    ([(header::CONTENT_TYPE, "text/plain; version=0.0.4")], handle.render())
}

//! The operator's listener (`--ops-listen`, off by default, never the public one): `/metrics`
//! (Prometheus text), `/healthz` (the process answers) and `/readyz` (the control database answers
//! and the server accepts calls: 503 otherwise), for scrapers, load balancers and orchestrators,
//! and `/usage` (the usage books, `usage.rs`): what each instance used per day, to bill from.

pub mod logs;
pub mod metrics;
pub mod usage;

use std::sync::Arc;

use axum::extract::State;
use axum::http::{header, StatusCode};
use axum::response::IntoResponse;
use axum::routing::get;
use axum::Router;

use crate::clock::Clock;
use crate::limits::DailyCounters;
use crate::store::ControlDb;
use crate::tenants::Tenants;

#[derive(Clone)]
pub struct OpsContext {
    pub control: ControlDb,
    pub tenants: Arc<Tenants>,
    pub daily: Arc<DailyCounters>,
    pub usage: Arc<crate::limits::usage::UsageBooks>,
    pub clock: Arc<dyn Clock>,
}

pub fn router(ctx: OpsContext) -> Router {
    Router::new()
        .route("/metrics", get(scrape))
        .route("/healthz", get(healthz))
        .route("/readyz", get(readyz))
        .route("/usage", get(usage::operator_usage))
        .with_state(ctx)
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
    // Only the open instances are looked at: a scrape costs the same with 10 or 10,000.
    let open = ctx.tenants.open_tenants();
    let caps: std::collections::HashMap<&str, u64> = open.iter().map(|t| (t.customer_id(), t.settings.effective_daily_cap())).collect();
    let sample = metrics::Sample {
        queued_jobs,
        oldest_job_age_seconds: oldest.map_or(0.0, |at| (now - at).max(0) as f64 / 1000.0),
        daily: ctx
            .daily
            .used_today()
            .into_iter()
            .filter_map(|(id, used)| caps.get(id.as_str()).map(|cap| (id.clone(), used, *cap)))
            .collect(),
        connections: open
            .iter()
            .filter(|t| t.db.dialect() == crate::rsql::Dialect::Sqlite)
            .map(|t| {
                let (open, idle) = t.db.connections();
                (t.customer_id().to_string(), open, idle)
            })
            .collect(),
        instances: ctx.tenants.stats(),
        node_pool: ctx.control.node_pool().map(|pool| {
            let (open, idle) = pool.connections();
            let waits = &pool.waits;
            let relaxed = std::sync::atomic::Ordering::Relaxed;
            metrics::NodePoolSample {
                open,
                idle,
                waited: waits.waited.load(relaxed),
                timed_out: waits.timed_out.load(relaxed),
                wait_seconds: waits.wait_micros.load(relaxed) as f64 / 1e6,
                gathered_reads: waits.gathered_reads.load(relaxed),
            }
        }),
    };
    metrics::record(&sample);
    let handle = metrics::handle();
    handle.run_upkeep();
    ([(header::CONTENT_TYPE, "text/plain; version=0.0.4")], handle.render())
}

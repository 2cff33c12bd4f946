//! The operator's side of the usage books (`limits::usage`): `GET /usage?instance=&since=` on the
//! operator listener, every instance's lines (or one's) from `since` (default the last 30 days),
//! and the sampler that measures the open instances' storage into them.

use std::sync::Arc;
use std::time::Duration;

use axum::extract::{Query, State};
use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};
use axum::Json;

use super::OpsContext;
use crate::limits::usage::{since_day, today, UsageBooks};
use crate::store::usage::DayUsage;
use crate::tenants::Tenants;

#[derive(serde::Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct UsageQuery {
    instance: Option<String>,
    since: Option<String>,
}

/// `[{"instance", "day", "cpuUs", "waitUs", "calls": {"ok", ...}, "outboundRequests",
/// "outboundBytes", "rowsWritten", "storageBytes"}]`, by instance and day; this node's counts not
/// yet in the books are added first. 400 for a `since` that is not a day.
pub(super) async fn operator_usage(State(ctx): State<OpsContext>, Query(q): Query<UsageQuery>) -> Response {
    let since = match since_day(q.since.as_deref()) {
        Ok(since) => since,
        Err(message) => return (StatusCode::BAD_REQUEST, Json(serde_json::json!({ "message": message }))).into_response(),
    };
    if let Err(e) = ctx.usage.flush().await {
        tracing::warn!(error = %e, "the usage books could not be written before a reading");
    }
    match ctx.control.extension_usage(q.instance.as_deref(), &since).await {
        Ok(rows) => Json(rows).into_response(),
        Err(e) => {
            tracing::error!(error = %e, "the usage books could not be read");
            (StatusCode::SERVICE_UNAVAILABLE, Json(serde_json::json!({ "message": "the usage books cannot be read now" }))).into_response()
        }
    }
}

/// Measures every open instance's storage each `every` into today's line of its books (the
/// day keeps the largest). Only open instances: a sleeping one's storage does not change.
pub fn spawn_storage_sampler(tenants: Arc<Tenants>, books: Arc<UsageBooks>, every: Duration) -> tokio::task::JoinHandle<()> {
    tokio::spawn(async move {
        let mut tick = tokio::time::interval(every);
        tick.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
        loop {
            tick.tick().await;
            let day = today();
            for tenant in tenants.open_tenants() {
                let measured = match tenant.db.storage_bytes().await {
                    Ok(bytes) => bytes,
                    Err(e) => {
                        tracing::debug!(error = %e, instance = tenant.customer_id(), "an instance's storage could not be measured");
                        continue;
                    }
                };
                let usage = DayUsage { storage_bytes: measured, ..DayUsage::default() };
                if let Err(e) = books.control().add_extension_usage(tenant.customer_id(), &day, &usage).await {
                    tracing::warn!(error = %e, "the usage books could not be written");
                }
            }
        }
    })
}

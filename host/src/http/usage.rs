//! What the caller's instance used, per UTC day (Public Api credential of the instance): the
//! usage books (`limits::usage`) read for one instance, the one of the credential, never another.
//!
//! `GET /usage?since=YYYY-MM-DD` answers `{"instance", "since", "days": [...], "total"}`: a line a
//! day that had any usage, from `since` (default the last 30 days) to today, each with the
//! processor time of its extensions' executions and their time waiting for a turn, executions by
//! outcome, outbound requests and bytes, rows written through `herald:platform`, and the
//! instance's storage (the largest measured that day). This node's counts not yet in the books
//! are added before the reading; other nodes' are within their last few seconds.

use axum::extract::State;
use axum::routing::get;
use axum::{Json, Router};
use serde::{Deserialize, Serialize};
use utoipa::ToSchema;

use super::error::{ApiError, ApiResult};
use super::extract::{AppQuery, PublicCaller};
use super::ApiContext;
use crate::store::usage::{CallsByOutcome, DayUsage};

#[derive(utoipa::OpenApi)]
#[openapi(paths(usage), components(schemas(InstanceUsage, UsageDay, UsageCalls)))]
pub(super) struct Doc;

pub(super) fn router() -> Router<ApiContext> {
    Router::new().route("/usage", get(usage))
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct UsageQuery {
    since: Option<String>,
}

/// An instance's usage per day.
#[derive(Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct InstanceUsage {
    pub instance: String,
    /// The first day read (`YYYY-MM-DD`, UTC).
    pub since: String,
    /// The days that had any usage, oldest first.
    pub days: Vec<UsageDay>,
    /// The days added up (storage: the largest of them).
    pub total: UsageDay,
}

/// One day's usage (`day` is empty in a total).
#[derive(Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct UsageDay {
    #[schema(example = "2026-12-07")]
    pub day: String,
    /// Processor time of the extensions' executions, in microseconds.
    pub cpu_us: u64,
    /// Their time waiting for a turn of the node's guest threads, in microseconds.
    pub wait_us: u64,
    pub calls: UsageCalls,
    pub outbound_requests: u64,
    /// The bodies of outbound requests and of their answers.
    pub outbound_bytes: u64,
    /// Records created, changed or deleted through `herald:platform`.
    pub rows_written: u64,
    /// The instance's database, the largest measured that day.
    pub storage_bytes: u64,
}

/// Executions by outcome (the words of the execution logs).
#[derive(Serialize, ToSchema)]
pub struct UsageCalls {
    pub ok: u64,
    pub error: u64,
    pub deadline: u64,
    pub cpu: u64,
    pub memory: u64,
    pub trap: u64,
    pub fault: u64,
}

impl From<CallsByOutcome> for UsageCalls {
    fn from(c: CallsByOutcome) -> Self {
        UsageCalls { ok: c.ok, error: c.error, deadline: c.deadline, cpu: c.cpu, memory: c.memory, trap: c.trap, fault: c.fault }
    }
}

impl UsageDay {
    pub fn new(day: String, u: DayUsage) -> UsageDay {
        UsageDay {
            day,
            cpu_us: u.cpu_us,
            wait_us: u.wait_us,
            calls: u.calls.into(),
            outbound_requests: u.outbound_requests,
            outbound_bytes: u.outbound_bytes,
            rows_written: u.rows_written,
            storage_bytes: u.storage_bytes,
        }
    }
}

#[utoipa::path(get, path = "/usage", tag = "Usage", summary = "What the caller's instance used, per day",
    params(("since" = Option<String>, Query, description = "The first day (YYYY-MM-DD, UTC); default the last 30 days.")),
    responses((status = 200, description = "The instance's usage per day: the books its operator bills from.", body = InstanceUsage),
        (status = 400, description = "`since` is not a day.", body = super::openapi::schemas::Message)))]
async fn usage(State(ctx): State<ApiContext>, caller: PublicCaller, AppQuery(q): AppQuery<UsageQuery>) -> ApiResult<Json<InstanceUsage>> {
    let since = crate::limits::usage::since_day(q.since.as_deref()).map_err(ApiError::bad)?;
    let books = &ctx.limits.usage;
    if let Err(e) = books.flush().await {
        tracing::warn!(error = %e, "the usage books could not be written before a reading");
    }
    let instance = caller.tenant.customer_id();
    let rows = books.control().extension_usage(Some(instance), &since).await?;
    let mut total = DayUsage::default();
    rows.iter().for_each(|r| total.add(&r.usage));
    Ok(Json(InstanceUsage {
        instance: instance.to_string(),
        since,
        days: rows.into_iter().map(|r| UsageDay::new(r.day, r.usage)).collect(),
        total: UsageDay::new(String::new(), total),
    }))
}

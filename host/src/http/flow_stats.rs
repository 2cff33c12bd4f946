//! A flow's counts over a period (Public Api credential of the instance), what the console draws
//! on the flow's diagram and in the list of flows:
//!
//! `GET /flows/{name}/stats?since=&until=&version=` answers, for the runs started in
//! `since..until` (milliseconds since 1970; default the 7 days up to now): `runs` by state
//! (`started`, `running`, `waiting`, `done`, `failed`, of any version), `lastRunAt` (the newest
//! run, ever), and per node of `version` (default the flow's current one; labels as in a run's
//! trace, `node 2 else 1`) how many runs `entered` it and which way they went on: `next`, `else`
//! (a false condition's branch), `end` (the run ended there as it should: a false condition
//! without `else`), `failed`, `wait`. 404 for an unknown flow; 400 for a period that ends before
//! it starts.

use axum::extract::State;
use axum::routing::get;
use axum::{Json, Router};
use serde::{Deserialize, Serialize};
use utoipa::ToSchema;

use super::error::{ApiError, ApiResult};
use super::extract::{AppPath, AppQuery, PublicCaller};
use super::flows::time;
use super::ApiContext;
use crate::flows::{self, Took};
use crate::store::tenant::RunState;

/// The period counted when the call names none.
const DEFAULT_PERIOD_MS: i64 = 7 * 24 * 3600 * 1000;

#[derive(utoipa::OpenApi)]
#[openapi(paths(stats), components(schemas(FlowStats, RunCounts, NodeCounts)))]
pub(super) struct Doc;

pub(super) fn router() -> Router<ApiContext> {
    Router::new().route("/flows/{name}/stats", get(stats))
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct StatsQuery {
    since: Option<i64>,
    until: Option<i64>,
    version: Option<i64>,
}

/// A flow's counts over a period.
#[derive(Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
struct FlowStats {
    flow: String,
    /// The version whose nodes are counted.
    version: i64,
    since: String,
    until: String,
    since_ms: i64,
    until_ms: i64,
    runs: RunCounts,
    /// When the newest run started, ever (null: never).
    last_run_at: Option<String>,
    last_run_at_ms: Option<i64>,
    /// The nodes that runs reached, in the flow's order.
    nodes: Vec<NodeCounts>,
}

/// The runs started in the period, by their state now.
#[derive(Serialize, ToSchema, Default)]
struct RunCounts {
    started: i64,
    running: i64,
    waiting: i64,
    done: i64,
    failed: i64,
}

/// How many runs reached a node, and which way they went on from it.
#[derive(Serialize, ToSchema, Default)]
struct NodeCounts {
    /// As a run's trace names it: `node 2`, `node 2 else 1`.
    node: String,
    entered: i64,
    next: i64,
    #[serde(rename = "else")]
    else_: i64,
    end: i64,
    failed: i64,
    wait: i64,
}

#[utoipa::path(get, path = "/flows/{name}/stats", tag = "Flows", summary = "A flow's counts over a period, per state and per node",
    params(("since" = Option<i64>, Query, description = "Runs started from this time (milliseconds since 1970); default 7 days before `until`."),
        ("until" = Option<i64>, Query, description = "Runs started before this time (milliseconds); default now."),
        ("version" = Option<i64>, Query, description = "The version whose nodes are counted; default the current one.")),
    responses((status = 200, description = "The counts.", body = FlowStats),
        (status = 400, description = "The period ends before it starts.", body = super::openapi::schemas::Message),
        (status = 404, description = "No such flow.")))]
async fn stats(
    State(ctx): State<ApiContext>,
    caller: PublicCaller,
    AppPath(name): AppPath<String>,
    AppQuery(q): AppQuery<StatsQuery>,
) -> ApiResult<Json<FlowStats>> {
    let t = &caller.tenant;
    let found = flows::find(t, &name).await?.ok_or(ApiError::NotFound)?;
    let until = q.until.unwrap_or_else(|| ctx.clock.now_millis().saturating_add(1));
    let since = q.since.unwrap_or(until.saturating_sub(DEFAULT_PERIOD_MS));
    if since >= until {
        return Err(ApiError::bad(format!("since ({since}) must be before until ({until})")));
    }
    let version = q.version.unwrap_or(found.version);
    let mut runs = RunCounts::default();
    for (state, count) in t.db.flow_run_counts(&name, since, until).await? {
        runs.started += count;
        *match state {
            RunState::Running => &mut runs.running,
            RunState::Waiting => &mut runs.waiting,
            RunState::Done => &mut runs.done,
            RunState::Failed => &mut runs.failed,
        } += count;
    }
    let mut nodes: Vec<NodeCounts> = Vec::new();
    for counted in t.db.flow_node_counts(&name, version, since, until).await? {
        let index = match nodes.iter().position(|n| n.node == counted.node) {
            Some(index) => index,
            None => {
                nodes.push(NodeCounts { node: counted.node.clone(), ..NodeCounts::default() });
                nodes.len() - 1
            }
        };
        let node = &mut nodes[index];
        node.entered += counted.count;
        // An entry the words do not know (none is written) counts as entered only.
        if let Some(took) = Took::parse(&counted.took) {
            *match took {
                Took::Next => &mut node.next,
                Took::Else => &mut node.else_,
                Took::End => &mut node.end,
                Took::Failed => &mut node.failed,
                Took::Wait => &mut node.wait,
            } += counted.count;
        }
    }
    nodes.sort_by_key(|n| place(&n.node));
    let last = t.db.flow_last_run(&name).await?;
    Ok(Json(FlowStats {
        flow: name,
        version,
        since: time(t, since),
        until: time(t, until),
        since_ms: since,
        until_ms: until,
        runs,
        last_run_at: last.map(|at| time(t, at)),
        last_run_at_ms: last,
        nodes,
    }))
}

/// A node's label as its place in the flow (`node 2 else 1` is `[2, 1]`), for the flow's order.
fn place(label: &str) -> Vec<u64> {
    label.split(' ').filter_map(|word| word.parse().ok()).collect()
}

#[cfg(test)]
mod tests {
    #[test]
    fn nodes_sort_in_the_flow_s_order() {
        let mut labels = vec!["node 10", "node 2 else 1", "node 2", "node 1", "node 2 else 1 else 3"];
        labels.sort_by_key(|l| super::place(l));
        assert_eq!(labels, ["node 1", "node 2", "node 2 else 1", "node 2 else 1 else 3", "node 10"]);
    }
}

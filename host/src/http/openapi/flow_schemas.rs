//! The shapes of the flows API (`http/flows.rs`, `http/flow_runs.rs`), described for the OpenAPI
//! document; `schemas.rs` names them with the rest.

use serde::Serialize;
use serde_json::Value as Json;
use utoipa::ToSchema;

/// A flow: its trigger and nodes. The format is the one docs/flows.md gives; this document leaves it
/// open so that a flow written for a later version still reads here.
#[allow(dead_code)] // Described only.
#[derive(Serialize, ToSchema)]
pub struct Flow {
    /// The flow's name (the path's).
    pub name: Option<String>,
    /// `api` (saved through this API) or `definition` (the operator's instance definition).
    pub source: Option<String>,
    pub version: Option<u64>,
    #[schema(value_type = Object)]
    pub trigger: Json,
    #[schema(value_type = Vec<Object>)]
    pub nodes: Json,
    /// A scheduled flow's next and last firing (`GET /flows/{name}` only); null until a
    /// scheduler has seen the flow (within a few seconds).
    pub scheduled: Option<FlowSchedule>,
}

/// When a scheduled flow fires next, and how its last firing went.
#[derive(Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct FlowSchedule {
    pub next_at: String,
    pub last_firing: Option<FlowFiring>,
}

/// A scheduled flow's firing: the recipients its sweep has started runs for so far.
#[derive(Serialize, ToSchema)]
pub struct FlowFiring {
    pub at: String,
    pub recipients: i64,
    /// Whether the sweep has gone through the whole target group.
    pub done: bool,
}

/// One run of a flow for one recipient.
#[derive(Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct FlowRun {
    /// 32 lowercase hex digits: the start's time in milliseconds (12), then 80 random bits. Runs
    /// started later have ids that sort after.
    pub id: String,
    pub flow: String,
    /// The version of the flow the run follows.
    pub version: i64,
    /// The recipient's Recipient Id; null when the recipient was deleted since.
    #[schema(value_type = Value)]
    pub recipient_id: Json,
    pub trigger: String,
    /// How many flows started one another to start this one (0: an event, a call or a schedule).
    pub depth: i64,
    /// `running`, `waiting`, `done` or `failed`.
    pub state: String,
    pub outcome: Option<String>,
    pub started_at: String,
    pub started_at_ms: i64,
    pub updated_at: String,
    pub resume_at: Option<String>,
    /// The nodes the run went through (`GET /flows/{name}/runs/{runId}` only).
    #[schema(value_type = Option<Vec<Object>>)]
    #[serde(skip_serializing_if = "Option::is_none")]
    pub trace: Option<Vec<Json>>,
    /// The flow as this run follows it (`GET /flows/{name}/runs/{runId}` only), for drawing its
    /// path on the version it ran.
    #[schema(value_type = Option<Object>)]
    #[serde(skip_serializing_if = "Option::is_none")]
    pub definition: Option<Json>,
}

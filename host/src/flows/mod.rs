//! Flows of an instance: the operator's (in the model, `[[model.flows]]`) and its people's
//! (through the API, in the instance's store), and the checks a flow passes against the
//! instance's assets and extensions. The format and the checks the model alone makes are in
//! `model::flow`.
//!
//! Decisions: a flow may name an extension or a template that is not uploaded yet (it is
//! accepted; a run that reaches it records that it is missing and ends), but not an extension of
//! another kind (a step that is a condition) nor a Context Parameter Schema that does not exist.
//! A flow's name is the operator's or the instance's: the API cannot replace or delete one the
//! instance definition ships (409).

pub mod context;
pub mod engine;
mod nodes;
mod runner;
pub mod schedule;
pub mod send;
mod sweep;

pub use engine::FlowEngine;
pub use nodes::Took;

/// The name of the queue's jobs that run flows (a run's next stretch, a sweep's batch), as the
/// store keeps it.
pub const JOB_KIND: &str = "flow";

use crate::assets::{MediaArea, RelPath};
use crate::model::event_graph::event_cycle;
use crate::model::flow::{each_node, problems, Flow, NodeKind};
use crate::runtime::ExtensionKind;
use crate::store::StoreResult;
use crate::tenants::Tenant;

/// Where a flow comes from.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Source {
    /// The operator's instance definition.
    Definition,
    /// The instance's API.
    Api,
}

impl Source {
    pub fn name(self) -> &'static str {
        match self {
            Source::Definition => "definition",
            Source::Api => "api",
        }
    }
}

/// A flow of the instance, with where it comes from and its version (API flows count their
/// changes; the operator's follow the instance's definition).
#[derive(Debug, Clone)]
pub struct InstanceFlow {
    pub flow: Flow,
    pub source: Source,
    pub version: i64,
    pub updated_at: Option<i64>,
}

/// Every flow of the instance: the operator's first, then the API's, by name.
pub async fn all(tenant: &Tenant) -> StoreResult<Vec<InstanceFlow>> {
    let mut out: Vec<InstanceFlow> = tenant
        .model
        .def
        .flows
        .iter()
        .map(|f| InstanceFlow { flow: f.clone(), source: Source::Definition, version: 1, updated_at: None })
        .collect();
    for stored in tenant.db.flows().await?.iter() {
        match serde_json::from_str::<Flow>(&stored.definition) {
            Ok(mut flow) => {
                flow.name = stored.name.clone();
                out.push(InstanceFlow { flow, source: Source::Api, version: stored.version, updated_at: Some(stored.updated_at) });
            }
            // Written by this code after validation: a row that does not read is a fault, logged,
            // and the flow is left out rather than failing every listing.
            Err(e) => tracing::error!(flow = %stored.name, error = %e, "a stored flow does not read"),
        }
    }
    Ok(out)
}

/// The flow `name` of the instance, if any.
pub async fn find(tenant: &Tenant, name: &str) -> StoreResult<Option<InstanceFlow>> {
    Ok(all(tenant).await?.into_iter().find(|f| f.flow.name == name))
}

/// Every problem of `flow` for this instance: the model's, then its assets' and extensions'.
pub async fn check(flow: &Flow, tenant: &Tenant, media: &MediaArea) -> StoreResult<Vec<String>> {
    let mut out = problems(flow, &tenant.model);
    let others = all(tenant).await?;
    if let Some(cycle) = event_cycle(flow, &others.iter().map(|f| &f.flow).collect::<Vec<_>>()) {
        out.push(cycle);
    }
    if let Some(schema) = &flow.context_schema {
        if context::schema_bytes(tenant, media, schema).await.is_none() {
            out.push(format!("unknown Context Parameter Schema '{schema}' (upload it with the Assets API first)"));
        }
    }
    let mut wanted = Vec::new();
    each_node(&flow.nodes, "node", 0, &mut |at, node| match node.kind() {
        Ok(NodeKind::Step(id)) => wanted.push((at.to_string(), id.to_string(), ExtensionKind::Step)),
        Ok(NodeKind::Condition(c, _)) => {
            if let Some(id) = &c.extension {
                wanted.push((at.to_string(), id.clone(), ExtensionKind::Condition));
            }
        }
        _ => {}
    });
    for (at, id, kind) in wanted {
        let Ok(path) = RelPath::parse("extension", &format!("{id}.wasm")) else { continue };
        if let Some(record) = tenant.db.extension(&path.as_text()).await? {
            if record.kind() != Some(kind) {
                out.push(format!("{at}: extension '{id}' is a {} extension, not a {kind}", record.kind));
            }
        }
    }
    Ok(out)
}

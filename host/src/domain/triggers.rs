//! What happens after a recipient changes: flows start. The domain does not know flows (they
//! need the queue and the runtime, which need the domain): `crate::flows` implements `Triggers`,
//! and whoever records an event or creates a recipient outside a REST handler (an extension's
//! host functions, a flow's own nodes) tells it through this trait.

use std::sync::Arc;

use futures_util::future::BoxFuture;

use crate::tenants::Tenant;

/// The deepest chain of events that start flows that achieve events: a flow started at this
/// depth cannot achieve another event (its run stops with the reason), so a cycle ends.
pub const MAX_CHAIN_DEPTH: i64 = 8;

/// The most runs one outside happening (an API call, a recipient swept by a schedule, a monitor's
/// alert) can start through chained events, across the whole chain. Depth alone does not bound
/// it: k flows that each achieve the event that triggers them all would start k^8 runs.
pub const MAX_CHAIN_RUNS: i64 = 100;

/// Where a call or a run stands in a chain of events: how many chained events led to it, and
/// the chain it belongs to (the id of the first run the outside happening started; none for a
/// call outside flow runs). The runs that an event achieved here starts go one deeper in the
/// same chain and count against its `MAX_CHAIN_RUNS`.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Lineage {
    pub depth: i64,
    pub chain: Option<Arc<str>>,
}

impl Lineage {
    /// An outside call's: no chain yet, depth 0.
    pub fn outside() -> Lineage {
        Lineage::default()
    }

    /// Of a run at `depth` in `chain` (its own id when it is the first of its chain).
    pub fn of_run(depth: i64, chain: &str) -> Lineage {
        Lineage { depth, chain: Some(Arc::from(chain)) }
    }

    /// What an event achieved here passes to the runs it starts.
    pub fn next(&self) -> Lineage {
        Lineage { depth: self.depth + 1, chain: self.chain.clone() }
    }
}

/// Something that happened to a recipient, which may start flows.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Happening<'a> {
    EventAchieved(&'a str),
    Created,
}

pub trait Triggers: Send + Sync {
    /// Starts the flows `what` triggers for recipient `key`, where `lineage` says (an outside
    /// call's, or one event down from a run's). Failures are logged: the change itself stands.
    fn happened<'a>(&'a self, tenant: &'a Arc<Tenant>, key: i64, what: Happening<'a>, lineage: Lineage) -> BoxFuture<'a, ()>;
}

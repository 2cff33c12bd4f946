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

/// Something that happened to a recipient, which may start flows.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Happening<'a> {
    EventAchieved(&'a str),
    Created,
}

pub trait Triggers: Send + Sync {
    /// Starts the flows `what` triggers for recipient `key`, `depth` events down a chain (0 for
    /// an outside call). Failures are logged: the change itself stands.
    fn happened<'a>(&'a self, tenant: &'a Arc<Tenant>, key: i64, what: Happening<'a>, depth: i64) -> BoxFuture<'a, ()>;
}

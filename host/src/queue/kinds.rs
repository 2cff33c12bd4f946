//! The kinds of queued work besides asynchronous http calls (which `execute.rs` runs itself),
//! each registered under the name the store keeps with its jobs (`JobPayload::Work`): flow runs
//! and sweeps (`crate::flows`), monitor runs (`crate::monitors`), import stretches
//! (`import_stretch.rs`, here, since `crate::imports` lies below the queue). The modules above the
//! queue register once it exists (the flows need the queue to start runs), so the registry is
//! shared and filled after the start. A job of a kind no one registered (written by a newer node
//! sharing the database) fails, saying so.

use std::collections::HashMap;
use std::sync::{Arc, RwLock};

use futures_util::future::BoxFuture;

use crate::store::jobs::{ClaimedJob, JobOutcome};

/// What runs the jobs of one kind.
pub trait JobKind: Send + Sync {
    /// Runs `job`, whose `payload` is the JSON its kind wrote, until it ends, fails or leaves
    /// continuations for later.
    fn run<'a>(&'a self, job: &'a ClaimedJob, payload: &'a str) -> BoxFuture<'a, JobOutcome>;
}

/// The kinds this node runs, by name.
#[derive(Clone, Default)]
pub struct JobKinds(Arc<RwLock<HashMap<&'static str, Arc<dyn JobKind>>>>);

impl JobKinds {
    /// Runs the jobs named `name` with `kind` from now on.
    pub fn register(&self, name: &'static str, kind: Arc<dyn JobKind>) {
        self.0.write().unwrap_or_else(std::sync::PoisonError::into_inner).insert(name, kind);
    }

    pub(super) fn get(&self, name: &str) -> Option<Arc<dyn JobKind>> {
        self.0.read().unwrap_or_else(std::sync::PoisonError::into_inner).get(name).cloned()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    struct Ends;

    impl JobKind for Ends {
        fn run<'a>(&'a self, _job: &'a ClaimedJob, _payload: &'a str) -> BoxFuture<'a, JobOutcome> {
            Box::pin(async { JobOutcome::Ended })
        }
    }

    #[test]
    fn a_kind_is_found_by_its_name_once_registered_by_any_clone() {
        let kinds = JobKinds::default();
        let registered_later = kinds.clone();
        assert!(kinds.get("flow").is_none());
        registered_later.register("flow", Arc::new(Ends));
        assert!(kinds.get("flow").is_some(), "the queue's copy sees what the server registered after the start");
        assert!(kinds.get("flow-step").is_none());
    }
}

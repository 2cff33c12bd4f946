//! The queue's own kind of work for bulk imports: a stretch of an import (`crate::imports`), given
//! a third of the execution limit; what is left goes on in a job of its own, due when the import
//! says (it gives way to the API and to other instances between stretches).

use std::sync::Arc;
use std::time::Duration;

use futures_util::future::BoxFuture;

use super::kinds::JobKind;
use crate::clock::Clock;
use crate::connections::InFlight;
use crate::imports::{self, ImportWork, Stretch};
use crate::runtime::Runtime;
use crate::store::jobs::{ClaimedJob, JobOutcome, JobPayload, Later, NewJob};
use crate::tenants::Tenants;

pub(super) struct ImportStretches {
    pub tenants: Arc<Tenants>,
    pub runtime: Arc<Runtime>,
    pub api_calls: Arc<InFlight>,
    pub execution_limit: Duration,
    pub clock: Arc<dyn Clock>,
    /// The queue's threads' steps below the API's priority, which an import's database backend
    /// takes too.
    pub nice: u8,
}

impl JobKind for ImportStretches {
    fn run<'a>(&'a self, job: &'a ClaimedJob, payload: &'a str) -> BoxFuture<'a, JobOutcome> {
        Box::pin(async move {
            let work = ImportWork {
                triggers: self.runtime.triggers(),
                api_calls: &self.api_calls,
                // Well within the execution limit, which would end the stretch as failed.
                budget: self.execution_limit / 3,
                backend_nice: self.nice,
            };
            match imports::run_stretch(&work, &self.tenants, &job.customer_id, payload).await {
                Stretch::Over => JobOutcome::Ended,
                Stretch::Again(after) => {
                    let job = NewJob {
                        id: super::new_queue_id(),
                        customer_id: job.customer_id.clone(),
                        extension: job.extension.clone(),
                        accepted_at: 0,
                        payload: JobPayload::work(imports::JOB_KIND, payload.to_string()),
                    };
                    JobOutcome::Continue(vec![Later { job, due_at: self.clock.now_millis() + after.as_millis() as i64 }])
                }
            }
        })
    }
}

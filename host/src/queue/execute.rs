//! One queued execution: the instance and extension looked up again (they may have changed or
//! gone since the call was accepted), the captured request handed to the extension with the
//! queue's execution limit as deadline, and its whole response kept.

use std::sync::Arc;
use std::time::Duration;

use http_body_util::{BodyExt, Limited};

use crate::clock::Clock;
use crate::runtime::{Call, CallFailure, Runtime};
use crate::store::jobs::{CapturedRequest, ClaimedJob, JobOutcome, JobPayload, Later, NewJob, StoredResponse};
use crate::tenants::{Activation, Tenants};

/// The largest response an asynchronous execution may leave (as large as a request may be).
const MAX_RESPONSE_BYTES: usize = crate::limits::MAX_PAYLOAD_BYTES;

pub(super) struct Executor {
    pub tenants: Arc<Tenants>,
    pub runtime: Arc<Runtime>,
    pub execution_limit: Duration,
    pub flows: super::FlowJobs,
    pub api_calls: Arc<crate::connections::InFlight>,
    /// The server's clock, which continuations are due by.
    pub clock: Arc<dyn Clock>,
}

impl Executor {
    pub async fn execute(&self, job: &ClaimedJob) -> JobOutcome {
        self.api_calls.give_way(super::GIVE_WAY_AT_MOST).await;
        match &job.payload {
            JobPayload::Http(_) => self.execute_http(job).await,
            JobPayload::Flow(payload) => match self.flows.get() {
                Some(runner) => runner.run(job, payload).await,
                // Started before the flows were wired (never, in a server): queued again later.
                None => JobOutcome::Failed("flow runs are not available on this node".into()),
            },
            JobPayload::Monitor(_) => super::monitor_run::execute(&self.tenants, &self.runtime, self.execution_limit, job).await,
            JobPayload::Import(payload) => self.execute_import(job, payload).await,
            JobPayload::Unsupported(kind) => {
                JobOutcome::Failed(format!("a job of kind '{kind}', which this version of Herald does not run"))
            }
        }
    }

    /// A stretch of an import; what is left goes on in a job of its own (`crate::imports`).
    async fn execute_import(&self, job: &ClaimedJob, payload: &str) -> JobOutcome {
        let work = crate::imports::ImportWork {
            triggers: self.runtime.triggers(),
            api_calls: &self.api_calls,
            // Well within the execution limit, which would end the stretch as failed.
            budget: self.execution_limit / 3,
        };
        match crate::imports::run_stretch(&work, &self.tenants, &job.customer_id, payload).await {
            crate::imports::Stretch::Over => JobOutcome::Ended,
            crate::imports::Stretch::Again(after) => {
                let job = NewJob {
                    id: super::new_queue_id(),
                    customer_id: job.customer_id.clone(),
                    extension: job.extension.clone(),
                    accepted_at: 0,
                    payload: JobPayload::Import(payload.to_string()),
                };
                JobOutcome::Continue(vec![Later { job, due_at: self.clock.now_millis() + after.as_millis() as i64 }])
            }
        }
    }

    async fn execute_http(&self, job: &ClaimedJob) -> JobOutcome {
        let tenant = match self.tenants.activate(&job.customer_id).await {
            Ok(tenant) => tenant,
            Err(Activation::Missing) => return JobOutcome::Failed("the instance no longer exists".into()),
            Err(Activation::Unavailable(_)) => return JobOutcome::Failed("the instance's data could not be opened".into()),
        };
        let extension = match self.runtime.http_extension(&tenant, &job.extension).await {
            Ok(Some(extension)) => extension,
            Ok(None) => return JobOutcome::Failed("the extension no longer exists".into()),
            Err(e) => return JobOutcome::Failed(format!("the extension could not be loaded: {e:#}")),
        };
        let JobPayload::Http(captured) = &job.payload else { unreachable!("execute dispatches by kind") };
        let request = match rebuild(captured) {
            Ok(r) => r,
            Err(e) => return JobOutcome::Failed(format!("the stored request is not valid: {e}")),
        };
        let deadline = self.runtime.deadline_within(&extension.config, self.execution_limit);
        let call =
            Call { extension, id: job.extension.clone(), tenant, deadline, context: None, lineage: Default::default(), journal: None };
        match self.runtime.call_http(call, request).await {
            Ok(response) => {
                let (parts, body) = response.into_parts();
                match Limited::new(body, MAX_RESPONSE_BYTES).collect().await {
                    Ok(body) => JobOutcome::Done(StoredResponse {
                        status: parts.status.as_u16(),
                        headers: parts
                            .headers
                            .iter()
                            .map(|(n, v)| (n.as_str().to_string(), String::from_utf8_lossy(v.as_bytes()).into_owned()))
                            .collect(),
                        body: body.to_bytes().to_vec(),
                    }),
                    Err(e) => JobOutcome::Failed(format!("the response could not be read: {e}")),
                }
            }
            Err(CallFailure::Deadline) => JobOutcome::Deadline,
            Err(failure) => JobOutcome::Failed(failure.to_string()),
        }
    }
}

fn rebuild(captured: &CapturedRequest) -> Result<hyper::Request<axum::body::Body>, axum::http::Error> {
    let mut request = hyper::Request::builder().method(captured.method.as_str()).uri(captured.uri.as_str());
    for (name, value) in &captured.headers {
        request = request.header(name.as_str(), value.as_str());
    }
    request.body(axum::body::Body::from(captured.body.clone()))
}

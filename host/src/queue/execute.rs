//! One queued execution: the instance and extension looked up again (they may have changed or
//! gone since the call was accepted), the captured request handed to the extension with the
//! queue's execution limit as deadline, and its whole response kept.

use std::sync::Arc;
use std::time::Duration;

use http_body_util::{BodyExt, Limited};

use super::kinds::JobKinds;
use crate::runtime::{Call, CallFailure, Runtime};
use crate::store::jobs::{CapturedRequest, ClaimedJob, JobOutcome, JobPayload, StoredResponse};
use crate::tenants::{Activation, Tenants};

/// The largest response an asynchronous execution may leave (as large as a request may be).
const MAX_RESPONSE_BYTES: usize = crate::limits::MAX_PAYLOAD_BYTES;

pub(super) struct Executor {
    pub tenants: Arc<Tenants>,
    pub runtime: Arc<Runtime>,
    pub execution_limit: Duration,
    /// The other kinds of work (flow runs, monitor runs, import stretches).
    pub kinds: JobKinds,
    pub api_calls: Arc<crate::connections::InFlight>,
}

impl Executor {
    pub async fn execute(&self, job: &ClaimedJob) -> JobOutcome {
        self.api_calls.give_way(super::GIVE_WAY_AT_MOST).await;
        match &job.payload {
            JobPayload::Http(_) => self.execute_http(job).await,
            JobPayload::Work { kind, json } => match self.kinds.get(kind) {
                Some(runner) => runner.run(job, json).await,
                None => JobOutcome::Failed(format!("a job of kind '{kind}', which this node does not run")),
            },
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

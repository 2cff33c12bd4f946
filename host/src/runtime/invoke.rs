//! One call of an http extension: a fresh store for the caller's instance, the request handed to
//! the guest's `wasi:http/incoming-handler`, and its response returned as it made it. The guest
//! yields to other calls at every epoch tick and is ended at its deadline. A trap, a panic,
//! exhausted memory or the deadline end that call only.
//!
//! The guest is driven by the caller's own task until it answers: a guest that writes a short
//! body right after its head has usually finished by then, so head and body leave in one write
//! and no task is spawned. What remains of a guest still running (a long body, its log) is
//! spawned, and so is the whole execution if the caller goes away first: an execution never
//! stops halfway because its client left.

use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;
use std::time::{Duration, Instant};

use wasmtime::{Store, UpdateDeadline};
use wasmtime_wasi_http::p2::bindings::http::types::Scheme;
use wasmtime_wasi_http::p2::body::HyperOutgoingBody;
use wasmtime_wasi_http::WasiHttpView;

use super::state::CallState;
use super::{Prepared, Runtime};
use crate::store::tenant::ExecutionLog;
use crate::tenants::Tenant;

pub type HttpResponse = hyper::Response<HyperOutgoingBody>;

/// Why a call produced no response.
#[derive(Debug)]
pub enum CallFailure {
    /// The extension ran past its deadline.
    Deadline,
    /// The extension trapped, panicked, ran out of memory, or never answered.
    Failed(String),
}

impl Runtime {
    pub async fn call_http(
        self: &Arc<Self>,
        extension: &Prepared,
        extension_id: &str,
        tenant: Arc<Tenant>,
        request: hyper::Request<axum::body::Body>,
        deadline: Duration,
    ) -> Result<HttpResponse, CallFailure> {
        let mut store = Store::new(self.engine(), CallState::new(tenant, &extension.config, &self.settings));
        store.limiter(|s| &mut s.limits);
        let started = Instant::now();
        // Every tick the guest yields, so one busy extension cannot hold a worker thread; past
        // its deadline it is interrupted.
        store.set_epoch_deadline(1);
        store.epoch_deadline_callback(move |_| {
            if started.elapsed() >= deadline {
                Ok(UpdateDeadline::Interrupt)
            } else {
                Ok(UpdateDeadline::Yield(1))
            }
        });
        let (sender, receiver) = tokio::sync::oneshot::channel();
        let (parts, body) = request.into_parts();
        let body = http_body_util::BodyExt::map_err(body, |e| wasmtime_wasi_http::Error::InternalError(Some(e.to_string())));
        let request = hyper::Request::from_parts(parts, body);
        let prepared = (|| {
            let req = store.data_mut().http().new_incoming_request(Scheme::Http, request)?;
            let out = store.data_mut().http().new_response_outparam(sender)?;
            anyhow::Ok((req, out))
        })()
        .map_err(|e| CallFailure::Failed(format!("{e:#}")))?;
        let (req, out) = prepared;
        let pre = extension.pre.clone();
        let logs = self.logs.clone();
        let extension_name = extension_id.to_string();
        let mut execution = Execution::new(async move {
            let run = async {
                let proxy = pre.instantiate_async(&mut store).await?;
                proxy.wasi_http_incoming_handler().call_handle(&mut store, req, out).await
            };
            // A guest that keeps the CPU is interrupted by the epoch callback; this bounds a guest
            // that waits (on a host call) past its deadline too.
            let result = tokio::time::timeout(deadline + Duration::from_millis(100), run).await;
            let outcome = match &result {
                Err(_) => "deadline".to_string(),
                Ok(Err(_)) if started.elapsed() >= deadline => "deadline".to_string(),
                Ok(Err(e)) => format!("failed: {e:#}"),
                Ok(Ok(())) => "ok".to_string(),
            };
            let succeeded = outcome == "ok";
            let (entry, tenant) = execution_log(&store, &extension_name, started, outcome);
            let output = store.data().stderr.contents();
            // The instance's slot in the pooling allocator comes back now, not after the write.
            drop(store);
            if succeeded {
                logs.keep(tenant, entry);
            } else if let Err(e) = tenant.db.insert_execution_logs(&[entry]).await {
                tracing::warn!(error = %e, "an execution log could not be kept");
            }
            (result, output)
        });
        let mut receiver = receiver;
        let first = tokio::select! {
            biased;
            answer = &mut receiver => First::Answer(answer),
            finished = execution.drive() => First::Finished(finished),
        };
        let finished = match first {
            First::Answer(Ok(answer)) => return answered(answer),
            // The response outparam went away unanswered: how the execution ended says why.
            First::Answer(Err(_)) => execution.drive().await,
            First::Finished(finished) => match receiver.try_recv() {
                // It answered, then finished before this task looked.
                Ok(answer) => return answered(answer),
                Err(_) => finished,
            },
        };
        let (result, stderr) = finished;
        let stderr = String::from_utf8_lossy(&stderr).into_owned();
        match result {
            Err(_) => Err(CallFailure::Deadline),
            Ok(Err(e)) if started.elapsed() >= deadline => {
                tracing::debug!(error = %e, "extension interrupted at its deadline");
                Err(CallFailure::Deadline)
            }
            Ok(Err(e)) => Err(CallFailure::Failed(format!("{e:#} {stderr}"))),
            Ok(Ok(())) => Err(CallFailure::Failed(format!("the extension never answered {stderr}"))),
        }
    }

    pub fn engine(&self) -> &wasmtime::Engine {
        &self.engine
    }
}


type Answer = Result<HttpResponse, wasmtime_wasi_http::p2::bindings::http::types::ErrorCode>;

/// Which came first: the guest's answer, or the end of its execution.
enum First<A, F> {
    Answer(A),
    Finished(F),
}

fn answered(answer: Answer) -> Result<HttpResponse, CallFailure> {
    answer.map_err(|code| CallFailure::Failed(format!("the extension answered with an error: {code:?}")))
}

/// A guest execution polled by the caller's task; if it has not finished when dropped, the rest
/// of it is spawned on the runtime.
struct Execution<F: Future + Send + 'static> {
    future: Option<Pin<Box<F>>>,
    runtime: tokio::runtime::Handle,
}

impl<F: Future + Send + 'static> Execution<F>
where
    F::Output: Send,
{
    fn new(future: F) -> Self {
        Execution { future: Some(Box::pin(future)), runtime: tokio::runtime::Handle::current() }
    }

    /// Runs the execution to its end here (cancel-safe: dropping this future leaves the rest to
    /// `Drop`).
    async fn drive(&mut self) -> F::Output {
        let output = self.future.as_mut().expect("an execution is driven once").await;
        self.future = None;
        output
    }
}

impl<F: Future + Send + 'static> Drop for Execution<F> {
    fn drop(&mut self) {
        if let Some(rest) = self.future.take() {
            self.runtime.spawn(async move {
                rest.await;
            });
        }
    }
}

/// What the execution left (log lines, captured output) for the instance's operator.
fn execution_log(store: &Store<CallState>, extension: &str, started: Instant, outcome: String) -> (ExecutionLog, Arc<Tenant>) {
    let state = store.data();
    let entry = ExecutionLog {
        extension: extension.to_string(),
        at: crate::store::now_millis(),
        duration_ms: started.elapsed().as_millis() as i64,
        outcome,
        log: state.log.clone(),
        stdout: String::from_utf8_lossy(&state.stdout.contents()).into_owned(),
        stderr: String::from_utf8_lossy(&state.stderr.contents()).into_owned(),
    };
    (entry, Arc::clone(&state.tenant))
}

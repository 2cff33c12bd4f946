//! The operator's metrics, through the `metrics` facade and rendered in Prometheus's text format
//! by `metrics-exporter-prometheus` (`/metrics` on the operator listener). Labels are bounded:
//! route templates (never raw paths), status classes, instance ids, extension kinds and outcomes.
//!
//! Counted where things happen: requests (`track`, a middleware on both public listeners),
//! extension executions (`runtime::call`), flow runs that end (`flows`). Sampled when scraped:
//! the queue's depth and oldest job, each instance's calls today against its daily cap, and its
//! database connections (`sample`).

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::OnceLock;
use std::time::Instant;

use axum::extract::{MatchedPath, Request};
use axum::middleware::Next;
use axum::response::Response;
use metrics::{counter, gauge, histogram};
use metrics_exporter_prometheus::{Matcher, PrometheusBuilder, PrometheusHandle};

/// Seconds: from a fast API call to an extension at its longest deadline.
const BUCKETS: [f64; 14] = [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 30.0, 300.0];

/// Whether a recorder is installed (an operator listener exists): without one, requests are not
/// even timed.
static RECORDING: AtomicBool = AtomicBool::new(false);

/// Whether this process records metrics (a server with an operator listener started here).
pub fn recording() -> bool {
    RECORDING.load(Ordering::Relaxed)
}

/// The process's recorder (one per process: every server in it reports there).
pub fn handle() -> &'static PrometheusHandle {
    static HANDLE: OnceLock<PrometheusHandle> = OnceLock::new();
    HANDLE.get_or_init(|| {
        RECORDING.store(true, Ordering::Relaxed);
        // A gauge not set for two minutes goes: an instance put to sleep stops being sampled,
        // and its connections and daily count would otherwise stay at their last value.
        let builder = PrometheusBuilder::new()
            .set_buckets_for_metric(Matcher::Suffix("_seconds".into()), &BUCKETS)
            .expect("buckets are not empty")
            .idle_timeout(metrics_util::MetricKindMask::GAUGE, Some(std::time::Duration::from_secs(120)));
        let recorder = builder.build_recorder();
        let handle = recorder.handle();
        if metrics::set_global_recorder(recorder).is_err() {
            tracing::warn!("another metrics recorder is installed: /metrics shows nothing");
        }
        handle
    })
}

/// The instance a response was for, left by the admission (`http::guard`) for `track`.
#[derive(Debug, Clone)]
pub struct InstanceLabel(pub String);

/// Counts a request by route template, status class and instance, and times it.
pub async fn track(request: Request, next: Next) -> Response {
    if !RECORDING.load(Ordering::Relaxed) {
        return next.run(request).await;
    }
    let route = request.extensions().get::<MatchedPath>().map_or("unmatched", |p| p.as_str()).to_string();
    timed(route, next.run(request)).await
}

/// `track` for a call matched outside the router (`http::extension_calls`), by its route
/// template; the caller checks `recording()` first.
///
/// A future of its own rather than an `async fn`: an `async fn` that takes a future and awaits
/// it keeps its argument's room beside the room of the future it awaits, so the extension call's
/// answer, boxed at every call, was twice its own size where metrics are shown.
pub fn timed<F: std::future::Future<Output = Response>>(route: String, answer: F) -> Timed<F> {
    Timed { answer, timing: Some((route, Instant::now())) }
}

pin_project_lite::pin_project! {
    /// `timed`'s answer: the wrapped one, counted and timed when it is ready.
    pub struct Timed<F> {
        #[pin]
        answer: F,
        timing: Option<(String, Instant)>,
    }
}

impl<F: std::future::Future<Output = Response>> std::future::Future for Timed<F> {
    type Output = Response;

    fn poll(self: std::pin::Pin<&mut Self>, cx: &mut std::task::Context<'_>) -> std::task::Poll<Response> {
        let this = self.project();
        let response = std::task::ready!(this.answer.poll(cx));
        if let Some((route, started)) = this.timing.take() {
            let instance = response.extensions().get::<InstanceLabel>().map_or_else(|| "-".to_string(), |l| l.0.clone());
            let status = format!("{}xx", response.status().as_u16() / 100);
            counter!("herald_http_requests_total", "route" => route.clone(), "status" => status, "instance" => instance).increment(1);
            histogram!("herald_http_request_duration_seconds", "route" => route).record(started.elapsed().as_secs_f64());
        }
        std::task::Poll::Ready(response)
    }
}

/// One execution of an extension ended: `outcome` is a word of `runtime::outcome`; `seconds` its
/// wall time, `cpu_us` the processor time it used and `wait_us` the time it waited for
/// a turn of the guest threads (`runtime::fair`). The processor's and the wait's totals are the
/// node's, by kind: per instance they are the usage books' (a series per instance would not stay
/// bounded on a node of 10,000 instances).
pub fn extension_execution(kind: &'static str, outcome: &'static str, instance: &str, seconds: f64, cpu_us: u64, wait_us: u64) {
    if !RECORDING.load(Ordering::Relaxed) {
        return;
    }
    counter!("herald_extension_executions_total", "kind" => kind, "outcome" => outcome, "instance" => instance.to_string()).increment(1);
    histogram!("herald_extension_execution_duration_seconds", "kind" => kind).record(seconds);
    counter!("herald_extension_cpu_microseconds_total", "kind" => kind).increment(cpu_us);
    counter!("herald_extension_turn_wait_microseconds_total", "kind" => kind).increment(wait_us);
}

/// A flow run ended (`done` or `failed`).
pub fn flow_run_ended(instance: &str, outcome: &'static str) {
    if !RECORDING.load(Ordering::Relaxed) {
        return;
    }
    counter!("herald_flow_runs_ended_total", "instance" => instance.to_string(), "outcome" => outcome).increment(1);
}

/// What is sampled at a scrape.
pub struct Sample {
    pub queued_jobs: i64,
    pub oldest_job_age_seconds: f64,
    /// (instance, calls used today, daily cap)
    pub daily: Vec<(String, u64, u64)>,
    /// (open instance, open connections, idle ones): SQLite, where each has its own.
    pub connections: Vec<(String, u32, usize)>,
    /// Known and open instances, activations and evictions so far.
    pub instances: crate::tenants::TenantsStats,
    /// The node's pool for the instances (PostgreSQL).
    pub node_pool: Option<NodePoolSample>,
}

/// The node's PostgreSQL pool for the instances at a scrape.
pub struct NodePoolSample {
    pub open: u32,
    pub idle: usize,
    /// Uses that waited for a connection (or their instance's share), and those that gave up.
    pub waited: u64,
    pub timed_out: u64,
    pub wait_seconds: f64,
    /// Point reads answered several to a statement.
    pub gathered_reads: u64,
}

pub fn record(sample: &Sample) {
    gauge!("herald_queue_jobs_queued").set(sample.queued_jobs as f64);
    gauge!("herald_queue_oldest_job_age_seconds").set(sample.oldest_job_age_seconds);
    for (instance, used, cap) in &sample.daily {
        gauge!("herald_daily_calls", "instance" => instance.clone()).set(*used as f64);
        gauge!("herald_daily_cap", "instance" => instance.clone()).set(*cap as f64);
    }
    let instances = &sample.instances;
    gauge!("herald_instances", "state" => "known").set(instances.known as f64);
    gauge!("herald_instances", "state" => "open").set(instances.open as f64);
    counter!("herald_instance_activations_total").absolute(instances.activations);
    counter!("herald_instance_evictions_total").absolute(instances.evictions);
    counter!("herald_instance_activation_failures_total").absolute(instances.failed_activations);
    if let Some(pool) = &sample.node_pool {
        gauge!("herald_node_pool_connections", "state" => "busy").set(pool.open.saturating_sub(pool.idle as u32) as f64);
        gauge!("herald_node_pool_connections", "state" => "idle").set(pool.idle as f64);
        counter!("herald_node_pool_waits_total").absolute(pool.waited);
        counter!("herald_node_pool_timeouts_total").absolute(pool.timed_out);
        gauge!("herald_node_pool_wait_seconds_total").set(pool.wait_seconds);
        counter!("herald_node_pool_gathered_reads_total").absolute(pool.gathered_reads);
    }
    for (instance, open, idle) in &sample.connections {
        gauge!("herald_db_connections", "instance" => instance.clone(), "state" => "busy").set(open.saturating_sub(*idle as u32) as f64);
        gauge!("herald_db_connections", "instance" => instance.clone(), "state" => "idle").set(*idle as f64);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_timed_answer_holds_the_answer_once() {
        let answer = async {
            // State kept across an await, so that the future is as large as it.
            let kept = [1u8; 4096];
            std::future::ready(()).await;
            Response::new(axum::body::Body::from(kept.iter().map(|&b| usize::from(b)).sum::<usize>().to_string()))
        };
        let alone = std::mem::size_of_val(&answer);
        assert!(alone >= 4096, "{alone} bytes");
        let timed = timed("/r".to_string(), answer);
        let wrapped = std::mem::size_of_val(&timed);
        assert!(wrapped <= alone + 64, "{wrapped} bytes around an answer of {alone}");
        let response = futures_util::FutureExt::now_or_never(timed).expect("ready at once");
        assert_eq!(response.status(), axum::http::StatusCode::OK);
    }
}

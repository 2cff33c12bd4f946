//! One scheduled run of a monitor, a kind of the queue's work (queued by the scheduler, so
//! monitors share the queue's fair worker pool with the instances' other work): the monitor called through the runtime's
//! call path, its report (or failure) kept with its time, and a change of status logged and, when
//! the monitor declares an `alert`, told as an event achieved for a recipient, which starts the
//! flows that event triggers.

use std::sync::Arc;
use std::time::{Duration, Instant};

use futures_util::future::BoxFuture;

use crate::domain::triggers::Happening;
use crate::queue::JobKind;
use crate::runtime::config::Alert;
use crate::runtime::{cut_to_char_boundary, Call, CallFailure, ExtensionKind, Runtime};
use crate::store::jobs::{ClaimedJob, JobOutcome};
use crate::store::tenant::MonitorRun;
use crate::tenants::{Activation, Tenant, Tenants};

/// A status as it is stored and shown.
const HEALTHY: &str = "healthy";
const UNHEALTHY: &str = "unhealthy";
const FAILED: &str = "failed";
/// The longest message kept.
const MAX_MESSAGE: usize = 2048;

/// The queue's runner of monitor jobs: the monitor of the job's extension, called within the
/// queue's execution limit.
pub struct MonitorRuns {
    pub tenants: Arc<Tenants>,
    pub runtime: Arc<Runtime>,
    pub execution_limit: Duration,
}

impl JobKind for MonitorRuns {
    fn run<'a>(&'a self, job: &'a ClaimedJob, _payload: &'a str) -> BoxFuture<'a, JobOutcome> {
        Box::pin(execute(&self.tenants, &self.runtime, self.execution_limit, job))
    }
}

async fn execute(tenants: &Tenants, runtime: &Arc<Runtime>, limit: Duration, job: &ClaimedJob) -> JobOutcome {
    let tenant = match tenants.activate(&job.customer_id).await {
        Ok(tenant) => tenant,
        Err(Activation::Missing) => return JobOutcome::Failed("the instance no longer exists".into()),
        Err(Activation::Unavailable(_)) => return JobOutcome::Failed("the instance's data could not be opened".into()),
    };
    let id = &job.extension;
    let extension = match runtime.extension(&tenant, id, ExtensionKind::Monitor).await {
        Ok(Some(extension)) => extension,
        Ok(None) => return JobOutcome::Failed("the monitor no longer exists".into()),
        Err(e) => return JobOutcome::Failed(format!("the monitor could not be loaded: {e:#}")),
    };
    let alert = extension.config.alert.clone();
    let deadline = runtime.deadline_within(&extension.config, limit);
    let call = Call {
        extension,
        id: id.clone(),
        tenant: Arc::clone(&tenant),
        deadline,
        context: None,
        lineage: Default::default(),
        journal: None,
    };
    let at = runtime.clock().now_millis();
    let started = Instant::now();
    let (status, message) = match runtime.call_monitor(call).await {
        Ok(report) if report.healthy => (HEALTHY, report.message),
        Ok(report) => (UNHEALTHY, report.message),
        Err(CallFailure::Deadline) => (FAILED, format!("deadline: it ran past its deadline ({} ms)", deadline.as_millis())),
        Err(failure) => (FAILED, failure.to_string()),
    };
    let mut message = message;
    cut_to_char_boundary(&mut message, MAX_MESSAGE);
    let run = MonitorRun { extension: id.clone(), at, duration_ms: started.elapsed().as_millis() as i64, status: status.into(), message };
    let previous = match tenant.db.monitor_runs(id, 1).await {
        Ok(runs) => runs.into_iter().next().map(|r| r.status),
        Err(e) => return JobOutcome::Failed(format!("the monitor's history could not be read: {e}")),
    };
    // A first run that is healthy changes nothing anyone waits to hear of.
    let changed = match previous.as_deref() {
        Some(before) => before != status,
        None => status != HEALTHY,
    };
    // The alert goes before the report is kept: whoever sees the run in the history sees its
    // alert's event too.
    if changed {
        tracing::warn!(instance = tenant.customer_id(), monitor = %id, from = previous.as_deref().unwrap_or("none"), to = status, monitor_message = %run.message, "a monitor's status changed");
        if let Some(alert) = alert {
            if let Err(why) = raise(runtime, &tenant, &alert).await {
                tracing::warn!(instance = tenant.customer_id(), monitor = %id, event = %alert.event, "a monitor's alert could not be raised: {why}");
            }
        }
    }
    if let Err(e) = tenant.db.insert_monitor_run(&run).await {
        return JobOutcome::Failed(format!("the monitor's report could not be kept: {e}"));
    }
    JobOutcome::Done(crate::store::jobs::StoredResponse {
        status: 200,
        headers: vec![("content-type".into(), "application/json".into())],
        body: serde_json::json!({"status": status, "message": run.message}).to_string().into_bytes(),
    })
}

/// Achieves the alert's event for its recipient, and starts the flows it triggers.
async fn raise(runtime: &Arc<Runtime>, tenant: &Arc<Tenant>, alert: &Alert) -> Result<(), String> {
    let model = &tenant.model;
    let index = model.def.recipient_id_index();
    let field = &model.def.person_data[index];
    let value = crate::domain::recipients::recipient_id(model, &alert.recipient)?;
    let recipient = crate::domain::recipients::find(tenant, index, &value)
        .await
        .map_err(|e| e.to_string())?
        .ok_or_else(|| format!("no recipient has {} {}", field.name, alert.recipient))?;
    crate::domain::recipients::achieve_event(tenant, recipient.key, &alert.event, runtime.clock().now_utc()).await.map_err(
        |e| match e {
            crate::domain::DomainError::NotFound => format!("the instance defines no event {}", alert.event),
            e => e.to_string(),
        },
    )?;
    if let Some(triggers) = runtime.triggers() {
        triggers.happened(tenant, recipient.key, Happening::EventAchieved(&alert.event), crate::domain::triggers::Lineage::outside()).await;
    }
    Ok(())
}

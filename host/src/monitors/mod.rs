//! The scheduler of monitor extensions. Every node looks now and then at the instances with a
//! monitor due (`monitor_schedules` in the control plane) and at those whose extensions changed
//! (an upload through this node, `Tenants::touch`, registers a new monitor's schedule); when one is due, the node that moves its next time on (`ControlDb::claim_monitor_run`, a
//! compare-and-set) queues its run (`run.rs`, a kind of the queue's work), which the queue's fair worker pool
//! executes like any instance's work, so one instance's monitors cannot delay another's or the
//! API. A run's next time comes after its deadline, so runs of one monitor never overlap. A new
//! monitor, or a new version of one, first runs at its next time after now; runs missed while no
//! node ran are not made up.

mod run;

use std::sync::Arc;
use std::time::Duration;

use tokio::task::JoinHandle;

use crate::clock::Clock;
use crate::queue::{Enqueued, Queue};
use crate::runtime::{stored_config, ExtensionKind, Runtime};
use crate::store::jobs::JobPayload;
use crate::store::monitor_schedules::MonitorSchedule;
use crate::store::ControlDb;
use crate::tenants::{Tenant, Tenants};

pub use run::MonitorRuns;

/// The name of the queue's jobs that run monitors, as the store keeps it.
pub const JOB_KIND: &str = "monitor";

pub struct MonitorScheduler {
    pub tenants: Arc<Tenants>,
    pub runtime: Arc<Runtime>,
    pub queue: Arc<Queue>,
    pub control: ControlDb,
    pub clock: Arc<dyn Clock>,
}

pub fn spawn(scheduler: Arc<MonitorScheduler>, every: Duration) -> JoinHandle<()> {
    let mut lookout = scheduler.tenants.lookout();
    tokio::spawn(async move {
        loop {
            tokio::time::sleep(every).await;
            match scheduler.control.due_monitor_instances(scheduler.clock.now_millis()).await {
                Ok(due) => lookout.add(due),
                Err(e) => tracing::warn!(error = %e, "the due monitors could not be read"),
            }
            for customer_id in lookout.take() {
                let Ok(tenant) = scheduler.tenants.activate(&customer_id).await else { continue };
                if let Err(e) = scheduler.tick(&tenant).await {
                    tracing::warn!(instance = %customer_id, error = %e, "the monitors could not be scheduled");
                }
            }
        }
    })
}

/// A monitor's extension id, from its record's path.
pub fn monitor_id(path: &str) -> &str {
    path.strip_suffix(".wasm").unwrap_or(path)
}

impl MonitorScheduler {
    async fn tick(&self, tenant: &Tenant) -> anyhow::Result<()> {
        let customer = tenant.customer_id();
        // The schedules are read before the extensions, and the extensions from the store rather
        // than this node's cache (which may be up to two seconds behind another node's upload):
        // a schedule whose monitor is not found was set before its monitor went.
        let mut stored = self.control.monitor_schedules(customer).await?;
        let monitors = tenant.db.extensions_of_kind_in_store(ExtensionKind::Monitor.name()).await?;
        // Schedules of monitors gone (deleted, or replaced by another kind) are forgotten, each
        // only as it was read: one another node has just set again stays.
        for (gone, schedule) in stored.iter().filter(|(id, _)| !monitors.iter().any(|r| monitor_id(&r.path) == id.as_str())) {
            self.control.forget_monitor_schedule(customer, gone, schedule).await?;
        }
        for record in monitors.iter() {
            let config = stored_config(tenant, record).await?;
            // Checked at upload; a record from before schedules existed has none.
            let Some(schedule) = config.schedule.clone() else { continue };
            let id = monitor_id(&record.path);
            let text = schedule.to_string();
            let now = self.clock.now_millis();
            match stored.remove(id) {
                Some(s) if s.schedule == text && s.sha256 == record.sha256 => {
                    if now < s.next_at {
                        continue;
                    }
                    let deadline = self.runtime.deadline(&config).as_millis() as i64;
                    let Some(next) = schedule.next_in_step(s.next_at, now + deadline) else { continue };
                    if self.control.claim_monitor_run(customer, id, s.next_at, next).await? {
                        let payload = JobPayload::work(JOB_KIND, serde_json::json!({"due": s.next_at}).to_string());
                        match self.queue.enqueue(customer, id, payload).await {
                            Enqueued::Stored(_) => tracing::debug!(instance = customer, monitor = id, "a monitor's run is queued"),
                            _ => tracing::warn!(instance = customer, monitor = id, "a monitor's run could not be queued; it is skipped"),
                        }
                    }
                }
                _ => {
                    let Some(next_at) = schedule.next_after(now) else { continue };
                    let s = MonitorSchedule { schedule: text, sha256: record.sha256.clone(), next_at };
                    self.control.set_monitor_schedule(customer, id, &s).await?;
                }
            }
        }
        Ok(())
    }
}

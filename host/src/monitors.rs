//! The scheduler of monitor extensions. Every node looks at every instance's monitors now and
//! then; when one is due, the node that moves its next time on (`ControlDb::claim_monitor_run`, a
//! compare-and-set) queues its run (`queue::monitor_run`), which the queue's fair worker pool
//! executes like any instance's work, so one instance's monitors cannot delay another's or the
//! API. A run's next time comes after its deadline, so runs of one monitor never overlap. A new
//! monitor, or a new version of one, first runs at its next time after now; runs missed while no
//! node ran are not made up.

use std::sync::Arc;
use std::time::Duration;

use tokio::task::JoinHandle;

use crate::paging::Clock;
use crate::queue::{Enqueued, Queue};
use crate::runtime::{stored_config, ExtensionKind, Runtime};
use crate::store::jobs::JobPayload;
use crate::store::monitor_schedules::MonitorSchedule;
use crate::store::ControlDb;
use crate::tenants::{Tenant, Tenants};

pub struct MonitorScheduler {
    pub tenants: Arc<Tenants>,
    pub runtime: Arc<Runtime>,
    pub queue: Arc<Queue>,
    pub control: ControlDb,
    pub clock: Arc<dyn Clock>,
}

pub fn spawn(scheduler: Arc<MonitorScheduler>, every: Duration) -> JoinHandle<()> {
    tokio::spawn(async move {
        loop {
            tokio::time::sleep(every).await;
            for customer_id in scheduler.tenants.customer_ids() {
                let Some(tenant) = scheduler.tenants.get(&customer_id) else { continue };
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
        for record in tenant.db.extensions_of_kind(ExtensionKind::Monitor.name()).await?.iter() {
            let config = stored_config(tenant, record).await?;
            // Checked at upload; a record from before schedules existed has none.
            let Some(schedule) = config.schedule.clone() else { continue };
            let id = monitor_id(&record.path);
            let text = schedule.to_string();
            let now = self.clock.now_millis();
            match self.control.monitor_schedule(customer, id).await? {
                Some(s) if s.schedule == text && s.sha256 == record.sha256 => {
                    if now < s.next_at {
                        continue;
                    }
                    let deadline = self.runtime.deadline(&config).as_millis() as i64;
                    let Some(next) = schedule.next_in_step(s.next_at, now + deadline) else { continue };
                    if self.control.claim_monitor_run(customer, id, s.next_at, next).await? {
                        let payload = JobPayload::Monitor(serde_json::json!({"due": s.next_at}).to_string());
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

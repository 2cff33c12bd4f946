//! The scheduler of flows with a `schedule` trigger (five-field cron, UTC, on the server's
//! clock). Every node looks at every instance's scheduled flows now and then; when one is due,
//! the node that moves its next time on (`ControlDb::fire_flow_schedule`, a compare-and-set)
//! queues the first batch of its sweep (`sweep.rs`). A new or changed schedule first fires at its
//! next time after now: firings missed while no node ran are not made up.

use std::sync::Arc;
use std::time::Duration;

use chrono::{DateTime, Utc};
use tokio::task::JoinHandle;

use super::engine::{FlowEngine, FlowJob, SweepJob};
use super::InstanceFlow;
use crate::queue::Enqueued;
use crate::tenants::Tenant;

pub fn spawn(engine: Arc<FlowEngine>, every: Duration) -> JoinHandle<()> {
    tokio::spawn(async move {
        loop {
            tokio::time::sleep(every).await;
            for customer_id in engine.tenants.customer_ids() {
                let Some(tenant) = engine.tenants.get(&customer_id) else { continue };
                let flows = match super::all(&tenant).await {
                    Ok(flows) => flows,
                    Err(e) => {
                        tracing::warn!(instance = %customer_id, error = %e, "scheduled flows could not be read");
                        continue;
                    }
                };
                for flow in flows.iter().filter(|f| f.flow.trigger.schedule.is_some()) {
                    if let Err(e) = engine.tick(&tenant, flow).await {
                        tracing::warn!(instance = %customer_id, flow = %flow.flow.name, error = %e, "a scheduled flow could not be fired");
                    }
                }
            }
        }
    })
}

/// The first time after `millis` that `cron` names.
pub fn next_after(cron: &croner::Cron, millis: i64) -> Option<i64> {
    let from = DateTime::<Utc>::from_timestamp_millis(millis)?;
    cron.find_next_occurrence(&from, false).ok().map(|t| t.timestamp_millis())
}

impl FlowEngine {
    async fn tick(&self, tenant: &Tenant, flow: &InstanceFlow) -> anyhow::Result<()> {
        let Some(text) = &flow.flow.trigger.schedule else { return Ok(()) };
        // Checked when the flow was saved.
        let cron: croner::Cron = text.parse()?;
        let (customer, name) = (tenant.customer_id(), flow.flow.name.as_str());
        let now = self.clock.now_millis();
        let Some(next) = next_after(&cron, now) else { return Ok(()) };
        match self.control.flow_schedule(customer, name).await? {
            Some(s) if &s.schedule == text => {
                if now >= s.next_at && self.control.fire_flow_schedule(customer, name, s.next_at, next).await? {
                    let first = FlowJob::Sweep(SweepJob { flow: name.to_string(), fired_at: s.next_at, after: 0 });
                    match self.queue.enqueue(customer, name, first.to_payload()).await {
                        Enqueued::Stored(_) => tracing::info!(instance = customer, flow = name, "a scheduled flow fired"),
                        _ => tracing::error!(instance = customer, flow = name, "a scheduled flow's firing could not be queued; it is skipped"),
                    }
                }
            }
            _ => self.control.set_flow_schedule(customer, name, text, next).await?,
        }
        Ok(())
    }
}

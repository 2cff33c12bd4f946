//! The scheduler of flows with a `schedule` trigger (five-field cron, UTC, on the server's
//! clock). Every node looks now and then at the instances with a firing due (`flow_schedules`
//! in the control plane) and at those whose flows changed; when one is due,
//! the node that moves its next time on (`ControlDb::fire_flow_schedule`, a compare-and-set)
//! queues the first batch of its sweep (`sweep.rs`). A new or changed schedule first fires at its
//! next time after now: firings missed while no node ran are not made up. A firing that comes
//! while the flow's previous sweep is still going is skipped (logged), so one flow's sweeps never
//! overlap.

use std::sync::Arc;
use std::time::Duration;

use chrono::{DateTime, Utc};
use tokio::task::JoinHandle;

use super::engine::{FlowEngine, FlowJob, SweepJob};
use super::InstanceFlow;
use crate::queue::Enqueued;
use crate::store::schedules::FlowSchedule;
use crate::tenants::Tenant;

/// A sweep that finished a batch this recently is taken to be going on (a batch takes seconds;
/// a sweep lost to a crash stops holding its flow's firings back after this).
const SWEEP_ALIVE_MS: i64 = 10 * 60 * 1000;

pub fn spawn(engine: Arc<FlowEngine>, every: Duration) -> JoinHandle<()> {
    let mut lookout = engine.tenants.lookout();
    tokio::spawn(async move {
        // At start, the instances whose operator's flows have a schedule (a definition applied
        // while no server ran has not been seen); later, those with a firing due and those that
        // changed: the work follows what is due, not the number of instances.
        match engine.control.instances_with_scheduled_flows().await {
            Ok(ids) => lookout.add(ids),
            Err(e) => tracing::warn!(error = %e, "the instances with scheduled flows could not be read"),
        }
        loop {
            tokio::time::sleep(every).await;
            match engine.control.due_flow_instances(engine.clock.now_millis()).await {
                Ok(due) => lookout.add(due),
                Err(e) => tracing::warn!(error = %e, "the due flow schedules could not be read"),
            }
            for customer_id in lookout.take() {
                let Ok(tenant) = engine.tenants.activate(&customer_id).await else { continue };
                engine.look_at(&tenant).await;
            }
        }
    })
}

impl FlowEngine {
    /// Fires what is due of one instance's scheduled flows, registers the schedules it had not
    /// seen, and forgets those of flows gone.
    async fn look_at(&self, tenant: &Tenant) {
        let customer_id = tenant.customer_id();
        let flows = match super::all(tenant).await {
            Ok(flows) => flows,
            Err(e) => {
                tracing::warn!(instance = %customer_id, error = %e, "scheduled flows could not be read");
                return;
            }
        };
        let mut stored = match self.control.flow_schedules(customer_id).await {
            Ok(stored) => stored,
            Err(e) => {
                tracing::warn!(instance = %customer_id, error = %e, "flow schedules could not be read");
                return;
            }
        };
        for flow in flows.iter().filter(|f| f.flow.trigger.schedule.is_some()) {
            if let Err(e) = self.tick(tenant, flow, stored.remove(&flow.flow.name)).await {
                tracing::warn!(instance = %customer_id, flow = %flow.flow.name, error = %e, "a scheduled flow could not be fired");
            }
        }
        // What is left belongs to flows gone from the instance (a flow that `herald
        // instance apply` dropped) or no longer scheduled: forgotten, so that a flow of
        // that name defined again later starts from its own next time (the old one's has
        // passed, and would fire it at once).
        for gone in stored.keys() {
            if let Err(e) = self.control.forget_flow_schedule(customer_id, gone).await {
                tracing::warn!(instance = %customer_id, flow = %gone, error = %e, "a removed flow's schedule could not be forgotten");
            }
        }
    }
}

/// The first time after `millis` that `cron` names.
pub fn next_after(cron: &croner::Cron, millis: i64) -> Option<i64> {
    let from = DateTime::<Utc>::from_timestamp_millis(millis)?;
    cron.find_next_occurrence(&from, false).ok().map(|t| t.timestamp_millis())
}

impl FlowEngine {
    /// Fires `flow` when it is due; `stored` is its schedule as stored (`None`: never seen).
    async fn tick(&self, tenant: &Tenant, flow: &InstanceFlow, stored: Option<FlowSchedule>) -> anyhow::Result<()> {
        let Some(text) = &flow.flow.trigger.schedule else { return Ok(()) };
        // Checked when the flow was saved.
        let cron: croner::Cron = text.parse()?;
        let (customer, name) = (tenant.customer_id(), flow.flow.name.as_str());
        let now = self.clock.now_millis();
        let Some(next) = next_after(&cron, now) else { return Ok(()) };
        match stored {
            // The last firing's sweep is still going (it finished a batch lately): this firing
            // is skipped, so sweeps of one flow never overlap.
            Some(s)
                if &s.schedule == text && now >= s.next_at && !s.sweep_done && s.swept_at.is_some_and(|at| now - at < SWEEP_ALIVE_MS) =>
            {
                if self.control.skip_flow_schedule(customer, name, s.next_at, next).await? {
                    tracing::warn!(
                        instance = customer,
                        flow = name,
                        "a scheduled flow's firing is skipped: its previous sweep is still going"
                    );
                }
            }
            Some(s) if &s.schedule == text => {
                if now >= s.next_at && self.control.fire_flow_schedule(customer, name, s.next_at, next).await? {
                    let first = FlowJob::Sweep(SweepJob { flow: name.to_string(), fired_at: s.next_at, after: 0 });
                    match self.queue.enqueue(customer, name, first.to_payload()).await {
                        Enqueued::Stored(_) => tracing::info!(instance = customer, flow = name, "a scheduled flow fired"),
                        _ => tracing::error!(
                            instance = customer,
                            flow = name,
                            "a scheduled flow's firing could not be queued; it is skipped"
                        ),
                    }
                }
            }
            _ => self.control.set_flow_schedule(customer, name, text, next).await?,
        }
        Ok(())
    }
}

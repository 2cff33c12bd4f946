//! A scheduled flow's sweep: at each firing, a run for every recipient of its target group (or
//! filter), taken in batches in key order, one queue job per batch. A batch runs its recipients'
//! nodes at once (several at a time) and stores their runs in one transaction at its end, with
//! the continuations of those that wait and the next batch in the same finishing transaction of
//! its job: memory stays one batch, a restart resumes at the batch it had reached (whose nodes
//! may run again: at least once), and other instances' jobs are claimed between batches.

use std::sync::Arc;

use futures_util::StreamExt;

use super::engine::{definition, new_run, FlowEngine, FlowJob, RunJob, SweepJob};
use super::runner::{flow_job, Progress, Walked};
use crate::domain;
use crate::model::flow::Flow;
use crate::store::jobs::{ClaimedJob, JobOutcome, Later};
use crate::store::schedules::SweptBatch;
use crate::store::tenant::{NewFlowRun, Recipient, RunProgress, RunState};
use crate::tenants::Tenant;

/// Recipients per batch, and how many of a batch run at once.
const BATCH: i64 = 500;
const AT_ONCE: usize = 8;

impl FlowEngine {
    pub(super) async fn sweep(&self, job: &ClaimedJob, payload: &str, sweep: SweepJob) -> JobOutcome {
        let tenant = match self.instance(job, payload).await {
            Ok(tenant) => tenant,
            Err(outcome) => return outcome,
        };
        // The flow as it is now: a flow deleted or no longer scheduled ends its sweep.
        let flow = match super::find(&tenant, &sweep.flow).await {
            Ok(Some(found)) if found.flow.trigger.schedule.is_some() => found,
            Ok(_) => return self.swept(&tenant, &sweep, &[], true, JobOutcome::Ended).await,
            Err(e) => return JobOutcome::Failed(format!("the flow could not be read: {e}")),
        };
        let condition = match target(&tenant, &flow.flow) {
            Ok(c) => c,
            Err(why) => return self.swept(&tenant, &sweep, &[], true, JobOutcome::Failed(why)).await,
        };
        let keys = match domain::recipients::keys_after(&tenant, condition.as_ref(), sweep.after, BATCH).await {
            Ok(keys) => keys,
            Err(e) => return JobOutcome::Failed(format!("the flow's recipients could not be read: {e}")),
        };
        let recipients = match domain::recipients::by_keys(&tenant, &keys).await {
            Ok(found) => found,
            Err(e) => return JobOutcome::Failed(format!("the flow's recipients could not be read: {e}")),
        };
        let definition = definition(&flow);
        let now = self.clock.now_millis();
        let runs: Vec<(NewFlowRun, RunProgress)> = futures_util::stream::iter(recipients)
            .map(|recipient| {
                let run = new_run(&flow, definition.clone(), recipient.key, "schedule", 0, now);
                self.run_inline(&tenant, &flow.flow, run, recipient)
            })
            .buffer_unordered(AT_ONCE)
            .filter_map(|r| async move { r })
            .collect()
            .await;
        if let Err(e) = tenant.db.insert_flow_runs(&runs).await {
            // Nothing of this batch is stored: it runs again, later.
            let later =
                Later { job: flow_job(&job.customer_id, &job.extension, FlowJob::Sweep(sweep.clone()).to_json()), due_at: now + 30_000 };
            tracing::warn!(instance = %job.customer_id, flow = %sweep.flow, error = %e, "a sweep's runs could not be stored; retried later");
            return JobOutcome::Continue(vec![later]);
        }
        let mut then: Vec<Later> = runs
            .iter()
            .filter(|(_, p)| p.state == RunState::Waiting)
            .map(|(run, p)| {
                let resume = FlowJob::Run(RunJob { run: run.id.clone(), context: None, chain: None });
                Later { job: flow_job(&job.customer_id, &run.flow, resume.to_json()), due_at: p.resume_at.unwrap_or(now) }
            })
            .collect();
        let done = (keys.len() as i64) < BATCH;
        if let Some(last) = keys.last().filter(|_| !done) {
            let next = FlowJob::Sweep(SweepJob { after: *last, ..sweep.clone() });
            then.push(Later { job: flow_job(&job.customer_id, &job.extension, next.to_json()), due_at: now });
        }
        self.swept(&tenant, &sweep, &keys, done, JobOutcome::Continue(then)).await
    }

    /// Runs a new run's nodes until it waits or ends; `None` when its recipient is gone.
    async fn run_inline(
        &self,
        tenant: &Arc<Tenant>,
        flow: &Flow,
        run: NewFlowRun,
        recipient: Recipient,
    ) -> Option<(NewFlowRun, RunProgress)> {
        let mut progress = Progress::new();
        // Each recipient a sweep reaches is an outside happening: its run begins a chain of its own.
        let lineage = crate::domain::triggers::Lineage::of_run(0, &run.id);
        let walked = self.walk(tenant, run.recipient, Some(recipient), &lineage, flow, &mut progress, None, None).await;
        let now = self.clock.now_millis();
        let saved = match walked {
            Walked::Over(state, why) => progress.saved(state, None, Some(why), now),
            Walked::Waiting(due_at) => progress.saved(RunState::Waiting, Some(due_at), None, now),
            Walked::Gone => return None,
            Walked::Retry(why) => progress.saved(RunState::Failed, None, Some(why), now),
        };
        if saved.state.is_over() {
            crate::ops::metrics::flow_run_ended(tenant.customer_id(), saved.state.name());
        }
        Some((run, saved))
    }

    /// Counts a batch (its recipients' `keys`) in the schedule's progress, then ends the job with
    /// `outcome`.
    async fn swept(&self, tenant: &Tenant, sweep: &SweepJob, keys: &[i64], done: bool, outcome: JobOutcome) -> JobOutcome {
        let batch = SweptBatch { after: sweep.after, count: keys.len() as i64, last: keys.last().copied().unwrap_or(sweep.after) };
        if let Err(e) =
            self.control.record_sweep(tenant.customer_id(), &sweep.flow, sweep.fired_at, batch, done, self.clock.now_millis()).await
        {
            tracing::warn!(flow = %sweep.flow, error = %e, "a sweep's progress could not be recorded");
        }
        outcome
    }
}

/// The condition a scheduled flow's recipients satisfy (`None`: every recipient).
fn target(tenant: &Tenant, flow: &Flow) -> Result<Option<crate::rsql::Condition>, String> {
    let text = match (&flow.trigger.target_group, &flow.trigger.filter) {
        (Some(group), _) => {
            let found = tenant
                .model
                .def
                .target_groups
                .iter()
                .find(|g| &g.name == group)
                .ok_or_else(|| format!("unknown target group '{group}'"))?;
            found.filter.clone()
        }
        (None, Some(filter)) => filter.clone(),
        (None, None) => String::new(),
    };
    if text.trim().is_empty() {
        return Ok(None);
    }
    domain::filter(Some(&text), &tenant.model.def, tenant).map_err(|e| format!("the flow's target filter '{text}' is not valid: {e:?}"))
}

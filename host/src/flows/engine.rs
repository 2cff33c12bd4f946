//! Starting flow runs. Something happens to a recipient (an event achieved through the API or by
//! an extension, a recipient created); every flow that it triggers gets a run: a row in the
//! instance's `_flow_runs` (the flow as it is now, which the run follows to its end) and a job in
//! the control plane's queue, which carries the run's contextual data and is claimed fairly
//! between instances like any asynchronous execution (`runner` runs it).

use std::path::Path;
use std::sync::Arc;

use futures_util::future::BoxFuture;
use serde::{Deserialize, Serialize};
use serde_json::Value as Json;

use super::context::Context;
use super::InstanceFlow;
use crate::clock::Clock;
use crate::domain::triggers::{Happening, Lineage, Triggers, MAX_CHAIN_DEPTH, MAX_CHAIN_RUNS};
use crate::queue::{Enqueued, Queue};
use crate::runtime::Runtime;
use crate::store::jobs::JobPayload;
use crate::store::tenant::{NewFlowRun, RunProgress, RunState};
use crate::store::{ControlDb, StoreResult};
use crate::tenants::{Tenant, Tenants};

/// What runs flows: the instances, the runtime for their extensions, the queue for their jobs.
pub struct FlowEngine {
    pub tenants: Arc<Tenants>,
    pub runtime: Arc<Runtime>,
    pub queue: Arc<Queue>,
    pub data_dir: Arc<Path>,
    pub clock: Arc<dyn Clock>,
    pub control: ControlDb,
}

/// A flow job, as the queue stores it (JSON in its payload).
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub enum FlowJob {
    /// The next stretch of one run.
    Run(RunJob),
    /// The next batch of a scheduled flow's sweep over its recipients.
    Sweep(SweepJob),
}

/// A run's job: the run, the contextual data of the call that started it (only there: gone
/// from the control plane when the run ends), and the chain of events it belongs to (absent: the
/// run is the first of its own).
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct RunJob {
    pub run: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub context: Option<Json>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub chain: Option<String>,
}

impl RunJob {
    /// Where the run stands: `depth` (stored with the run) in its chain.
    pub fn lineage(&self, depth: i64) -> Lineage {
        Lineage::of_run(depth, self.chain.as_deref().unwrap_or(&self.run))
    }
}

/// Why runs did not start: the chain of events reached `MAX_CHAIN_RUNS`.
#[derive(Debug)]
pub struct ChainFull;

impl std::fmt::Display for ChainFull {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "the chain of events started by one call has started {MAX_CHAIN_RUNS} runs, the most it may")
    }
}

/// A sweep's job: which flow, which firing (ms), and the last recipient key done.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct SweepJob {
    pub flow: String,
    pub fired_at: i64,
    pub after: i64,
}

impl FlowJob {
    pub fn to_json(&self) -> String {
        serde_json::to_string(self).expect("a flow job serialises")
    }

    pub fn to_payload(&self) -> JobPayload {
        JobPayload::work(super::JOB_KIND, self.to_json())
    }
}

impl FlowEngine {
    /// The flows `what` triggers in `tenant`.
    pub async fn triggered(tenant: &Tenant, what: Happening<'_>) -> StoreResult<Vec<InstanceFlow>> {
        let all = super::all(tenant).await?;
        Ok(all
            .into_iter()
            .filter(|f| match what {
                Happening::EventAchieved(event) => f.flow.trigger.event.as_deref() == Some(event),
                Happening::Created => f.flow.trigger.recipient_created == Some(true),
            })
            .collect())
    }

    /// Starts a run of each of `flows` for recipient `key`; returns the runs' ids. `context` is
    /// the triggering call's own (the API's `achieveEvent`), `lineage` where the happening stands
    /// in a chain of events: runs started inside a chain count against its bound, and none start
    /// when they would pass it (`Ok(Err(ChainFull))`).
    pub async fn start(
        &self,
        tenant: &Tenant,
        key: i64,
        flows: &[InstanceFlow],
        what: Happening<'_>,
        context: Option<&Context>,
        lineage: &Lineage,
    ) -> StoreResult<Result<Vec<String>, ChainFull>> {
        if flows.is_empty() {
            return Ok(Ok(Vec::new()));
        }
        let depth = lineage.depth;
        let trigger = match what {
            Happening::EventAchieved(event) => format!("event {event}"),
            Happening::Created => "recipient created".to_string(),
        };
        let now = self.clock.now_millis();
        let runs: Vec<NewFlowRun> = flows.iter().map(|f| new_run(f, definition(f), key, &trigger, depth, now)).collect();
        let stored: Vec<_> = runs.iter().map(|r| (r.clone(), RunProgress::start(now))).collect();
        match &lineage.chain {
            Some(chain) => {
                if !tenant.db.insert_chained_flow_runs(chain, MAX_CHAIN_RUNS, now, &stored).await? {
                    return Ok(Err(ChainFull));
                }
            }
            None => tenant.db.insert_flow_runs(&stored).await?,
        }
        // The first run an outside happening starts names the chain its events make.
        let chain = lineage.chain.as_deref().map(str::to_string).unwrap_or_else(|| runs[0].id.clone());
        for run in &runs {
            let job = FlowJob::Run(RunJob { run: run.id.clone(), context: context.map(|c| c.data.clone()), chain: Some(chain.clone()) });
            let why = match self.queue.enqueue(tenant.customer_id(), &run.flow, job.to_payload()).await {
                Enqueued::Stored(_) => continue,
                Enqueued::BacklogFull => "the instance's queue backlog is full",
                Enqueued::Failed => "the run could not be queued",
            };
            tracing::warn!(flow = %run.flow, reason = why, "a flow run did not start");
            let progress = RunProgress { state: RunState::Failed, outcome: Some(why.to_string()), ..RunProgress::start(now) };
            tenant.db.save_flow_run(&run.id, &progress).await?;
        }
        Ok(Ok(runs.into_iter().map(|r| r.id).collect()))
    }

    /// Looks up the flows `what` triggers and starts them, without contextual data.
    pub(super) async fn start_triggered(
        &self,
        tenant: &Tenant,
        key: i64,
        what: Happening<'_>,
        lineage: &Lineage,
    ) -> StoreResult<Result<Vec<String>, ChainFull>> {
        let flows = Self::triggered(tenant, what).await?;
        self.start(tenant, key, &flows, what, None, lineage).await
    }

    /// `start_triggered`, with failures logged (the change that triggered them stands).
    async fn start_logged(&self, tenant: &Arc<Tenant>, key: i64, what: Happening<'_>, lineage: Lineage) {
        let depth = lineage.depth;
        if depth > MAX_CHAIN_DEPTH {
            tracing::warn!(
                instance = tenant.customer_id(),
                ?what,
                depth,
                "flows not started: the chain of events is deeper than {MAX_CHAIN_DEPTH}"
            );
            return;
        }
        match self.start_triggered(tenant, key, what, &lineage).await {
            Ok(Ok(_)) => {}
            Ok(Err(full)) => tracing::warn!(instance = tenant.customer_id(), ?what, "flows not started: {full}"),
            Err(e) => tracing::error!(instance = tenant.customer_id(), ?what, error = %e, "flows could not be started"),
        }
    }
}

/// The definition a run of `flow` follows (kept with the run).
pub(super) fn definition(flow: &InstanceFlow) -> String {
    serde_json::to_string(&flow.flow).expect("a flow serialises")
}

/// A new run of `flow` for recipient `key`, as stored before it runs.
pub(super) fn new_run(flow: &InstanceFlow, definition: String, key: i64, trigger: &str, depth: i64, now: i64) -> NewFlowRun {
    NewFlowRun {
        id: new_run_id(now),
        flow: flow.flow.name.clone(),
        version: flow.version,
        definition,
        recipient: key,
        trigger: trigger.to_string(),
        depth,
        started_at: now,
    }
}

/// A run's id: the time it started (milliseconds, 12 hex digits) then 80 random bits, 32 hex
/// digits in all. Ids that grow with time land at the end of the runs' primary-key index: with
/// random ids, a sweep's batch of 500 runs touched about as many pages of that index, which each
/// commit wrote to the WAL and each checkpoint back to the database.
fn new_run_id(now_millis: i64) -> String {
    use rand::RngCore;
    let mut random = [0u8; 10];
    rand::thread_rng().fill_bytes(&mut random);
    let random: String = random.iter().map(|b| format!("{b:02x}")).collect();
    format!("{:012x}{random}", now_millis.clamp(0, 0xffff_ffff_ffff))
}

impl Triggers for FlowEngine {
    fn happened<'a>(&'a self, tenant: &'a Arc<Tenant>, key: i64, what: Happening<'a>, lineage: Lineage) -> BoxFuture<'a, ()> {
        Box::pin(self.start_logged(tenant, key, what, lineage))
    }
}

#[cfg(test)]
mod tests {
    use super::new_run_id;

    #[test]
    fn run_ids_are_unique_and_sort_by_their_start() {
        let earlier = new_run_id(1_764_000_000_000);
        let later = new_run_id(1_764_000_000_001);
        assert_eq!(earlier.len(), 32);
        assert!(earlier.bytes().all(|b| b.is_ascii_digit() || (b'a'..=b'f').contains(&b)), "{earlier}");
        assert!(earlier < later, "{earlier} then {later}");
        assert_eq!(&earlier[..12], "019ab697e800");
        assert_ne!(new_run_id(1_764_000_000_000), earlier, "the random part differs within a millisecond");
    }
}

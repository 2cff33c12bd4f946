//! Running a flow run's job: from the node the run reached, node after node, until it waits
//! (the job ends and its continuation is due at the end of the wait: `store::delayed`) or ends.
//! Where the run is and its trace are saved after every node, so a crash between nodes resumes
//! at the node reached; the node running at a crash runs again (at least once, as the queue's
//! jobs do).
//!
//! Where a run is: indexes from the flow's nodes down into `else` branches (`[2]` is the third
//! node; `[2, 0]` the first node of its `else`). A condition that is false enters its `else`;
//! the run ends at the end of whichever list it is in (an `else` branch is the rest of the run
//! for those recipients, not a detour).

use std::sync::Arc;
use std::time::{Duration, Instant};

use futures_util::future::BoxFuture;
use serde_json::{json, Value as Json};

use super::engine::{FlowEngine, FlowJob, RunJob};
use super::nodes::Outcome;
use crate::domain::triggers::Lineage;
use crate::model::flow::{Flow, Node, NodeKind};
use crate::queue::{JobKind, Queue};
use crate::store::jobs::{ClaimedJob, JobOutcome, JobPayload, Later, NewJob};
use crate::store::tenant::{FlowRun, Recipient, RunProgress, RunState};
use crate::tenants::{Activation, Tenant};

/// The most trace entries a run keeps (the first ones, then a note).
const MAX_TRACE: usize = 200;

/// How long a run whose store failed waits before it tries again.
const RETRY_AFTER: Duration = Duration::from_secs(30);

impl JobKind for FlowEngine {
    fn run<'a>(&'a self, job: &'a ClaimedJob, payload: &'a str) -> BoxFuture<'a, JobOutcome> {
        Box::pin(self.run_job(job, payload))
    }
}

/// The node at `position`, if the run has not gone past the end of its list.
fn node_at<'a>(nodes: &'a [Node], position: &[usize]) -> Option<&'a Node> {
    let (last, path) = position.split_last()?;
    let mut list = nodes;
    for i in path {
        list = list.get(*i)?.otherwise.as_deref()?;
    }
    list.get(*last)
}

/// `node 2 else 1`, as the flow checks name places.
fn label(position: &[usize]) -> String {
    let parts: Vec<String> = position.iter().map(|i| (i + 1).to_string()).collect();
    format!("node {}", parts.join(" else "))
}

/// How a stretch of a run ended.
pub(super) enum Walked {
    /// The run is over.
    Over(RunState, String),
    /// The run waits until then (the position is past the `wait`).
    Waiting(i64),
    /// The run or its recipient is gone (the recipient was deleted).
    Gone,
    /// The store failed; the run goes on from where it was saved.
    Retry(String),
}

impl FlowEngine {
    async fn run_job(&self, job: &ClaimedJob, payload: &str) -> JobOutcome {
        match serde_json::from_str::<FlowJob>(payload) {
            Ok(FlowJob::Run(run)) => self.run_one(job, payload, run).await,
            Ok(FlowJob::Sweep(sweep)) => self.sweep(job, payload, sweep).await,
            Err(_) => JobOutcome::Failed("the flow job does not read".into()),
        }
    }

    /// The job's instance, opened if it sleeps; a job whose instance cannot be opened now is
    /// tried again later.
    pub(super) async fn instance(&self, job: &ClaimedJob, payload: &str) -> Result<std::sync::Arc<Tenant>, JobOutcome> {
        match self.tenants.activate(&job.customer_id).await {
            Ok(tenant) => Ok(tenant),
            Err(Activation::Missing) => Err(JobOutcome::Failed("the instance no longer exists".into())),
            Err(Activation::Unavailable(_)) => Err(self.retry(job, payload, "the instance's data cannot be opened now".into())),
        }
    }

    async fn run_one(&self, job: &ClaimedJob, payload: &str, run_job: RunJob) -> JobOutcome {
        let tenant = match self.instance(job, payload).await {
            Ok(tenant) => tenant,
            Err(outcome) => return outcome,
        };
        let run = match tenant.db.flow_run(&run_job.run).await {
            Ok(Some(run)) => run,
            // Its recipient was deleted, and the run with it.
            Ok(None) => return JobOutcome::Ended,
            Err(e) => return self.retry(job, payload, format!("the run could not be read: {e}")),
        };
        if run.progress.state.is_over() {
            return JobOutcome::Ended;
        }
        let flow: Flow = match serde_json::from_str(&run.definition) {
            Ok(f) => f,
            Err(e) => return JobOutcome::Failed(format!("the run's flow does not read: {e}")),
        };
        let mut progress = Progress::of(&run);
        let lineage = run_job.lineage(run.depth);
        let walked = self.walk(&tenant, run.recipient, None, &lineage, &flow, &mut progress, run_job.context.as_ref(), Some(&run.id)).await;
        let now = self.clock.now_millis();
        let (saved, outcome) = match walked {
            Walked::Over(state, why) => {
                crate::ops::metrics::flow_run_ended(tenant.customer_id(), state.name());
                (progress.saved(state, None, Some(why), now), JobOutcome::Ended)
            }
            Walked::Waiting(due_at) => {
                let later = Later { job: continuation(job, payload), due_at };
                (progress.saved(RunState::Waiting, Some(due_at), None, now), JobOutcome::Continue(vec![later]))
            }
            Walked::Gone => return JobOutcome::Ended,
            Walked::Retry(why) => return self.retry(job, payload, why),
        };
        match tenant.db.save_flow_run(&run.id, &saved).await {
            Ok(_) => outcome,
            Err(e) => self.retry(job, payload, format!("the run could not be saved: {e}")),
        }
    }

    /// Runs nodes from `progress` for recipient `key` until the run waits or ends, saving after
    /// each node when the run is stored (`saved_as`; a sweep stores its runs once, at the end).
    /// The recipient is read before a node unless it is `known` (a sweep reads its batch at
    /// once) and no node since could have changed it (conditions and waits do not).
    #[allow(clippy::too_many_arguments)]
    pub(super) async fn walk(
        &self,
        tenant: &Arc<Tenant>,
        key: i64,
        mut known: Option<Recipient>,
        lineage: &Lineage,
        flow: &Flow,
        progress: &mut Progress,
        context: Option<&Json>,
        saved_as: Option<&str>,
    ) -> Walked {
        loop {
            let Some(node) = node_at(&flow.nodes, &progress.position) else {
                return Walked::Over(RunState::Done, "completed".into());
            };
            self.queue.give_way().await;
            let recipient = match known.take() {
                Some(r) => r,
                None => match crate::domain::recipients::by_key(tenant, key).await {
                    Ok(Some(r)) => r,
                    Ok(None) => return Walked::Gone,
                    Err(e) => return Walked::Retry(format!("the recipient could not be read: {e}")),
                },
            };
            let started = Instant::now();
            let at = self.clock.now_millis();
            let step = self.node(tenant, lineage, flow, node, &recipient, context).await;
            if matches!(node.kind(), Ok(NodeKind::Condition(..) | NodeKind::Wait(_))) {
                known = Some(recipient);
            }
            progress.record(json!({
                "node": label(&progress.position),
                "kind": step.kind,
                "result": step.outcome.describe(),
                "took": step.outcome.took().as_str(),
                "at": at,
                "durationMs": started.elapsed().as_millis() as u64,
                "log": step.log,
            }));
            match step.outcome {
                Outcome::Next => progress.advance(),
                Outcome::Else => progress.position.push(0),
                Outcome::Stop(reason) => return Walked::Over(RunState::Done, reason),
                Outcome::Fail(reason) => return Walked::Over(RunState::Failed, reason),
                Outcome::Wait(wait) => {
                    progress.advance();
                    return Walked::Waiting(self.clock.now_millis().saturating_add(wait.as_millis() as i64));
                }
            }
            if let Some(id) = saved_as {
                match tenant.db.save_flow_run(id, &progress.saved(RunState::Running, None, None, self.clock.now_millis())).await {
                    Ok(true) => {}
                    Ok(false) => return Walked::Gone,
                    Err(e) => return Walked::Retry(format!("the run could not be saved: {e}")),
                }
            }
        }
    }

    /// The store failed: the run goes on from where it was saved, a little later.
    fn retry(&self, job: &ClaimedJob, payload: &str, why: String) -> JobOutcome {
        tracing::warn!(instance = %job.customer_id, flow = %job.extension, reason = %why, "a flow run is retried later");
        let due_at = self.clock.now_millis() + RETRY_AFTER.as_millis() as i64;
        JobOutcome::Continue(vec![Later { job: continuation(job, payload), due_at }])
    }
}

/// The job that goes on with the run later (same run, same contextual data).
fn continuation(job: &ClaimedJob, payload: &str) -> NewJob {
    flow_job(&job.customer_id, &job.extension, payload.to_string())
}

/// A new queue job of a flow of `customer_id`.
pub(super) fn flow_job(customer_id: &str, flow: &str, payload: String) -> NewJob {
    NewJob {
        id: Queue::new_id(),
        customer_id: customer_id.to_string(),
        extension: flow.to_string(),
        accepted_at: 0,
        payload: JobPayload::work(super::JOB_KIND, payload),
    }
}

/// Where a run is and what it did, between saves.
pub(super) struct Progress {
    pub position: Vec<usize>,
    trace: Vec<Json>,
}

impl Progress {
    pub fn new() -> Progress {
        Progress { position: vec![0], trace: Vec::new() }
    }

    fn of(run: &FlowRun) -> Progress {
        Progress {
            position: serde_json::from_str(&run.progress.position).unwrap_or_else(|_| vec![0]),
            trace: serde_json::from_str(&run.progress.trace).unwrap_or_default(),
        }
    }

    fn record(&mut self, entry: Json) {
        match self.trace.len() {
            n if n < MAX_TRACE => self.trace.push(entry),
            n if n == MAX_TRACE => self.trace.push(json!({"note": format!("the trace keeps the first {MAX_TRACE} nodes")})),
            _ => {}
        }
    }

    fn advance(&mut self) {
        if let Some(last) = self.position.last_mut() {
            *last += 1;
        }
    }

    pub fn saved(&self, state: RunState, resume_at: Option<i64>, outcome: Option<String>, now: i64) -> RunProgress {
        RunProgress {
            state,
            position: serde_json::to_string(&self.position).expect("positions serialise"),
            resume_at,
            outcome,
            trace: serde_json::to_string(&self.trace).expect("traces serialise"),
            updated_at: now,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn positions_walk_into_else_branches_and_end_with_their_list() {
        let flow: Flow = serde_json::from_value(json!({
            "trigger": {"event": "E"},
            "nodes": [{"condition": {"filter": "A==1"}, "else": [{"send": "x"}, {"send": "y"}]}, {"send": "z"}]
        }))
        .unwrap();
        assert_eq!(node_at(&flow.nodes, &[1]).unwrap().send.as_deref(), Some("z"));
        assert_eq!(node_at(&flow.nodes, &[0, 1]).unwrap().send.as_deref(), Some("y"));
        assert!(node_at(&flow.nodes, &[0, 2]).is_none(), "the else branch is the rest of the run");
        assert!(node_at(&flow.nodes, &[2]).is_none());
        assert!(node_at(&flow.nodes, &[1, 0]).is_none(), "a send has no else");
        assert_eq!(label(&[0, 1]), "node 1 else 2");
    }
}

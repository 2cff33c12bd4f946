//! Asynchronous extension executions (`"async": true` in the extension's configuration): the call
//! is stored in the control plane's queue and answered 202 with a `queueId`; a worker pool runs it
//! later and keeps its response for the status endpoints.
//!
//! - Durable: the job is committed before the 202 (`writer`, group commit). After a crash or a
//!   restart, jobs that were queued run; jobs that were running are queued again once, so an
//!   execution may run twice (at-least-once), and a job interrupted twice fails with that reason.
//!   With several nodes, each beats in the control plane (`liveness`); the jobs of a node that
//!   stopped beating are queued again by the others.
//! - Fair: `dispatch` hands places out by what each instance is running.
//! - Bounded: each execution ends at its execution limit (or the extension's own shorter
//!   timeout); results are kept for the retention, then removed.
//! - One process owns a SQLite queue; several nodes can share a PostgreSQL one.
//! - Other work rides the same queue as kinds of their own (`kinds`): flow runs, monitor runs,
//!   import stretches.

mod backlog;
mod dispatch;
mod execute;
mod import_stretch;
mod kinds;
mod liveness;
mod promote;
mod threads;
mod writer;

use std::sync::Arc;
use std::time::Duration;

use rand::RngCore;
use tokio::sync::{mpsc, oneshot, Notify};
use tokio::task::JoinHandle;

use crate::clock::Clock;
use crate::connections::InFlight;
use crate::runtime::Runtime;
pub use kinds::{JobKind, JobKinds};

use crate::store::jobs::{Door, JobPayload, JobState, NewJob, StoredResponse};
use crate::store::{ControlDb, StoreResult};
use crate::tenants::Tenants;

/// The operator's settings of the queue.
#[derive(Debug, Clone)]
pub struct QueueSettings {
    /// Executions at once in this process.
    pub workers: usize,
    /// Threads of the runtime that executions run on, apart from the one serving the API, so
    /// a draining queue takes at most these cores from the calls being answered.
    pub threads: usize,
    /// How many steps below the API's scheduling priority those threads run (0: the same).
    pub nice: u8,
    /// Whether those threads keep to cores of their own, leaving the others to the API
    /// (`threads.rs`).
    pub own_cores: bool,
    /// From how many API calls in flight queued work gives way before each job and each node of a
    /// flow run (`connections::InFlight`; 0: never). The default is the cores that `threads`
    /// leaves to the API, so that on a large machine a busy API does not hold queued work back.
    pub give_way_at: usize,
    /// How long a status call answers 202 before it reports the execution as overdue (400).
    pub report_after: Duration,
    /// The longest an execution may run before it is ended.
    pub execution_limit: Duration,
    /// How long a finished execution's result is kept.
    pub retention: Duration,
    /// How often the queue is looked at without being woken (work queued by other processes).
    pub poll_interval: Duration,
    /// How long a node may stay silent before its running executions are queued again (it
    /// beats five times in that span).
    pub node_timeout: Duration,
    /// The most bytes of request bodies one instance may have waiting (`backlog`).
    pub max_backlog_bytes: u64,
}

impl Default for QueueSettings {
    fn default() -> QueueSettings {
        let cores = std::thread::available_parallelism().map_or(1, |n| n.get());
        let threads = (cores / 2).max(1);
        QueueSettings {
            workers: 16,
            threads,
            nice: 10,
            own_cores: false,
            give_way_at: cores.saturating_sub(threads).max(1),
            report_after: Duration::from_secs(60),
            execution_limit: Duration::from_secs(300),
            retention: Duration::from_secs(24 * 3600),
            poll_interval: Duration::from_secs(1),
            node_timeout: Duration::from_secs(15),
            max_backlog_bytes: 1024 * 1024 * 1024,
        }
    }
}

impl QueueSettings {
    /// The most places one instance may hold: three quarters, so others always find room.
    pub fn instance_share(&self) -> usize {
        (self.workers - self.workers / 4).max(1)
    }
}

/// What a status call answers.
#[derive(Debug)]
pub enum Status {
    /// Queued or running, for less than the report threshold: 202 with the queueId.
    Pending,
    /// Queued or running for longer than the report threshold: 400 (it goes on).
    Overdue,
    /// The extension's own response.
    Done(StoredResponse),
    /// Ended at its execution limit.
    Deadline,
    /// Trapped, panicked, ran out of memory, never answered, or could not start.
    Failed,
}

/// What became of a call to queue.
#[derive(Debug, PartialEq, Eq)]
pub enum Enqueued {
    /// Stored durably, under this queue id.
    Stored(String),
    /// The instance's backlog is full: the call is refused (429) until its jobs have run.
    BacklogFull,
    /// It could not be stored (a fault, logged).
    Failed,
}

pub struct Queue {
    control: ControlDb,
    backlog: backlog::Backlog,
    clock: Arc<dyn Clock>,
    settings: QueueSettings,
    writes: mpsc::Sender<Write>,
    node: Arc<str>,
    api_calls: Arc<InFlight>,
}

/// The longest queued work waits, before a job or a flow's node, for the API's calls under way
/// (`Queue::give_way`). tokio's timer ticks in milliseconds and rounds a deadline up to its next
/// tick, so a wait that runs to the bound lasts 1 to 2 ms.
const GIVE_WAY_AT_MOST: Duration = Duration::from_millis(1);

use writer::Write;

/// What runs executions: the same instances and runtime as the API.
pub struct Workers {
    pub tenants: Arc<Tenants>,
    pub runtime: Arc<Runtime>,
    /// The kinds of work besides asynchronous calls; the modules above the queue register theirs
    /// once it exists (the flows enqueue through it). The queue registers its own (imports).
    pub kinds: JobKinds,
    /// The API's calls in flight, which queued work gives way to (`QueueSettings::give_way_at`).
    pub api_calls: Arc<InFlight>,
}

impl Queue {
    /// Recovers what a previous process left running, then starts the writer, the dispatcher and
    /// the retention sweep; the tasks are returned for the server to end.
    pub async fn start(
        control: ControlDb,
        clock: Arc<dyn Clock>,
        settings: QueueSettings,
        workers: Workers,
    ) -> anyhow::Result<(Arc<Queue>, Vec<JoinHandle<()>>)> {
        let node: Arc<str> = Arc::from(new_queue_id());
        // One process owns an SQLite queue: what is running there was left by its last stop, and
        // there are no other nodes to watch (a heartbeat would only add fsyncs). On PostgreSQL,
        // nodes beat, and only the jobs of nodes that stopped beating are recovered.
        let several_nodes = control.backend().is_postgres();
        if several_nodes {
            control.node_heartbeat(&node).await?;
        }
        let alive_since = if several_nodes { crate::store::now_millis() - settings.node_timeout.as_millis() as i64 } else { i64::MAX };
        let (requeued, failed) = control.recover_jobs(clock.now_millis(), alive_since, &node).await?;
        if requeued + failed > 0 {
            tracing::warn!(requeued, failed, "extension executions interrupted by the stop of a node");
        }
        let wake = Arc::new(Notify::new());
        let (writes, receiver) = mpsc::channel(4096);
        let mut tasks = vec![writer::spawn(control.clone(), node.clone(), receiver, wake.clone())];
        let imports = import_stretch::ImportStretches {
            tenants: workers.tenants.clone(),
            runtime: workers.runtime.clone(),
            api_calls: workers.api_calls.clone(),
            execution_limit: settings.execution_limit,
            clock: clock.clone(),
            nice: settings.nice,
        };
        workers.kinds.register(crate::imports::JOB_KIND, Arc::new(imports));
        let executor = execute::Executor {
            tenants: workers.tenants,
            runtime: workers.runtime,
            execution_limit: settings.execution_limit,
            kinds: workers.kinds,
            api_calls: workers.api_calls.clone(),
        };
        let threads = threads::background_runtime(settings.threads, settings.nice, settings.own_cores)?;
        let dispatcher_wake = wake.clone();
        let dispatcher = dispatch::Dispatcher {
            runtime: dispatch::ExecutionRuntime::new(threads),
            control: control.clone(),
            clock: clock.clone(),
            settings: settings.clone(),
            wake,
            executor: Arc::new(executor),
            writes: writes.clone(),
            node: node.clone(),
        };
        tasks.push(tokio::spawn(dispatcher.run()));
        tasks.push(spawn_sweeper(control.clone(), clock.clone(), settings.retention));
        tasks.push(promote::spawn(control.clone(), clock.clone(), settings.poll_interval, dispatcher_wake.clone()));
        if several_nodes {
            tasks.push(liveness::spawn(control.clone(), clock.clone(), node.clone(), settings.node_timeout, dispatcher_wake));
        }
        let backlog = backlog::Backlog::new(control.clone(), settings.max_backlog_bytes);
        Ok((Arc::new(Queue { control, backlog, clock, settings, writes, node, api_calls: workers.api_calls }), tasks))
    }

    /// Waits, 1 to 2 ms at most (`GIVE_WAY_AT_MOST`), while the API answers as many calls as queued work gives way
    /// to: called by queued work between its steps (before a job, before each node of a flow run).
    pub async fn give_way(&self) {
        self.api_calls.give_way(GIVE_WAY_AT_MOST).await;
    }

    /// A new job's id (also a flow run's: unguessable).
    pub fn new_id() -> String {
        new_queue_id()
    }

    /// Stores a call for later execution and returns its queue id once it is durable.
    pub async fn enqueue(&self, customer_id: &str, extension: &str, payload: JobPayload) -> Enqueued {
        match self.backlog.admit(customer_id, payload.body_len() as u64).await {
            Ok(true) => {}
            Ok(false) => return Enqueued::BacklogFull,
            Err(e) => {
                tracing::error!(error = %e, "the queue's backlog could not be read");
                return Enqueued::Failed;
            }
        }
        let id = new_queue_id();
        let job = NewJob {
            id: id.clone(),
            customer_id: customer_id.to_string(),
            extension: extension.to_string(),
            accepted_at: self.clock.now_millis(),
            payload,
        };
        let (ack, stored) = oneshot::channel();
        if self.writes.send(Write::Insert(job, ack)).await.is_err() {
            return Enqueued::Failed;
        }
        match stored.await {
            Ok(true) => Enqueued::Stored(id),
            _ => Enqueued::Failed,
        }
    }

    /// The status of a queued execution of `customer_id`; `None` when there is no such id for
    /// that instance (or its result's retention is over).
    pub async fn status(&self, customer_id: &str, door: Door, queue_id: &str) -> StoreResult<Option<Status>> {
        if !looks_like_queue_id(queue_id) {
            return Ok(None);
        }
        let Some(job) = self.control.job(queue_id).await? else { return Ok(None) };
        // Another instance's call, or one made through the other endpoint: as unknown.
        if job.customer_id != customer_id || job.door != Some(door) {
            return Ok(None);
        }
        let now = self.clock.now_millis();
        if job.finished_at.is_some_and(|at| now - at > self.settings.retention.as_millis() as i64) {
            return Ok(None);
        }
        Ok(Some(match job.state {
            JobState::Pending { accepted_at } if now - accepted_at > self.settings.report_after.as_millis() as i64 => Status::Overdue,
            JobState::Pending { .. } => Status::Pending,
            JobState::Done(response) => Status::Done(response),
            JobState::Deadline => Status::Deadline,
            JobState::Failed => Status::Failed,
        }))
    }

    pub fn settings(&self) -> &QueueSettings {
        &self.settings
    }

    /// This node's id in the control plane (its heartbeats, the jobs it runs, the calls it holds).
    pub fn node(&self) -> Arc<str> {
        Arc::clone(&self.node)
    }

    /// Leaves the control plane's list of live nodes (a graceful stop): whatever this node
    /// still runs is queued again by the others at once, not after the node timeout.
    pub async fn leave(&self) -> StoreResult<()> {
        if self.control.backend().is_postgres() {
            // Its calls have ended (the listeners drained); whatever slot is left goes back.
            self.control.release_silent_nodes(i64::MIN, Some(&self.node)).await?;
        }
        self.control.remove_node(&self.node).await
    }
}

/// 128 random bits, hex: unguessable, and says nothing of the instance or the order.
fn new_queue_id() -> String {
    let mut bytes = [0u8; 16];
    rand::rngs::OsRng.fill_bytes(&mut bytes);
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

fn looks_like_queue_id(text: &str) -> bool {
    text.len() == 32 && text.bytes().all(|b| b.is_ascii_hexdigit() && !b.is_ascii_uppercase())
}

fn spawn_sweeper(control: ControlDb, clock: Arc<dyn Clock>, retention: Duration) -> JoinHandle<()> {
    let every = (retention / 10).clamp(Duration::from_secs(1), Duration::from_secs(60));
    tokio::spawn(async move {
        loop {
            tokio::time::sleep(every).await;
            let before = clock.now_millis() - retention.as_millis() as i64;
            match control.sweep_jobs(before).await {
                Ok(0) => {}
                Ok(n) => tracing::info!(removed = n, "finished extension executions past their retention removed"),
                Err(e) => tracing::warn!(error = %e, "the retention sweep of extension executions failed"),
            }
        }
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn queue_ids_are_random_and_recognised() {
        let (a, b) = (new_queue_id(), new_queue_id());
        assert_ne!(a, b);
        assert!(looks_like_queue_id(&a));
        assert!(!looks_like_queue_id("../../etc"));
        assert!(!looks_like_queue_id(&a.to_uppercase()));
    }
}

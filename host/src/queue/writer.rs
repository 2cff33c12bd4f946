//! Group commit: every accepted job and every finished execution goes through one task that
//! writes whatever has gathered in one transaction. A job is acknowledged (and its caller gets
//! the 202) only after the transaction holding it committed, so an accepted job survives a
//! crash, and thousands of acceptances a second cost a few fsyncs, not one each.

use std::sync::Arc;

use tokio::sync::{mpsc, oneshot, Notify};
use tokio::task::JoinHandle;

use crate::store::jobs::{JobOutcome, NewJob};
use crate::store::ControlDb;

/// Most writes in one transaction.
const BATCH: usize = 512;

pub(super) enum Write {
    /// Store a job; the answer says whether it is stored.
    Insert(NewJob, oneshot::Sender<bool>),
    /// Record how an execution ended (job id, outcome, when).
    Finish(String, JobOutcome, i64),
}

pub(super) fn spawn(control: ControlDb, node: Arc<str>, mut writes: mpsc::Receiver<Write>, wake: Arc<Notify>) -> JoinHandle<()> {
    tokio::spawn(async move {
        let mut batch = Vec::with_capacity(BATCH);
        while writes.recv_many(&mut batch, BATCH).await > 0 {
            let mut jobs = Vec::new();
            let mut acks = Vec::new();
            let mut finished = Vec::new();
            for write in batch.drain(..) {
                match write {
                    Write::Insert(job, ack) => {
                        jobs.push(job);
                        acks.push(ack);
                    }
                    Write::Finish(id, outcome, at) => finished.push((id, outcome, at)),
                }
            }
            if !jobs.is_empty() {
                let stored = match control.insert_jobs(&jobs).await {
                    Ok(()) => true,
                    Err(e) => {
                        tracing::error!(error = %e, jobs = jobs.len(), "accepted extension calls could not be queued");
                        false
                    }
                };
                for ack in acks {
                    let _ = ack.send(stored);
                }
                if stored {
                    wake.notify_one();
                }
            }
            if !finished.is_empty() {
                // A continuation already due (a sweep's next batch) is queued by this write: the
                // dispatcher is told, rather than finding it at its next poll.
                let continues = finished.iter().any(|(_, outcome, _)| matches!(outcome, JobOutcome::Continue(_)));
                match control.finish_jobs(&finished, &node).await {
                    Ok(()) if continues => wake.notify_one(),
                    Ok(()) => {}
                    // The jobs stay `running` and are queued again once this node is gone.
                    Err(e) => tracing::error!(error = %e, jobs = finished.len(), "the results of extension executions could not be saved"),
                }
            }
        }
    })
}

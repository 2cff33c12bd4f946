//! Writing execution logs without slowing calls: the log of a successful execution goes through a
//! bounded channel to one task that writes what has gathered, per instance, in one transaction,
//! then pauses briefly so that a busy extension's logs gather: of a burst only the newest
//! executions are kept, so most of them need never be written.
//! When the channel is full (the disk cannot keep up), such a log is dropped and counted, never
//! the call delayed. Failed executions' logs are written before the caller hears of the failure
//! (`call.rs`), so an operator who sees a 502 finds its reason.
//!
//! A graceful stop loses none: once the listeners have drained, `flush` has the task write
//! everything sent before it, without waiting out its pause. A crash loses what was gathering:
//! at most the last pause's worth (about 200 ms of successful executions).

use std::collections::HashMap;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;

use tokio::sync::{mpsc, oneshot};

use crate::store::tenant::ExecutionLog;
use crate::tenants::Tenant;

const PENDING: usize = 10_000;
/// The pause between two writes: how late a successful execution's log may appear.
const GATHER: std::time::Duration = std::time::Duration::from_millis(200);

/// What the writing task is sent.
enum Note {
    /// A successful execution's log, to write with the next group.
    Kept(Arc<Tenant>, ExecutionLog),
    /// Write what was sent before this now, then answer.
    Flush(oneshot::Sender<()>),
}

#[derive(Clone)]
pub(super) struct LogWriter {
    sender: mpsc::Sender<Note>,
    dropped: Arc<AtomicU64>,
}

impl LogWriter {
    /// Starts the writing task (it ends when the last `LogWriter` is dropped).
    pub fn spawn() -> LogWriter {
        let (sender, mut receiver) = mpsc::channel::<Note>(PENDING);
        tokio::spawn(async move {
            let mut batch = Vec::new();
            while receiver.recv_many(&mut batch, PENDING).await > 0 {
                let flushes = write_group(&mut batch).await;
                let flushed = !flushes.is_empty();
                for done in flushes {
                    let _ = done.send(());
                }
                // A flush means the server is stopping: what comes after it is written at once.
                if !flushed {
                    tokio::time::sleep(GATHER).await;
                }
            }
        });
        LogWriter { sender, dropped: Arc::default() }
    }

    /// Queues a log for writing; drops it when too many are waiting.
    pub fn keep(&self, tenant: Arc<Tenant>, entry: ExecutionLog) {
        if self.sender.try_send(Note::Kept(tenant, entry)).is_err() {
            let dropped = self.dropped.fetch_add(1, Ordering::Relaxed) + 1;
            if dropped.is_power_of_two() {
                tracing::warn!(dropped, "execution logs dropped: more were waiting than the disk could take");
            }
        }
    }

    /// Returns once every log queued before it is written (a graceful stop). The task may be
    /// in its pause: it writes the logs gathered so far when the pause ends, at most `GATHER`
    /// later.
    pub async fn flush(&self) {
        let (done, written) = oneshot::channel();
        // Waits for room: a full channel is emptied by the task.
        if self.sender.send(Note::Flush(done)).await.is_ok() {
            let _ = written.await;
        }
    }
}

/// Writes the logs of `batch` (emptied), grouped by instance, one transaction each; returns the
/// flushes it held, to answer once they are written.
async fn write_group(batch: &mut Vec<Note>) -> Vec<oneshot::Sender<()>> {
    let mut flushes = Vec::new();
    // Grouped by the tenant's identity (its `Arc`), not a copy of its name per entry.
    let mut by_instance: HashMap<usize, (Arc<Tenant>, Vec<ExecutionLog>), foldhash::fast::RandomState> = HashMap::default();
    for note in batch.drain(..) {
        match note {
            Note::Kept(tenant, entry) => {
                by_instance.entry(Arc::as_ptr(&tenant) as usize).or_insert_with(|| (tenant, Vec::new())).1.push(entry)
            }
            Note::Flush(done) => flushes.push(done),
        }
    }
    for (tenant, entries) in by_instance.into_values() {
        if let Err(e) = tenant.db.insert_execution_logs(&entries).await {
            tracing::warn!(error = %e, customer_id = tenant.customer_id(), "execution logs could not be kept");
        }
    }
    flushes
}

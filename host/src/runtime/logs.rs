//! Writing execution logs without slowing calls: the log of a successful execution is kept in
//! memory with its extension's newest ones, at most as many as the store keeps of an extension
//! (`KEPT_EXECUTIONS`: an older one would be trimmed the moment it was written), and one task
//! writes what has gathered, per instance in one transaction, then pauses briefly so that a busy
//! extension's logs gather. Failed executions' logs are written before the caller hears of the
//! failure (`call.rs`), so an operator who sees a 502 finds its reason.
//!
//! Why not a channel of every log, as before issue 41: at tens of thousands of calls a second,
//! each call's log crossed to the writer's thread to be dropped there unwritten (most of a burst
//! is trimmed), and the queue's books and those frees were a few percent of a reused call. Here
//! a call takes a lock held for a few instructions, and a log that falls out of its extension's
//! newest is dropped by the call that pushed it out, on its own thread. Memory stays bounded
//! without refusing anything: at most `KEPT_EXECUTIONS` logs wait per extension, whatever the
//! disk's pace.
//!
//! A graceful stop loses none: once the listeners have drained, `flush` has the task write
//! everything kept before it. A crash loses what was gathering: at most the last pause's worth
//! (about 200 ms of successful executions).

use std::collections::{HashMap, VecDeque};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, PoisonError};

use tokio::sync::{oneshot, Notify};

use crate::store::tenant::{ExecutionLog, KEPT_EXECUTIONS};
use crate::tenants::Tenant;

/// The pause between two writes: how late a successful execution's log may appear.
const GATHER: std::time::Duration = std::time::Duration::from_millis(200);

type Hasher = foldhash::fast::RandomState;

/// An instance's logs waiting, by extension, each extension's newest last.
type ByExtension = HashMap<String, VecDeque<ExecutionLog>, Hasher>;

/// An instance's logs to write, and the flushes to answer once they are written.
type Groups<T> = (Vec<(Arc<T>, Vec<ExecutionLog>)>, Vec<oneshot::Sender<()>>);

/// The logs waiting to be written, by instance and extension, each extension's newest last.
/// Generic over the instance (`Arc<Tenant>` in the server) so that its rules are tested alone.
struct Pending<T> {
    /// By the instance's identity (its `Arc`'s address: the `Arc` is kept beside its logs, so
    /// the address cannot be another instance's while they wait), not a copy of its name a call.
    by_instance: HashMap<usize, (Arc<T>, ByExtension), Hasher>,
    /// Flushes asked for since the last write, answered once what was kept before them is written.
    flushes: Vec<oneshot::Sender<()>>,
}

impl<T> Default for Pending<T> {
    fn default() -> Pending<T> {
        Pending { by_instance: HashMap::default(), flushes: Vec::new() }
    }
}

impl<T> Pending<T> {
    /// Keeps `entry`; returns the log it pushed out of its extension's newest, for the caller to
    /// drop outside the lock.
    fn keep(&mut self, instance: Arc<T>, entry: ExecutionLog) -> Option<ExecutionLog> {
        let (_, by_extension) = self.by_instance.entry(Arc::as_ptr(&instance) as usize).or_insert_with(|| (instance, HashMap::default()));
        let newest = match by_extension.get_mut(entry.extension.as_str()) {
            Some(newest) => newest,
            None => by_extension.entry(entry.extension.clone()).or_default(),
        };
        let out = (newest.len() >= KEPT_EXECUTIONS as usize).then(|| newest.pop_front()).flatten();
        newest.push_back(entry);
        out
    }

    fn is_empty(&self) -> bool {
        self.by_instance.is_empty() && self.flushes.is_empty()
    }

    /// The instances' logs, oldest first within each extension.
    fn into_groups(self) -> Groups<T> {
        let groups = self
            .by_instance
            .into_values()
            .map(|(instance, by_extension)| (instance, by_extension.into_values().flatten().collect()))
            .collect();
        (groups, self.flushes)
    }
}

struct Shared {
    pending: Mutex<Pending<Tenant>>,
    /// Rung when the first log after a write is kept, when a flush is asked for, and when the
    /// last `LogWriter` goes.
    wake: Notify,
    closed: AtomicBool,
}

impl Shared {
    fn pending(&self) -> std::sync::MutexGuard<'_, Pending<Tenant>> {
        self.pending.lock().unwrap_or_else(PoisonError::into_inner)
    }
}

#[derive(Clone)]
pub(super) struct LogWriter {
    shared: Arc<Shared>,
    _open: Arc<Open>,
}

/// Held by every `LogWriter`; the last one dropped tells the task to write what is left and end.
struct Open(Arc<Shared>);

impl Drop for Open {
    fn drop(&mut self) {
        self.0.closed.store(true, Ordering::Release);
        self.0.wake.notify_one();
    }
}

impl LogWriter {
    /// Starts the writing task (it ends once the last `LogWriter` is dropped, after a last write).
    pub fn spawn() -> LogWriter {
        let shared = Arc::new(Shared { pending: Mutex::default(), wake: Notify::new(), closed: AtomicBool::new(false) });
        let task = Arc::clone(&shared);
        tokio::spawn(async move {
            loop {
                task.wake.notified().await;
                let closing = task.closed.load(Ordering::Acquire);
                // A flush means the server is stopping: what was kept is written at once.
                if !closing && task.pending().flushes.is_empty() {
                    tokio::time::sleep(GATHER).await;
                }
                let pending = std::mem::take(&mut *task.pending());
                let (groups, flushes) = pending.into_groups();
                write_groups(groups).await;
                for done in flushes {
                    let _ = done.send(());
                }
                if closing {
                    break;
                }
            }
        });
        LogWriter { _open: Arc::new(Open(Arc::clone(&shared))), shared }
    }

    /// Keeps a successful execution's log for the next write.
    pub fn keep(&self, tenant: Arc<Tenant>, entry: ExecutionLog) {
        let mut pending = self.shared.pending();
        let first = pending.is_empty();
        let out = pending.keep(tenant, entry);
        drop(pending);
        drop(out);
        if first {
            self.shared.wake.notify_one();
        }
    }

    /// Returns once every log kept before it is written (a graceful stop). The task may be in
    /// its pause: it writes the logs gathered so far when the pause ends, at most `GATHER` later.
    pub async fn flush(&self) {
        let (done, written) = oneshot::channel();
        self.shared.pending().flushes.push(done);
        self.shared.wake.notify_one();
        let _ = written.await;
    }
}

/// Writes each instance's logs in one transaction.
async fn write_groups(groups: Vec<(Arc<Tenant>, Vec<ExecutionLog>)>) {
    for (tenant, entries) in groups {
        if let Err(e) = tenant.db.insert_execution_logs(&entries).await {
            tracing::warn!(error = %e, customer_id = tenant.customer_id(), "execution logs could not be kept");
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn log(extension: &str, n: i64) -> ExecutionLog {
        ExecutionLog {
            extension: extension.into(),
            at: n,
            duration_ms: 0,
            usage: None,
            outcome: "ok".into(),
            log: Vec::new(),
            stdout: String::new(),
            stderr: String::new(),
            input: None,
        }
    }

    #[test]
    fn each_extension_keeps_its_newest_logs_and_instances_stay_apart() {
        let (a, b) = (Arc::new("a"), Arc::new("b"));
        let mut pending = Pending::default();
        let kept = KEPT_EXECUTIONS + 50;
        let mut pushed_out = Vec::new();
        for n in 0..kept {
            pushed_out.extend(pending.keep(Arc::clone(&a), log("hook", n)));
        }
        assert!(pending.keep(Arc::clone(&a), log("other", 1)).is_none());
        assert!(pending.keep(Arc::clone(&b), log("hook", 7)).is_none());
        assert_eq!(pushed_out.iter().map(|e| e.at).collect::<Vec<_>>(), (0..50).collect::<Vec<_>>(), "the oldest go first");
        let (groups, flushes) = pending.into_groups();
        assert!(flushes.is_empty());
        let of = |instance: &Arc<&str>| {
            let (_, entries) = groups.iter().find(|(i, _)| Arc::ptr_eq(i, instance)).expect("the instance's group");
            let mut hook: Vec<i64> = entries.iter().filter(|e| e.extension == "hook").map(|e| e.at).collect();
            hook.sort_unstable();
            (hook, entries.iter().filter(|e| e.extension == "other").count())
        };
        assert_eq!(of(&a), ((50..kept).collect::<Vec<_>>(), 1), "instance a: its newest hooks and its other");
        assert_eq!(of(&b), (vec![7], 0), "instance b: its own only");
    }

    #[tokio::test]
    async fn a_flush_is_answered_and_the_task_ends_with_its_last_writer() {
        let writer = LogWriter::spawn();
        let shared = Arc::downgrade(&writer.shared);
        tokio::time::timeout(std::time::Duration::from_secs(5), writer.flush()).await.expect("a flush with nothing kept is answered");
        let copy = writer.clone();
        drop(writer);
        tokio::time::timeout(std::time::Duration::from_secs(5), copy.flush()).await.expect("a copy still flushes");
        drop(copy);
        tokio::time::timeout(std::time::Duration::from_secs(5), async {
            while shared.strong_count() > 0 {
                tokio::time::sleep(std::time::Duration::from_millis(5)).await;
            }
        })
        .await
        .expect("the task ends once no writer is left");
    }
}

//! The worker pool: a fixed number of executions at once per process, handed out fairly between
//! instances. Each round, the free places go one at a time to the instance with queued work
//! that has the fewest executions running here, and no instance may hold more than its share
//! (three quarters of the places), so one instance flooding the queue leaves room for the
//! others' executions, which start as soon as a place is free.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};

use tokio::sync::{mpsc, Notify, Semaphore};
use tokio::task::JoinSet;

use super::execute::Executor;
use super::writer::Write;
use super::QueueSettings;
use crate::clock::Clock;
use crate::store::ControlDb;

pub(super) struct Dispatcher {
    pub runtime: ExecutionRuntime,
    pub control: ControlDb,
    pub clock: Arc<dyn Clock>,
    pub settings: QueueSettings,
    pub wake: Arc<Notify>,
    pub executor: Arc<Executor>,
    pub writes: mpsc::Sender<Write>,
    /// This process's node id, recorded on the jobs it claims.
    pub node: Arc<str>,
}

/// The runtime executions run on; shut down (without waiting) with the dispatcher.
pub(super) struct ExecutionRuntime(Option<tokio::runtime::Runtime>);

impl ExecutionRuntime {
    pub fn new(runtime: tokio::runtime::Runtime) -> ExecutionRuntime {
        ExecutionRuntime(Some(runtime))
    }

    fn handle(&self) -> &tokio::runtime::Handle {
        self.0.as_ref().expect("present until dropped").handle()
    }
}

impl Drop for ExecutionRuntime {
    fn drop(&mut self) {
        if let Some(runtime) = self.0.take() {
            runtime.shutdown_background();
        }
    }
}

/// Executions running in this process, per instance.
type Running = Arc<Mutex<HashMap<String, usize>>>;

impl Dispatcher {
    /// Runs until aborted; dropping it (with its `JoinSet`) ends the executions it started,
    /// which a later start finds `running` and queues again.
    pub async fn run(self) {
        let places = Arc::new(Semaphore::new(self.settings.workers));
        let running: Running = Arc::default();
        let mut executions = JoinSet::new();
        loop {
            while executions.try_join_next().is_some() {}
            let free = places.available_permits();
            let started = if free > 0 { self.start_some(free, &places, &running, &mut executions).await } else { 0 };
            if started == 0 {
                tokio::select! {
                    _ = self.wake.notified() => {}
                    _ = tokio::time::sleep(self.settings.poll_interval) => {}
                }
            }
        }
    }

    async fn start_some(&self, free: usize, places: &Arc<Semaphore>, running: &Running, executions: &mut JoinSet<()>) -> usize {
        let queued = match self.control.queued_instances().await {
            Ok(q) => q,
            Err(e) => {
                tracing::error!(error = %e, "the extension queue could not be read");
                return 0;
            }
        };
        let share = self.settings.instance_share();
        let counts = running.lock().expect("running lock").clone();
        let mut started = 0;
        for (customer_id, places_for) in allocate(free, share, &queued, &counts) {
            // Fewer may be queued than given: the places left over go out next round.
            let claimed = match self.control.claim_jobs(&customer_id, places_for, self.clock.now_millis(), &self.node).await {
                Ok(c) => c,
                Err(e) => {
                    tracing::error!(error = %e, "queued extension calls could not be claimed");
                    continue;
                }
            };
            for job in claimed {
                // Never waits: no more were claimed than places were free.
                let Ok(place) = places.clone().acquire_owned().await else { return started };
                *running.lock().expect("running lock").entry(job.customer_id.clone()).or_default() += 1;
                let (executor, writes, clock, wake, running) =
                    (self.executor.clone(), self.writes.clone(), self.clock.clone(), self.wake.clone(), running.clone());
                executions.spawn_on(
                    async move {
                        let outcome = executor.execute(&job).await;
                        let _ = writes.send(Write::Finish(job.id.clone(), outcome, clock.now_millis())).await;
                        if let Some(n) = running.lock().expect("running lock").get_mut(&job.customer_id) {
                            *n -= 1;
                        }
                        drop(place);
                        wake.notify_one();
                    },
                    self.runtime.handle(),
                );
                started += 1;
            }
        }
        started
    }
}

/// How many of `free` places each instance with queued work gets: one at a time to the instance
/// with the fewest running (here) plus already given, never beyond `share`.
fn allocate(free: usize, share: usize, queued: &[String], running: &HashMap<String, usize>) -> Vec<(String, usize)> {
    let mut given: Vec<(String, usize, usize)> = queued.iter().map(|id| (id.clone(), running.get(id).copied().unwrap_or(0), 0)).collect();
    for _ in 0..free {
        let next = given.iter_mut().filter(|(_, run, give)| run + give < share).min_by_key(|(_, run, give)| run + give);
        match next {
            Some(entry) => entry.2 += 1,
            None => break,
        }
    }
    given.into_iter().filter(|e| e.2 > 0).map(|(id, _, give)| (id, give)).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn give(free: usize, share: usize, queued: &[&str], running: &[(&str, usize)]) -> HashMap<String, usize> {
        let queued: Vec<_> = queued.iter().map(|c| c.to_string()).collect();
        let running = running.iter().map(|(c, n)| (c.to_string(), *n)).collect();
        allocate(free, share, &queued, &running).into_iter().collect()
    }

    #[test]
    fn places_are_shared_by_what_each_runs() {
        let g = give(4, 12, &["a", "b"], &[]);
        assert_eq!((g["a"], g["b"]), (2, 2));
        // b has nothing running while a holds eleven places: b gets the free ones first.
        let g = give(2, 12, &["a", "b"], &[("a", 11)]);
        assert_eq!(g.get("a"), None);
        assert_eq!(g["b"], 2);
    }

    #[test]
    fn no_instance_takes_more_than_its_share() {
        let g = give(16, 12, &["a"], &[]);
        assert_eq!(g["a"], 12, "a quarter stays free for the others");
        let g = give(3, 12, &["a", "b", "c"], &[("b", 1)]);
        assert_eq!((g["a"], g.get("b"), g["c"]), (2, None, 1));
        assert!(give(4, 12, &["a"], &[("a", 12)]).is_empty());
    }
}

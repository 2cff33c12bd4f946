//! The threads that queued work runs on: asynchronous executions, flow runs and sweeps, monitor
//! runs. They are a runtime of their own, apart from the one serving the API, so that a draining
//! queue takes at most their number of cores; and they run at a lower scheduling priority (a
//! higher nice value), so that when the API and a sweep over a million recipients want the same
//! core, the kernel gives it to the call someone is waiting for. Idle cores still go to the
//! queue: the priority only decides who waits when both are ready. Their reads go to readers of
//! their own (`store::db`), so that they never hold every reader the API needs.

use std::io;

/// Builds the runtime of queued work: `threads` worker threads, each `nice` steps below the
/// process's priority (0: the same priority as the API).
pub fn background_runtime(threads: usize, nice: u8) -> io::Result<tokio::runtime::Runtime> {
    tokio::runtime::Builder::new_multi_thread()
        .worker_threads(threads.max(1))
        .thread_name("herald-async")
        .on_thread_start(move || {
            lower_priority(nice);
            crate::store::mark_background_thread();
        })
        .enable_all()
        .build()
}

/// Lowers the calling thread's priority by `nice` steps (to at most 19, the lowest). On Linux
/// the nice value belongs to the thread (`setpriority` with no process id sets the caller's
/// only); elsewhere it would be the whole process's, the API's too, so nothing is changed there.
fn lower_priority(nice: u8) {
    if nice == 0 || !cfg!(target_os = "linux") {
        return;
    }
    let lowered = rustix::process::getpriority_process(None)
        .and_then(|current| rustix::process::setpriority_process(None, (current + i32::from(nice)).min(19)));
    if let Err(e) = lowered {
        tracing::warn!(error = %e, "the queue's threads run at the API's priority: theirs could not be lowered");
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The priority of a task spawned on `runtime`.
    fn priority_on(runtime: &tokio::runtime::Runtime) -> i32 {
        runtime.block_on(async { tokio::spawn(async { rustix::process::getpriority_process(None).unwrap() }).await.unwrap() })
    }

    #[test]
    fn queued_work_runs_below_the_apis_priority_and_the_api_keeps_its_own() {
        let own = rustix::process::getpriority_process(None).unwrap();
        assert_eq!(priority_on(&background_runtime(1, 5).unwrap()), (own + 5).min(19));
        assert_eq!(rustix::process::getpriority_process(None).unwrap(), own, "the calling thread keeps its priority");
        assert_eq!(priority_on(&background_runtime(1, 0).unwrap()), own);
    }
}

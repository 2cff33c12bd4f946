//! The threads that queued work runs on: asynchronous executions, flow runs and sweeps, monitor
//! runs. They are a runtime of their own, apart from the one serving the API, so that a draining
//! queue takes at most their number of cores; and they run at a lower scheduling priority (a
//! higher nice value), so that when the API and a sweep over a million recipients want the same
//! core, the kernel gives it to the call someone is waiting for; and they ask for long turns on
//! the processor (`crate::scheduling`), so that a call's thread that wakes takes the core from
//! them at once rather than at the end of their turn. Their reads go to readers of
//! their own (`store::db`), so that they never hold every reader the API needs.
//!
//! On Linux the operator may also keep them to cores of their own (`--background-cores own`): the
//! last of the cores the process may use, as many as there are threads, always leaving one or
//! more to the API. A priority only decides who goes first when both are ready; it does not stop
//! a thread of the API from waking on a core where a sweep's thread is in the middle of its run.
//! The threads these threads start inherit their cores: the blocking threads of this runtime,
//! and the SQLite threads of the readers of queued work, which open their connections from here.
//! It is not the default: on two cores it halved a sweep's rate (the sweep's other threads, the
//! writer's among them, still run anywhere, and take that one core from it) for a little off the
//! API's tail (BENCHMARKS.md, "Cores of their own").

use std::io;

/// Builds the runtime of queued work: `threads` worker threads, each `nice` steps below the
/// process's priority (0: the same priority as the API), on cores of their own if `own_cores`.
pub fn background_runtime(threads: usize, nice: u8, own_cores: bool) -> io::Result<tokio::runtime::Runtime> {
    let threads = threads.max(1);
    let cores = if own_cores { cores_of_their_own(threads) } else { None };
    tokio::runtime::Builder::new_multi_thread()
        .worker_threads(threads)
        .thread_name("herald-async")
        .on_thread_start(move || {
            crate::scheduling::lower_priority(nice, "queue's threads");
            crate::scheduling::long_turns();
            if let Some(cores) = &cores {
                keep_to(cores);
            }
            crate::store::mark_background_thread();
        })
        .enable_all()
        .build()
}

/// The cores for `threads` threads of queued work: the last ones of those the process may use,
/// as many as there are threads but one fewer than all of them; `None` (anywhere) when the
/// process may use one core only, or where threads cannot be kept to cores.
fn cores_of_their_own(threads: usize) -> Option<Vec<usize>> {
    choose_cores(&allowed_cores()?, threads)
}

/// The last `threads` of `allowed`, leaving the first one or more to the API.
fn choose_cores(allowed: &[usize], threads: usize) -> Option<Vec<usize>> {
    if allowed.len() < 2 {
        return None;
    }
    let take = threads.clamp(1, allowed.len() - 1);
    Some(allowed[allowed.len() - take..].to_vec())
}

#[cfg(target_os = "linux")]
fn allowed_cores() -> Option<Vec<usize>> {
    let set = rustix::thread::sched_getaffinity(None).ok()?;
    Some((0..rustix::thread::CpuSet::MAX_CPU).filter(|&cpu| set.is_set(cpu)).collect())
}

#[cfg(not(target_os = "linux"))]
fn allowed_cores() -> Option<Vec<usize>> {
    None
}

/// Keeps the calling thread (and the threads it starts) to `cores`.
#[cfg(target_os = "linux")]
fn keep_to(cores: &[usize]) {
    let mut set = rustix::thread::CpuSet::new();
    cores.iter().for_each(|&cpu| set.set(cpu));
    if let Err(e) = rustix::thread::sched_setaffinity(None, &set) {
        tracing::warn!(error = %e, "a thread of queued work runs on any core: it could not be kept to its own");
    }
}

#[cfg(not(target_os = "linux"))]
fn keep_to(_cores: &[usize]) {}

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
        assert_eq!(priority_on(&background_runtime(1, 5, false).unwrap()), (own + 5).min(19));
        assert_eq!(rustix::process::getpriority_process(None).unwrap(), own, "the calling thread keeps its priority");
        assert_eq!(priority_on(&background_runtime(1, 0, false).unwrap()), own);
    }

    #[test]
    fn queued_work_takes_the_last_cores_and_always_leaves_one() {
        assert_eq!(choose_cores(&[0, 1], 1), Some(vec![1]));
        assert_eq!(choose_cores(&[0, 1, 2, 3], 2), Some(vec![2, 3]));
        assert_eq!(choose_cores(&[0, 1, 2, 3], 4), Some(vec![1, 2, 3]), "one core is left to the API");
        assert_eq!(choose_cores(&[2, 5, 7], 1), Some(vec![7]), "the cores the process may use, not 0..n");
        assert_eq!(choose_cores(&[3], 1), None, "one core: shared");
        assert_eq!(choose_cores(&[], 1), None);
    }

    /// The cores a task spawned on `runtime`, and a thread that task starts, may run on.
    #[cfg(target_os = "linux")]
    fn cores_on(runtime: &tokio::runtime::Runtime) -> (Vec<usize>, Vec<usize>) {
        runtime.block_on(async {
            tokio::spawn(async {
                let started = std::thread::spawn(|| allowed_cores().unwrap()).join().unwrap();
                (allowed_cores().unwrap(), started)
            })
            .await
            .unwrap()
        })
    }

    #[cfg(target_os = "linux")]
    #[test]
    fn queued_work_keeps_to_its_cores_and_the_api_keeps_all_of_its_own() {
        let all = allowed_cores().unwrap();
        let (own, started) = cores_on(&background_runtime(1, 0, true).unwrap());
        match all.len() {
            1 => assert_eq!(own, all, "one core: shared"),
            n => assert_eq!(own, vec![all[n - 1]], "the last core, the others left to the API"),
        }
        assert_eq!(started, own, "a thread started from queued work inherits its cores");
        assert_eq!(allowed_cores().unwrap(), all, "the calling thread keeps its cores");
        assert_eq!(cores_on(&background_runtime(1, 0, false).unwrap()).0, all, "shared: anywhere");
    }
}

//! The guest threads: a runtime of their own on which every execution of an extension runs, so
//! that the threads of the API (its listeners, tokens, the console, the open endpoint's
//! admission) never run guest code, whatever guests do. There are as many as the node has cores
//! unless the operator says otherwise (`--guest-threads`), one turn of the fair share each; they
//! run `--guest-nice` steps below the API (10 by default, as queued work does), so that a thread of
//! the API that wakes while guests keep every core busy takes a core from them; they ask for long
//! turns of the kernel for the same reason (`crate::scheduling`). Their reads of an SQLite
//! instance go to its reader of queued work (`store::mark_background_thread`), so that guests
//! never hold the readers the API needs, and a reader such a thread opens inherits its priority.

use std::future::Future;

/// The runtime of the guest threads; stopped without waiting when dropped (a server's stop).
pub struct GuestThreads {
    runtime: Option<tokio::runtime::Runtime>,
    handle: tokio::runtime::Handle,
    threads: usize,
}

impl GuestThreads {
    /// `threads` guest threads (0: one per core the process may use), `nice` steps below the
    /// caller's priority.
    pub fn start(threads: usize, nice: u8) -> std::io::Result<GuestThreads> {
        let threads = match threads {
            0 => std::thread::available_parallelism().map_or(1, usize::from),
            n => n,
        };
        let runtime = tokio::runtime::Builder::new_multi_thread()
            .worker_threads(threads)
            .thread_name("herald-guest")
            // An execution given a turn before its first poll waits in the runtime's shared queue:
            // a thread looks there before each task of its own, not every 61 (tokio's default),
            // which behind guests that take turns would keep it waiting for seconds.
            .global_queue_interval(1)
            .on_thread_start(move || {
                crate::scheduling::lower_priority(nice, "guest threads");
                crate::scheduling::long_turns();
                crate::store::mark_background_thread();
            })
            .enable_all()
            .build()?;
        let handle = runtime.handle().clone();
        Ok(GuestThreads { runtime: Some(runtime), handle, threads })
    }

    pub fn threads(&self) -> usize {
        self.threads
    }

    /// Runs `execution` on the guest threads; it goes on to its end if the handle is dropped.
    pub fn spawn<F>(&self, execution: F) -> tokio::task::JoinHandle<F::Output>
    where
        F: Future + Send + 'static,
        F::Output: Send + 'static,
    {
        self.handle.spawn(execution)
    }
}

impl Drop for GuestThreads {
    fn drop(&mut self) {
        if let Some(runtime) = self.runtime.take() {
            runtime.shutdown_background();
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn executions_run_on_guest_threads_below_the_callers_priority() {
        let own = rustix::process::getpriority_process(None).unwrap();
        let guests = GuestThreads::start(1, 5).unwrap();
        let caller = tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap();
        let (name, priority) =
            caller
                .block_on(guests.spawn(async {
                    (std::thread::current().name().map(str::to_string), rustix::process::getpriority_process(None).unwrap())
                }))
                .unwrap();
        assert_eq!(name.as_deref(), Some("herald-guest"));
        if cfg!(target_os = "linux") {
            assert_eq!(priority, (own + 5).min(19));
        }
        assert_eq!(rustix::process::getpriority_process(None).unwrap(), own, "the caller keeps its priority");
        // Dropped inside an asynchronous context (a server stopping) without a panic.
        caller.block_on(async move { drop(guests) });
    }
}

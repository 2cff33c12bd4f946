//! How long the kernel lets each of Herald's threads run before a thread that has just woken may
//! take its core: short for the threads that answer calls, long for queued work (imports, sweeps,
//! flow runs) and for SQLite's writer, which runs an import's batches.
//!
//! On two cores busy with an import, a call's thread that wakes with its request often found both
//! cores taken by threads of the import, and waited for one of them to use up its turn (about
//! 1.4 ms by default here) before it could answer: most of the tail of `GET` during an import
//! (BENCHMARKS.md, "Calls that wake before bulk work"). Linux (6.12 and later, the EEVDF
//! scheduler) lets a thread ask for a shorter or longer turn (`sched_setattr`'s `sched_runtime`
//! for an ordinary thread, within 0.1 to 100 ms): a woken thread with a short turn is due sooner
//! and takes the core from one with a long turn. The share of the processor each thread gets is
//! unchanged (that is its nice value: the queue's threads keep theirs), only who waits less.
//!
//! A thread's turn passes to the threads it starts: SQLite's connection threads inherit the turn
//! of the thread that opened them. Every SQLite database's writer (each instance's, and the
//! control plane's) is opened under the long turn (`with_long_turns`) whichever thread opens it:
//! an instance's writer runs an import's batches, tens of milliseconds each, and a call's thread
//! that wakes meanwhile should not wait for the batch's turn to end. It runs the callers' writes
//! too, which a long turn delays only while every core is busy: measured, the p99 of `GET` during
//! an import fell from 2.23 to 1.71 ms (median of 4 alternated rounds) against the writer on
//! short turns, and a load of creates alone that keeps both cores busy ran about 3% slower,
//! within the machine's drift (BENCHMARKS.md). Elsewhere (other systems, older kernels, a thread
//! under another policy) nothing changes; failures are logged at debug level only, as a turn is
//! a preference and never a condition for running.

use std::future::Future;
use std::pin::Pin;
use std::task::{Context, Poll};

/// The turn of the threads that answer calls: the shortest the kernel allows.
pub const PROMPT_TURN_NS: u64 = 100_000;

/// The turn of bulk work: long enough that a thread answering a call is always due before it.
pub const LONG_TURN_NS: u64 = 20_000_000;

/// Asks for the kernel's own turn (its base slice), as a thread that asked for none has.
pub const KERNEL_TURN_NS: u64 = 0;

/// Gives the calling thread short turns (for the API runtime's threads: `on_thread_start`).
pub fn prompt_turns() {
    set_turn(PROMPT_TURN_NS);
}

/// Gives the calling thread long turns (the queue's threads).
pub fn long_turns() {
    set_turn(LONG_TURN_NS);
}

/// The calling thread's turn in nanoseconds, where the kernel tells it (Linux 6.12 and later).
pub fn current_turn() -> Option<u64> {
    turn_of(0)
}

/// The turn of thread `tid` in nanoseconds (0: the calling thread), where the kernel tells it.
/// Another process's, for a single-threaded one such as a PostgreSQL backend, is its `pid`'s.
pub fn turn_of(tid: i32) -> Option<u64> {
    os::get(tid).map(|attr| attr.sched_runtime).filter(|ns| *ns > 0)
}

/// Gives thread `tid` (0: the calling thread) turns of `ns`, keeping its nice value. Changing
/// another user's thread needs `CAP_SYS_NICE`.
pub fn set_turn_of(tid: i32, ns: u64) -> std::io::Result<()> {
    os::set(tid, ns)
}

/// Runs `future` with the long turn on whatever thread polls it, and gives that thread its own
/// turn back after every poll: threads started meanwhile (SQLite's connection thread) keep the
/// long one, whichever thread opened them.
pub fn with_long_turns<F: Future>(future: F) -> WithLongTurns<F> {
    WithLongTurns { future: Box::pin(future) }
}

pub struct WithLongTurns<F> {
    future: Pin<Box<F>>,
}

impl<F: Future> Future for WithLongTurns<F> {
    type Output = F::Output;

    fn poll(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<F::Output> {
        let own = current_turn();
        set_turn(LONG_TURN_NS);
        let polled = self.future.as_mut().poll(cx);
        if let Some(own) = own {
            set_turn(own);
        }
        polled
    }
}

/// Lowers the calling thread's priority by `nice` steps (to at most 19, the lowest), for the
/// threads of queued work and of guests (`who`, for the warning). On Linux the nice value belongs
/// to the thread (`setpriority` with no process id sets the caller's only); elsewhere it would be
/// the whole process's, the API's too, so nothing is changed there.
pub fn lower_priority(nice: u8, who: &str) {
    if nice == 0 || !cfg!(target_os = "linux") {
        return;
    }
    let lowered = rustix::process::getpriority_process(None)
        .and_then(|current| rustix::process::setpriority_process(None, (current + i32::from(nice)).min(19)));
    if let Err(e) = lowered {
        tracing::warn!(error = %e, "the {who} run at the API's priority: theirs could not be lowered");
    }
}

fn set_turn(ns: u64) {
    if let Err(e) = os::set(0, ns) {
        tracing::debug!(error = %e, turn_ns = ns, "this thread keeps the kernel's default turn");
    }
}

#[cfg(target_os = "linux")]
mod os {
    use std::io;

    /// `struct sched_attr` (include/uapi/linux/sched/types.h), its first version's 48 bytes.
    #[repr(C)]
    #[derive(Default)]
    pub struct Attr {
        size: u32,
        policy: u32,
        flags: u64,
        nice: i32,
        priority: u32,
        pub sched_runtime: u64,
        deadline: u64,
        period: u64,
    }

    const SCHED_OTHER: u32 = 0;

    /// Thread `tid`'s attributes, 0 the calling thread's (`None` where the kernel has no
    /// `sched_getattr`, or no such thread).
    pub fn get(tid: i32) -> Option<Attr> {
        if tid < 0 {
            return None;
        }
        let mut attr = Attr { size: std::mem::size_of::<Attr>() as u32, ..Attr::default() };
        // SAFETY: the kernel writes at most `size` bytes into `attr`, which is that large and
        // lives across the call; a thread id of 0 is the calling thread.
        #[allow(unsafe_code)]
        let done = unsafe { libc::syscall(libc::SYS_sched_getattr, tid, &mut attr as *mut Attr, attr.size, 0) };
        (done == 0).then_some(attr)
    }

    /// Asks for turns of `ns` for thread `tid` (0: the calling thread), an ordinary
    /// (`SCHED_OTHER`) one, keeping its nice value (which `sched_setattr` would otherwise set too).
    pub fn set(tid: i32, ns: u64) -> io::Result<()> {
        if tid < 0 {
            return Err(io::ErrorKind::InvalidInput.into());
        }
        let current = get(tid).ok_or_else(io::Error::last_os_error)?;
        if current.policy != SCHED_OTHER {
            return Ok(());
        }
        let attr = Attr {
            size: std::mem::size_of::<Attr>() as u32,
            policy: SCHED_OTHER,
            nice: current.nice,
            sched_runtime: ns,
            ..Attr::default()
        };
        // SAFETY: `attr` is a valid `struct sched_attr` of `size` bytes that the kernel only
        // reads; a thread id of 0 is the calling thread.
        #[allow(unsafe_code)]
        let done = unsafe { libc::syscall(libc::SYS_sched_setattr, tid, &attr as *const Attr, 0) };
        if done == 0 {
            Ok(())
        } else {
            Err(io::Error::last_os_error())
        }
    }
}

#[cfg(not(target_os = "linux"))]
mod os {
    pub struct Attr {
        pub sched_runtime: u64,
    }

    pub fn get(_tid: i32) -> Option<Attr> {
        None
    }

    pub fn set(_tid: i32, _ns: u64) -> std::io::Result<()> {
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// On a kernel that tells turns (this machine's), each kind of thread gets its own, a thread it
    /// starts inherits it, the nice value stays, and `with_long_turns` gives the poller's back.
    #[test]
    fn threads_get_their_turns_and_pass_them_on() {
        let default = std::thread::spawn(current_turn).join().unwrap();
        let Some(default) = default else { return };
        assert!(default != PROMPT_TURN_NS && default != LONG_TURN_NS, "the default is neither: {default}");
        std::thread::spawn(move || {
            rustix::process::setpriority_process(None, 5).unwrap();
            prompt_turns();
            assert_eq!(current_turn(), Some(PROMPT_TURN_NS));
            assert_eq!(rustix::process::getpriority_process(None).unwrap(), 5, "the nice value stays");
            let started = std::thread::spawn(current_turn).join().unwrap();
            assert_eq!(started, Some(PROMPT_TURN_NS), "a started thread inherits the turn");

            let opened = tokio::runtime::Builder::new_current_thread()
                .build()
                .unwrap()
                .block_on(with_long_turns(async { std::thread::spawn(current_turn).join().unwrap() }));
            assert_eq!(opened, Some(LONG_TURN_NS), "a thread started under with_long_turns has the long turn");
            assert_eq!(current_turn(), Some(PROMPT_TURN_NS), "the poller has its own back");
            long_turns();
            assert_eq!(current_turn(), Some(LONG_TURN_NS));
        })
        .join()
        .unwrap();
    }
}

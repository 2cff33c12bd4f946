//! What one execution used of the processor: CPU time on its turns, and time waiting for them
//! (the rest of its receipt, memory, host calls and outbound requests, is counted in its store's
//! `CallState`).
//!
//! CPU time is measured per poll of the execution. Reading the thread's CPU clock is a system
//! call (about 0.8 us on this project's machine, against 23 ns for the monotonic clock's vDSO
//! read: `bench/neighbours.sh` prints both), and most calls are one short poll: reading it
//! around every poll would cost an uncontended call more than the 3 % this may take. So:
//!
//! - a poll shorter than `SHORT_POLL` (1 ms of the monotonic clock) is charged its wall time,
//!   which is its CPU time unless the kernel ran another thread on its core meanwhile (an
//!   interruption counted in, at most the rest of that millisecond);
//! - a longer one is charged from the thread's CPU clock: what the thread used since it last
//!   read that clock, less what the short polls in between were charged; that is the poll, plus
//!   the little the thread did between polls (tokio's own work, an outbound connection's task),
//!   never more than the poll's wall time, and never less than what the thread used since the
//!   poll's first reading (its first epoch tick): short polls that the kernel interrupted were
//!   charged more than they used, which would otherwise be taken off this one again.
//!
//! The epoch callback asks the same during a poll (`in_poll`), for the CPU budget and the fair
//! share. Every field is an atomic only so that the callback (a closure of the store) and the
//! future that polls the execution can share it; both run on the same thread, one at a time.

use std::cell::Cell;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering::Relaxed};
use std::sync::OnceLock;
use std::time::{Duration, Instant};

/// A poll shorter than this is charged its wall time; a longer one is read on the CPU clock.
pub const SHORT_POLL: Duration = Duration::from_millis(1);
const SHORT_POLL_NS: u64 = SHORT_POLL.as_nanos() as u64;

thread_local! {
    /// This thread's CPU clock when it last read it (0: never), and the wall time charged to
    /// short polls since then.
    static THREAD_CLOCK: Cell<(u64, u64)> = const { Cell::new((0, 0)) };
}

pub struct CallMeter {
    /// The CPU budget of the call, in nanoseconds.
    budget_ns: u64,
    cpu_ns: AtomicU64,
    wait_ns: AtomicU64,
    /// When the current poll began, in nanoseconds since `origin()`.
    poll_started: AtomicU64,
    /// The thread's CPU clock at the current poll's first reading of it (`NO_MARK` before).
    cpu_mark: AtomicU64,
    over_budget: AtomicBool,
}

/// No reading of the CPU clock in this poll yet.
const NO_MARK: u64 = u64::MAX;

impl Default for CallMeter {
    fn default() -> CallMeter {
        CallMeter::new(Duration::MAX)
    }
}

impl CallMeter {
    pub fn new(budget: Duration) -> CallMeter {
        CallMeter {
            budget_ns: u64::try_from(budget.as_nanos()).unwrap_or(u64::MAX),
            cpu_ns: AtomicU64::new(0),
            wait_ns: AtomicU64::new(0),
            poll_started: AtomicU64::new(0),
            cpu_mark: AtomicU64::new(NO_MARK),
            over_budget: AtomicBool::new(false),
        }
    }

    pub(super) fn begin_poll(&self) {
        // A thread's first poll starts its clock (once per thread).
        THREAD_CLOCK.with(|clock| {
            if clock.get().0 == 0 {
                clock.set((thread_cpu_ns(), 0));
            }
        });
        self.poll_started.store(since_origin(), Relaxed);
        self.cpu_mark.store(NO_MARK, Relaxed);
    }

    /// A long poll's CPU from the thread's clock read `now`: what the thread used since its last
    /// reading less the short polls charged meanwhile, but never less than what it used since
    /// this poll's first reading (exact: short polls that the kernel interrupted were charged
    /// more than they used, and would be taken off twice) nor more than the poll's wall time.
    fn long_poll(&self, now: u64, wall: u64, (read, charged): (u64, u64)) -> u64 {
        let since_mark = match self.cpu_mark.load(Relaxed) {
            NO_MARK => {
                self.cpu_mark.store(now, Relaxed);
                0
            }
            mark => now.saturating_sub(mark),
        };
        now.saturating_sub(read).saturating_sub(charged).max(since_mark).min(wall)
    }

    /// The CPU the current poll has used so far (from inside a poll: the epoch callback, the
    /// execution's record).
    pub fn in_poll(&self) -> u64 {
        let wall = since_origin().saturating_sub(self.poll_started.load(Relaxed));
        if wall < SHORT_POLL_NS {
            return wall;
        }
        self.long_poll(thread_cpu_ns(), wall, THREAD_CLOCK.with(Cell::get))
    }

    /// Ends the current poll: what it used is added to the call's CPU time, and returned.
    pub(super) fn end_poll(&self) -> u64 {
        let wall = since_origin().saturating_sub(self.poll_started.load(Relaxed));
        let used = THREAD_CLOCK.with(|clock| {
            let (read, charged) = clock.get();
            if wall < SHORT_POLL_NS {
                clock.set((read, charged + wall));
                return wall;
            }
            let now = thread_cpu_ns();
            clock.set((now, 0));
            self.long_poll(now, wall, (read, charged))
        });
        self.cpu_ns.fetch_add(used, Relaxed);
        used
    }

    pub(super) fn waited(&self, waited: Duration) {
        self.wait_ns.fetch_add(u64::try_from(waited.as_nanos()).unwrap_or(u64::MAX), Relaxed);
    }

    /// Whether the call has now used its CPU budget, counting `in_poll` for the poll under way
    /// (from the epoch callback); once it has, it stays so.
    pub fn spent_budget(&self, in_poll: u64) -> bool {
        if self.cpu_ns.load(Relaxed).saturating_add(in_poll) >= self.budget_ns {
            self.over_budget.store(true, Relaxed);
        }
        self.over_budget.load(Relaxed)
    }

    /// Whether the call was stopped for its CPU budget.
    pub fn was_over_budget(&self) -> bool {
        self.over_budget.load(Relaxed)
    }

    pub fn budget(&self) -> Duration {
        Duration::from_nanos(self.budget_ns)
    }

    pub fn cpu(&self) -> Duration {
        Duration::from_nanos(self.cpu_ns.load(Relaxed))
    }

    /// The CPU time used so far, the poll under way included (from inside a poll: the
    /// execution's record is made in its last one).
    pub fn cpu_so_far(&self) -> Duration {
        Duration::from_nanos(self.cpu_ns.load(Relaxed).saturating_add(self.in_poll()))
    }

    pub fn waiting(&self) -> Duration {
        Duration::from_nanos(self.wait_ns.load(Relaxed))
    }
}

/// The process's reference point for the monotonic clock readings kept as integers.
fn origin() -> Instant {
    static ORIGIN: OnceLock<Instant> = OnceLock::new();
    *ORIGIN.get_or_init(Instant::now)
}

fn since_origin() -> u64 {
    u64::try_from(origin().elapsed().as_nanos()).unwrap_or(u64::MAX)
}

/// The calling thread's CPU time in nanoseconds (`CLOCK_THREAD_CPUTIME_ID`).
pub fn thread_cpu_ns() -> u64 {
    let mut now = libc::timespec { tv_sec: 0, tv_nsec: 0 };
    // SAFETY: `now` is a valid timespec for the call to write.
    #[allow(unsafe_code)]
    let read = unsafe { libc::clock_gettime(libc::CLOCK_THREAD_CPUTIME_ID, &mut now) };
    if read != 0 {
        return 0;
    }
    (now.tv_sec as u64).saturating_mul(1_000_000_000).saturating_add(now.tv_nsec as u64)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Burns the CPU for about `ms` milliseconds of this thread's CPU time.
    fn burn(ms: u64) {
        burn_us(ms * 1000);
    }

    fn burn_us(us: u64) {
        let until = thread_cpu_ns() + us * 1000;
        let mut n = 0u64;
        while thread_cpu_ns() < until {
            n = std::hint::black_box(n.wrapping_add(1));
        }
    }

    #[test]
    fn a_long_poll_is_counted_on_the_cpu_clock_and_a_short_one_on_the_wall_clock() {
        let meter = CallMeter::new(Duration::from_millis(30));
        meter.begin_poll();
        burn(5);
        assert!(!meter.spent_budget(meter.in_poll()), "5 ms of 30");
        // Asleep on this turn (as a thread the kernel runs another on): not counted.
        std::thread::sleep(Duration::from_millis(50));
        burn(5);
        let used = meter.end_poll();
        assert!((9_000_000..30_000_000).contains(&used), "about 10 ms of CPU, not the 60 ms of wall time: {used}");
        assert!(!meter.was_over_budget());
        // Short polls: their wall time, and not counted twice by the next long one.
        for _ in 0..10 {
            meter.begin_poll();
            burn_us(100);
            meter.end_poll();
        }
        let after_short = meter.cpu();
        assert!(after_short >= Duration::from_nanos(used + 1_000_000), "ten polls of at least 0.1 ms each: {after_short:?}");
        meter.begin_poll();
        burn(25);
        assert!(meter.spent_budget(meter.in_poll()), "about 36 ms of a budget of 30");
        let long = meter.end_poll();
        assert!((24_000_000..30_000_000).contains(&long), "the long poll alone, the short ones not again: {long}");
        assert!(meter.was_over_budget());
    }
}

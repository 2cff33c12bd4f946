//! The fair share of the node's guest threads between instances.
//!
//! Every execution of an extension (any kind, synchronous or queued) runs on the guest threads
//! (`threads.rs`) inside `Metered`, which polls it only while it holds a turn of the `FairShare`
//! and gives the turn back whenever the execution has to wait: for I/O (a host call, an outbound
//! request, a timer) or because the scheduler asked it to. So a guest blocked on a host call
//! holds no turn, and only guests that can run compete for the threads.
//!
//! Who gets a free turn, and who should give theirs back, is `shares.rs`: the instance with the
//! least CPU used per weight. A new execution asks for its first turn on its caller's thread,
//! before it is spawned: while every guest thread is inside a guest, an execution that asked only
//! once a thread polled it could not tell the running guests it waits. A running guest is asked at
//! every epoch tick (`engine::TICK`) through its store's epoch callback (`call.rs`): it yields
//! (`UpdateDeadline::Yield`) when an execution that is due before it waits, and after a whole tick
//! on one turn in any case (an execution woken from I/O asks for its turn only once a guest
//! thread has polled it); otherwise it runs on. An execution that starts waiting while its
//! instance has nothing running advances the engine's epoch at once, so the running guests are
//! asked at their next loop or call rather than at the next tick: a quiet instance's call waits
//! for a turn about as long as a guest takes to reach its next check, not a tick. The guest
//! threads look at their runtime's shared queue before every task of their own
//! (`threads.rs`), so an execution given a turn there is polled next.
//!
//! What is counted is CPU time (`meter.rs`): time in the execution's polls, on the thread's CPU
//! clock for a poll of 1 ms or more. Time waiting for a turn is counted apart (`wait_ns`).
//!
//! Why not `UpdateDeadline::YieldCustom` with a future that waits for the turn: a guest that
//! waits for I/O would keep its turn (only a guest that reaches a tick gives it back), and a guest
//! that never reaches one (short calls, most of them) would never be counted. Wrapping the whole
//! execution counts and schedules every poll, guest code and host code alike.

mod meter;
pub mod shares;
mod threads;

use std::future::Future;
use std::pin::Pin;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::task::{Context, Poll, Waker};
use std::time::Instant;

pub use meter::{thread_cpu_ns, CallMeter};
use shares::{AccountId, Acquired, Shares};
pub use threads::GuestThreads;

/// The node's turns on the guest threads, shared between instances (see the module's text).
pub struct FairShare {
    shares: Mutex<Shares<Ticket>>,
    /// Whether any execution waits for a turn: read by every epoch callback without the lock.
    contended: AtomicBool,
    /// Makes every running guest check at once (the engine's `increment_epoch`).
    kick: Box<dyn Fn() + Send + Sync>,
}

impl FairShare {
    pub fn new(slots: usize, kick: impl Fn() + Send + Sync + 'static) -> FairShare {
        FairShare { shares: Mutex::new(Shares::new(slots)), contended: AtomicBool::new(false), kick: Box::new(kick) }
    }

    /// The account of instance `name` (of CPU weight `weight`) for one more execution, which
    /// `metered` must then run (it leaves the account when it ends or is dropped).
    pub fn join(&self, name: &str, weight: u32) -> AccountId {
        self.lock().join(name, weight)
    }

    /// Runs `execution` of `account` (`join`) on its turns, counting what it uses into `meter`.
    /// Its first turn is asked for here, on the caller's thread, before the execution reaches a
    /// guest thread: while every guest thread is busy, a new execution polled only once a
    /// thread is free could not tell the running guests that it waits, and they would not give
    /// way to it.
    pub fn metered<F: Future>(self: &Arc<Self>, account: AccountId, meter: Arc<CallMeter>, execution: F) -> Metered<F> {
        let turn = match self.request(account) {
            None => Turn::Granted,
            Some(ticket) => Turn::Waiting(ticket, Instant::now()),
        };
        Metered { execution: Box::pin(execution), fair: Arc::clone(self), account, meter, turn }
    }

    /// A turn for `account`: `None` when it is given at once, otherwise its place in line (and
    /// the running guests are asked to check at once when nothing of the account runs).
    fn request(&self, account: AccountId) -> Option<Ticket> {
        let ticket = Ticket(Arc::default());
        let starved = {
            let mut shares = self.lock();
            if shares.acquire(account, ticket.clone()) == Acquired::Now {
                return None;
            }
            self.contended.store(true, Ordering::Relaxed);
            !shares.is_running(account)
        };
        if starved {
            (self.kick)();
        }
        Some(ticket)
    }

    /// Whether an execution of `account` that has used `in_progress_ns` on its turn should give it
    /// back now (its epoch callback asks).
    pub fn should_yield(&self, account: AccountId, in_progress_ns: u64) -> bool {
        self.contended.load(Ordering::Relaxed) && self.lock().should_yield(account, in_progress_ns)
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, Shares<Ticket>> {
        // The books stay consistent across a panic elsewhere: every change is made whole.
        self.shares.lock().unwrap_or_else(std::sync::PoisonError::into_inner)
    }

    /// Gives back `account`'s turn, and wakes the execution that gets it.
    fn release(&self, account: AccountId, used_ns: u64) {
        let next = {
            let mut shares = self.lock();
            let next = shares.release(account, used_ns);
            self.contended.store(shares.has_waiting(), Ordering::Relaxed);
            next
        };
        if let Some((_, ticket)) = next {
            ticket.grant();
        }
    }
}

/// A waiting execution's place in line: granted by whoever gives a turn to it.
#[derive(Clone)]
struct Ticket(Arc<Mutex<TicketState>>);

#[derive(Default)]
struct TicketState {
    granted: bool,
    waker: Option<Waker>,
}

impl PartialEq for Ticket {
    fn eq(&self, other: &Ticket) -> bool {
        Arc::ptr_eq(&self.0, &other.0)
    }
}

impl Ticket {
    fn lock(&self) -> std::sync::MutexGuard<'_, TicketState> {
        self.0.lock().unwrap_or_else(std::sync::PoisonError::into_inner)
    }

    fn grant(&self) {
        let waker = {
            let mut state = self.lock();
            state.granted = true;
            state.waker.take()
        };
        if let Some(waker) = waker {
            waker.wake();
        }
    }

    /// Whether the turn was given; otherwise `waker` is woken when it is.
    fn granted_or_wake(&self, waker: &Waker) -> bool {
        let mut state = self.lock();
        if !state.granted {
            match &mut state.waker {
                Some(kept) if kept.will_wake(waker) => {}
                kept => *kept = Some(waker.clone()),
            }
        }
        state.granted
    }
}

enum Turn {
    /// Holds no turn and waits for none (between two polls).
    None,
    /// Was given a turn before its first poll.
    Granted,
    /// In line since then.
    Waiting(Ticket, Instant),
}

/// An execution run on its instance's turns (`FairShare::metered`).
pub struct Metered<F> {
    execution: Pin<Box<F>>,
    fair: Arc<FairShare>,
    account: AccountId,
    meter: Arc<CallMeter>,
    turn: Turn,
}

impl<F: Future> Future for Metered<F> {
    type Output = F::Output;

    fn poll(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<F::Output> {
        let this = self.get_mut();
        if let Turn::None = this.turn {
            if let Some(ticket) = this.fair.request(this.account) {
                this.turn = Turn::Waiting(ticket, Instant::now());
            }
        }
        if let Turn::Waiting(ticket, since) = &this.turn {
            if !ticket.granted_or_wake(cx.waker()) {
                return Poll::Pending;
            }
            this.meter.waited(since.elapsed());
        }
        // On a turn: poll, count, and give the turn back (the next poll asks again).
        this.turn = Turn::None;
        this.meter.begin_poll();
        let polled = this.execution.as_mut().poll(cx);
        let used = this.meter.end_poll();
        this.fair.release(this.account, used);
        polled
    }
}

impl<F> Drop for Metered<F> {
    fn drop(&mut self) {
        let mut shares = self.fair.lock();
        let next = match std::mem::replace(&mut self.turn, Turn::None) {
            Turn::None => None,
            // A turn given and never used (the execution dropped before its first poll) passes on;
            // so does one given while it waited.
            Turn::Granted => shares.release(self.account, 0),
            Turn::Waiting(ticket, _) if !shares.cancel(self.account, &ticket) => shares.release(self.account, 0),
            Turn::Waiting(..) => None,
        };
        self.fair.contended.store(shares.has_waiting(), Ordering::Relaxed);
        shares.leave(self.account);
        drop(shares);
        if let Some((_, ticket)) = next {
            ticket.grant();
        }
    }
}

#[cfg(test)]
mod tests {
    use std::sync::atomic::AtomicUsize;

    use super::*;

    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn a_guest_that_blocks_gives_its_turn_back() {
        let fair = Arc::new(FairShare::new(1, || {}));
        let (unblock, blocked) = tokio::sync::oneshot::channel::<()>();
        // The first execution takes the only turn, then waits on something (a host call).
        let first = tokio::spawn(fair.metered(fair.join("a", 100), Arc::default(), async move {
            blocked.await.unwrap();
            "first"
        }));
        tokio::task::yield_now().await;
        // The second, of another instance, runs to its end while the first is blocked.
        let second = fair.metered(fair.join("b", 100), Arc::default(), async { "second" });
        let done = tokio::time::timeout(std::time::Duration::from_secs(5), second).await;
        assert_eq!(done, Ok("second"), "the blocked execution held no turn");
        unblock.send(()).unwrap();
        assert_eq!(first.await.unwrap(), "first");
        assert!(!fair.contended.load(Ordering::Relaxed));
        assert_eq!(fair.lock().accounts(), 0, "nothing kept of instances with nothing under way");
    }

    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn a_waiting_execution_dropped_passes_its_turn_on() {
        let kicks = Arc::new(AtomicUsize::new(0));
        let fair = {
            let kicks = kicks.clone();
            Arc::new(FairShare::new(1, move || {
                kicks.fetch_add(1, Ordering::Relaxed);
            }))
        };
        let (release, hold) = tokio::sync::oneshot::channel::<()>();
        let (started, running) = tokio::sync::oneshot::channel::<()>();
        let holder = tokio::spawn(fair.metered(fair.join("a", 100), Arc::default(), async move {
            started.send(()).unwrap();
            // Busy on its turn until told (a guest between two ticks).
            std::thread::sleep(std::time::Duration::from_millis(300));
            hold.await.unwrap();
        }));
        running.await.unwrap();
        // b waits while a runs, and is dropped before its turn: a's next turn is not lost. It asks
        // for its turn when it is made, before any poll.
        let mut waiting = Box::pin(fair.metered(fair.join("b", 100), Arc::default(), async {}));
        assert_eq!(kicks.load(Ordering::Relaxed), 1, "nothing of b runs: the running guests are asked at once");
        assert!(futures_util::poll!(waiting.as_mut()).is_pending(), "a holds the only turn");
        drop(waiting);
        release.send(()).unwrap();
        tokio::time::timeout(std::time::Duration::from_secs(5), holder).await.unwrap().unwrap();
        let after = fair.metered(fair.join("c", 100), Arc::default(), async { 7 });
        assert_eq!(tokio::time::timeout(std::time::Duration::from_secs(5), after).await, Ok(7));
        assert!(!fair.lock().has_waiting());
    }
}

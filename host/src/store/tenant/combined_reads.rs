//! Point reads of one instance gathered into one statement while others are in flight
//! (PostgreSQL).
//!
//! Why: on PostgreSQL a point read is a round trip to a backend, a process on the same cores
//! as Herald on a small machine: the API's worker sends the statement and sleeps until the
//! backend answers, a thread switch each way for every read, and the backend reads the socket,
//! runs one statement and writes one answer for each. That switch was most of what separated a
//! read from a route that touches no database (BENCHMARKS.md, "The reads' ratios on a day of
//! usual speed"). Once an instance has as many point reads in flight as the machine has cores
//! (more would not run sooner), a read waits for the next statement instead of taking a
//! connection of its own, and that statement carries every read waiting by then (up to
//! [`MOST_IN_ONE`]), each tagged with its place: one round trip, one wake-up of the backend and
//! of the worker for all of them. A read that finds room goes at once, alone, as before: an
//! instance that is not busy waits for nothing.
//!
//! A read joins a statement that is sent after it was asked for, so it sees every write that was
//! done before it, as a read of its own would.
//!
//! Who sends the next statement: the read that leaves a place in flight hands it to the first
//! read waiting, which gathers the others of its shape and sends them with its own; with nobody
//! waiting, the place is free again. A read dropped while waiting (its client went away) passes
//! on a place it was handed; one dropped while leading leaves its gathered reads without an
//! answer, and each of those reads alone. Nothing waits on a read that is gone.

use std::collections::VecDeque;
use std::sync::{Mutex, PoisonError};

use tokio::sync::oneshot;

use super::recipients::Recipient;
use crate::model::{ModelId, Value};

/// Reads in one statement at most: enough that a busy instance's reads go in a few statements;
/// a power of two, as statements have room for 2, 4, 8 or 16 (`point_reads.rs`).
pub(super) const MOST_IN_ONE: usize = 16;

/// Which point read: by which Person Data field (or, past the last, by key) of which model.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) struct Shape {
    pub model: ModelId,
    pub by: usize,
}

/// The value a point read looks for.
#[derive(Debug, Clone)]
pub(super) enum Param {
    Value(Value),
    Key(i64),
}

/// The point reads of one instance in flight and waiting.
#[derive(Debug)]
pub(super) struct CombinedReads {
    state: Mutex<State>,
    /// Statements in flight at most before reads wait to be gathered.
    in_flight: usize,
}

#[derive(Debug, Default)]
struct State {
    running: usize,
    waiting: VecDeque<Waiting>,
}

#[derive(Debug)]
pub(super) struct Waiting {
    shape: Shape,
    pub param: Param,
    reply: oneshot::Sender<Reply>,
}

#[derive(Debug)]
enum Reply {
    /// Read by another read's statement.
    Read(Option<Recipient>),
    /// The place in flight is this read's: it sends the next statement.
    Lead,
}

/// What a read joining the instance's reads is to do.
pub(super) enum Joined<'a> {
    /// Send a statement with the read's own value and `others`' (which may be none), holding a
    /// place in flight.
    Lead(Lead<'a>),
    /// Another read's statement read it.
    Read(Option<Recipient>),
    /// Read it alone, outside the gathering (the statement that carried it failed or was dropped).
    Alone,
}

/// A place in flight, with the reads gathered for its statement; the place passes on when this
/// is dropped.
pub(super) struct Lead<'a> {
    reads: &'a CombinedReads,
    pub others: Vec<Waiting>,
}

impl CombinedReads {
    pub(super) fn new() -> CombinedReads {
        // Asked once: the answer reads the process's control group on Linux.
        static CORES: std::sync::OnceLock<usize> = std::sync::OnceLock::new();
        let cores = *CORES.get_or_init(|| std::thread::available_parallelism().map_or(2, usize::from));
        CombinedReads::with_in_flight(cores.max(2))
    }

    fn with_in_flight(in_flight: usize) -> CombinedReads {
        CombinedReads { state: Mutex::default(), in_flight }
    }

    fn state(&self) -> std::sync::MutexGuard<'_, State> {
        self.state.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// Joins the instance's point reads with a read of `shape`; `param` makes its value for
    /// another read's statement, only when it waits for one.
    pub(super) async fn join(&self, shape: Shape, param: impl FnOnce() -> Param) -> Joined<'_> {
        let receiver = {
            let mut state = self.state();
            if state.running < self.in_flight {
                state.running += 1;
                let others = gather(&mut state.waiting, shape);
                return Joined::Lead(Lead { reads: self, others });
            }
            let (reply, receiver) = oneshot::channel();
            state.waiting.push_back(Waiting { shape, param: param(), reply });
            receiver
        };
        let mut waiter = Waiter { reads: self, receiver: Some(receiver) };
        let receiver = waiter.receiver.as_mut().expect("set above");
        let reply = receiver.await;
        waiter.receiver = None;
        match reply {
            Ok(Reply::Read(found)) => Joined::Read(found),
            Ok(Reply::Lead) => {
                let others = gather(&mut self.state().waiting, shape);
                Joined::Lead(Lead { reads: self, others })
            }
            // The statement that carried it failed, or was dropped before it answered.
            Err(_) => Joined::Alone,
        }
    }

    /// Gives a place in flight up: to the first read still waiting, or back.
    fn pass_on(&self) {
        let mut state = self.state();
        while let Some(next) = state.waiting.pop_front() {
            if next.reply.send(Reply::Lead).is_ok() {
                return;
            }
        }
        state.running -= 1;
    }
}

/// Takes the waiting reads of `shape`, at most one fewer than a statement carries, in order.
fn gather(waiting: &mut VecDeque<Waiting>, shape: Shape) -> Vec<Waiting> {
    let mut gathered = Vec::new();
    if waiting.is_empty() {
        return gathered;
    }
    let mut kept = VecDeque::with_capacity(waiting.len());
    for read in waiting.drain(..) {
        if read.shape == shape && gathered.len() < MOST_IN_ONE - 1 {
            gathered.push(read);
        } else {
            kept.push_back(read);
        }
    }
    *waiting = kept;
    gathered
}

impl Lead<'_> {
    /// Passes the place on (the next statement may go), then answers the gathered reads with what
    /// this one found for each, in `others`' order.
    pub(super) fn answer(mut self, found: impl IntoIterator<Item = Option<Recipient>>) {
        let others = std::mem::take(&mut self.others);
        drop(self);
        for (read, found) in others.into_iter().zip(found) {
            // A read that went away meanwhile needs no answer.
            let _ = read.reply.send(Reply::Read(found));
        }
    }
}

impl Drop for Lead<'_> {
    fn drop(&mut self) {
        self.reads.pass_on();
        // Reads gathered but not answered (the statement failed) get no reply: each reads alone.
    }
}

/// A read waiting for a statement; dropped before its answer, it passes on a place handed to it.
struct Waiter<'a> {
    reads: &'a CombinedReads,
    receiver: Option<oneshot::Receiver<Reply>>,
}

impl Drop for Waiter<'_> {
    fn drop(&mut self) {
        if let Some(mut receiver) = self.receiver.take() {
            receiver.close();
            if let Ok(Reply::Lead) = receiver.try_recv() {
                self.reads.pass_on();
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use std::sync::Arc;

    use super::*;

    /// What a read of the tests came to: read by another's statement, led one (the keys it
    /// gathered), or alone.
    #[derive(Debug, PartialEq)]
    enum Came {
        Read(Option<i64>),
        Led(Vec<i64>),
        Alone,
    }

    fn key(read: &Waiting) -> i64 {
        match read.param {
            Param::Key(k) => k,
            Param::Value(_) => panic!("the tests read by key"),
        }
    }

    /// A read of key `k` that, when it leads, finds every gathered key but the odd ones.
    fn read(reads: &Arc<CombinedReads>, shape: Shape, k: i64) -> tokio::task::JoinHandle<Came> {
        let reads = Arc::clone(reads);
        tokio::spawn(async move {
            match reads.join(shape, || Param::Key(k)).await {
                Joined::Read(found) => Came::Read(found.map(|r| r.key)),
                Joined::Alone => Came::Alone,
                Joined::Lead(lead) => {
                    let keys: Vec<i64> = lead.others.iter().map(key).collect();
                    let found: Vec<_> = keys.iter().map(|k| (k % 2 == 0).then(|| Recipient { key: *k, values: Vec::new() })).collect();
                    lead.answer(found);
                    Came::Led(keys)
                }
            }
        })
    }

    async fn until_waiting(reads: &CombinedReads, count: usize) {
        while reads.state().waiting.len() < count {
            tokio::task::yield_now().await;
        }
    }

    fn shapes() -> (Shape, Shape) {
        let model = crate::fuzz::demo_model();
        (Shape { model: model.id, by: 0 }, Shape { model: model.id, by: 1 })
    }

    #[tokio::test]
    async fn reads_past_the_room_are_gathered_by_the_next_to_lead() {
        let reads = Arc::new(CombinedReads::with_in_flight(1));
        let (by_key, by_field) = shapes();
        let Joined::Lead(first) = reads.join(by_key, || Param::Key(1)).await else { panic!("a read with room leads") };
        assert!(first.others.is_empty());
        let second = read(&reads, by_key, 2);
        until_waiting(&reads, 1).await;
        let other_shape = read(&reads, by_field, 3);
        until_waiting(&reads, 2).await;
        let (fourth, fifth) = (read(&reads, by_key, 4), read(&reads, by_key, 5));
        until_waiting(&reads, 4).await;
        drop(first);
        assert_eq!(second.await.unwrap(), Came::Led(vec![4, 5]), "the first waiting leads, with the reads of its shape");
        assert_eq!(fourth.await.unwrap(), Came::Read(Some(4)));
        assert_eq!(fifth.await.unwrap(), Came::Read(None), "a read that found nothing is told so");
        assert_eq!(other_shape.await.unwrap(), Came::Led(vec![]), "another shape goes in a statement of its own");
        assert_eq!(reads.state().running, 0, "the place is free again");
    }

    #[tokio::test]
    async fn dropped_reads_leave_no_read_waiting_and_no_place_taken() {
        let reads = Arc::new(CombinedReads::with_in_flight(1));
        let (by_key, _) = shapes();
        // A lead dropped before it answers: its gathered reads read alone.
        let Joined::Lead(lead) = reads.join(by_key, || Param::Key(1)).await else { panic!() };
        let unanswered = Arc::clone(&reads);
        let gathered = tokio::spawn(async move {
            match unanswered.join(by_key, || Param::Key(2)).await {
                Joined::Lead(lead) => {
                    assert_eq!(lead.others.len(), 1);
                    drop(lead);
                    Came::Led(vec![])
                }
                _ => panic!("the first waiting leads"),
            }
        });
        until_waiting(&reads, 1).await;
        let alone = read(&reads, by_key, 6);
        until_waiting(&reads, 2).await;
        drop(lead);
        assert_eq!(gathered.await.unwrap(), Came::Led(vec![]));
        assert_eq!(alone.await.unwrap(), Came::Alone, "a gathered read whose statement is gone reads alone");

        // A waiting read dropped before it is handed the place, and one dropped after (this
        // runtime runs one task at a time: the handed read is not polled before it is dropped).
        for handed_first in [false, true] {
            let Joined::Lead(lead) = reads.join(by_key, || Param::Key(1)).await else { panic!() };
            let waiting = read(&reads, by_key, 7);
            until_waiting(&reads, 1).await;
            if handed_first {
                drop(lead);
                assert_eq!(reads.state().running, 1, "handed on");
                waiting.abort();
                assert!(waiting.await.unwrap_err().is_cancelled());
            } else {
                waiting.abort();
                assert!(waiting.await.unwrap_err().is_cancelled());
                drop(lead);
            }
            assert_eq!(reads.state().running, 0, "no place is lost (handed first: {handed_first})");
        }
        let Joined::Lead(again) = reads.join(by_key, || Param::Key(8)).await else { panic!("room again") };
        drop(again);
        assert_eq!(reads.state().running, 0);
    }
}

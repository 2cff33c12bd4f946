//! Group commit for an instance's writes. A durable commit costs an fsync on SQLite
//! (`synchronous = FULL`) and a WAL flush on PostgreSQL; one per written recipient bounds writes
//! at the disk's flush rate. Here concurrent writes share one transaction, and so one commit:
//!
//! - one writer task per database lends its open transaction to one caller at a time (a
//!   [`Turn`]), each turn inside a savepoint of its own;
//! - a turn that fails (or whose caller goes away) is rolled back to its savepoint, so one failing
//!   write never fails its neighbours;
//! - the transaction commits when nobody else is waiting (or after [`MAX_MEMBERS`] turns), and
//!   only then does a successful turn get its answer: acknowledged still means on disk.
//!
//! Nothing waits to fill a group: a lone write commits at once, and the writes that arrive while
//! a commit is being flushed form the next group.
//!
//! A turn whose writes are one statement ([`GroupCommit::single_write`]) takes no savepoint on
//! SQLite, which undoes a failed statement by itself (one round trip to its worker thread less per
//! write); PostgreSQL still needs one, since a failed statement spoils its whole transaction. Such
//! a turn abandoned after its statement ran keeps it, as a write whose answer was lost would.
//!
//! A turn must only run statements on the lent connection (never wait for another turn of the
//! same database: that would wait for itself).
//!
//! Two ways to take a turn: [`GroupCommit::turn`] lends the transaction to the caller's task, for
//! writes whose statements depend on what the caller computes in between; [`GroupCommit::write`]
//! sends the work to the writer's task, which runs it there. Turns follow one another, so the
//! time between two is what bounds a database's writes a second: a lent turn crosses threads four
//! times (to the caller, to SQLite's worker thread and back, back to the writer), a sent one twice.
//! A sweep's steps wrote at about 5,000 recipients a second either way they were run in parallel
//! (32 or 64 at once): the turns were the bound.

use std::ops::{Deref, DerefMut};

use futures_util::future::BoxFuture;
use futures_util::FutureExt;
use sqlx::{AnyConnection, Executor};
use tokio::sync::{mpsc, oneshot};

use super::db::{Conns, Tx};
use super::{StoreError, StoreResult, Unavailable};
use crate::rsql::Dialect;

/// The most turns in one transaction. PostgreSQL keeps the first 64 subtransactions of a
/// transaction in shared memory; past that every other session's snapshot checks get slower.
const MAX_MEMBERS: usize = 60;

/// Each turn's savepoint (savepoints of one name stack; `ROLLBACK TO` goes to the newest).
const SAVEPOINT: &str = "SAVEPOINT herald_turn";
const UNDO: &str = "ROLLBACK TO SAVEPOINT herald_turn";

/// Tells a kept turn's caller how the group's commit went.
type Committed = Box<dyn FnOnce(Result<(), sqlx::Error>) + Send>;

/// Work sent to the writer ([`GroupCommit::write`]): given the turn (or the error that left none),
/// it ends kept or undone, having answered its caller at once if undone.
type Work = Box<dyn for<'t> FnOnce(Result<&'t mut Turn, sqlx::Error>) -> BoxFuture<'t, Ended> + Send>;

enum Ended {
    Kept(Committed),
    Undone,
}

/// The sending side of a database's group commit (cheap to clone).
#[derive(Clone)]
pub struct GroupCommit {
    requests: mpsc::UnboundedSender<Request>,
    /// Whether a failed statement undoes itself and leaves the transaction usable (SQLite).
    statements_undo_themselves: bool,
}

impl std::fmt::Debug for GroupCommit {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("GroupCommit")
    }
}

enum Request {
    /// Lend the transaction to the caller's task.
    Lend { lend: oneshot::Sender<Result<Lent, sqlx::Error>>, savepoint: bool },
    /// Run the caller's work on the writer's task.
    Run { work: Work, savepoint: bool },
}

impl Request {
    /// Answers a request that gets no turn with `e`.
    async fn refuse(self, e: sqlx::Error) {
        match self {
            Request::Lend { lend, .. } => {
                let _ = lend.send(Err(e));
            }
            Request::Run { work, .. } => {
                work(Err(e)).await;
            }
        }
    }
}

struct Lent {
    tx: Tx,
    back: oneshot::Sender<Returned>,
    savepoint: bool,
}

/// The transaction back from a turn; `kept` when what the turn wrote stays (its caller then
/// waits for the commit).
struct Returned {
    tx: Tx,
    kept: Option<Committed>,
}

impl GroupCommit {
    /// Starts the writer task of a database (on the current runtime; it ends with the last handle).
    pub(super) fn start(conns: Conns, dialect: Dialect) -> GroupCommit {
        let (requests, receiver) = mpsc::unbounded_channel();
        tokio::spawn(writer(conns, receiver));
        GroupCommit { requests, statements_undo_themselves: dialect == Dialect::Sqlite }
    }

    /// Waits for this caller's turn in the writer's transaction.
    pub async fn turn(&self) -> Result<Turn, sqlx::Error> {
        self.turn_with(true).await
    }

    /// A turn in which at most one statement writes (others may read).
    pub async fn single_write(&self) -> Result<Turn, sqlx::Error> {
        self.turn_with(!self.statements_undo_themselves).await
    }

    async fn turn_with(&self, savepoint: bool) -> Result<Turn, sqlx::Error> {
        let (lend, lent) = oneshot::channel();
        self.requests.send(Request::Lend { lend, savepoint }).map_err(|_| stopped())?;
        let lent = lent.await.map_err(|_| stopped())??;
        Ok(Turn { tx: Some(lent.tx), back: Some(lent.back), savepoint: lent.savepoint })
    }

    /// Runs `work` in a turn on the writer's own task (see the module's notes), inside a
    /// savepoint unless `single` (at most one statement writes, as for [`GroupCommit::single_write`]).
    /// `Ok`: what it wrote is kept and the value comes once committed; `Err`: undone, at once.
    pub async fn write<T, F>(&self, single: bool, work: F) -> StoreResult<T>
    where
        T: Send + 'static,
        F: for<'t> FnOnce(&'t mut Turn) -> BoxFuture<'t, StoreResult<T>> + Send + 'static,
    {
        let (answer, answered) = oneshot::channel::<StoreResult<T>>();
        let run: Work = Box::new(move |turn| {
            Box::pin(async move {
                let turn = match turn {
                    Ok(turn) => turn,
                    Err(e) => {
                        let _ = answer.send(Err(StoreError::Db(e)));
                        return Ended::Undone;
                    }
                };
                match work(turn).await {
                    Ok(value) => Ended::Kept(Box::new(move |committed: Result<(), sqlx::Error>| {
                        let _ = answer.send(committed.map(|()| value).map_err(StoreError::Db));
                    })),
                    Err(e) => {
                        let _ = answer.send(Err(e));
                        Ended::Undone
                    }
                }
            })
        });
        let savepoint = !(single && self.statements_undo_themselves);
        self.requests.send(Request::Run { work: run, savepoint }).map_err(|_| StoreError::Db(stopped()))?;
        answered.await.map_err(|_| StoreError::Db(stopped()))?
    }
}

/// One caller's turn: the group's connection, inside a savepoint of the caller's own (but for a
/// single-write turn on SQLite). End it with [`Turn::finish`]; dropped unfinished, what it wrote
/// is undone.
pub struct Turn {
    tx: Option<Tx>,
    back: Option<oneshot::Sender<Returned>>,
    savepoint: bool,
}

impl Deref for Turn {
    type Target = AnyConnection;

    fn deref(&self) -> &AnyConnection {
        self.tx.as_ref().expect("a turn holds its transaction until it ends")
    }
}

impl DerefMut for Turn {
    fn deref_mut(&mut self) -> &mut AnyConnection {
        self.tx.as_mut().expect("a turn holds its transaction until it ends")
    }
}

impl Turn {
    /// Ends the turn with what it did. `Ok`: its writes are kept, and the answer comes once the
    /// group's transaction is committed (or is the commit's error). `Err`: its writes are undone
    /// and the error is the answer, at once.
    pub async fn finish<T, E: Into<StoreError>>(mut self, result: Result<T, E>) -> StoreResult<T> {
        let value = match result {
            Ok(value) => value,
            // Given back as dropped: undone.
            Err(e) => return Err(e.into()),
        };
        let (tx, back) = (self.tx.take().expect("held"), self.back.take().expect("held"));
        let (kept, committed) = oneshot::channel();
        let kept: Committed = Box::new(move |outcome| {
            let _ = kept.send(outcome);
        });
        back.send(Returned { tx, kept: Some(kept) }).map_err(|_| stopped())?;
        match committed.await {
            Ok(Ok(())) => Ok(value),
            Ok(Err(e)) => Err(StoreError::Db(e)),
            Err(_) => Err(StoreError::Db(stopped())),
        }
    }

    /// Undoes what this turn wrote so far; the turn goes on (on PostgreSQL a failed statement
    /// leaves the transaction unusable until then: for example to read why an insert conflicted).
    /// A single-write turn without a savepoint has nothing to undo once its statement failed.
    pub async fn undo(&mut self) -> Result<(), sqlx::Error> {
        if !self.savepoint {
            return Ok(());
        }
        self.execute(UNDO).await.map(|_| ())
    }
}

impl Drop for Turn {
    fn drop(&mut self) {
        if let (Some(tx), Some(back)) = (self.tx.take(), self.back.take()) {
            let _ = back.send(Returned { tx, kept: None });
        }
    }
}

async fn writer(conns: Conns, mut requests: mpsc::UnboundedReceiver<Request>) {
    while let Some(first) = requests.recv().await {
        let mut tx = match conns.begin().await {
            Ok(tx) => tx,
            Err(e) => {
                // Everyone waiting now gets the error (for example: the database is unreachable).
                first.refuse(copy(&e)).await;
                while let Ok(waiting) = requests.try_recv() {
                    waiting.refuse(copy(&e)).await;
                }
                continue;
            }
        };
        let mut kept: Vec<Committed> = Vec::new();
        let mut next = Some(first);
        let mut members = 0;
        let group = loop {
            let request = match next.take() {
                Some(r) => r,
                None if members < MAX_MEMBERS => match requests.try_recv() {
                    Ok(r) => r,
                    Err(_) => break Ok(tx),
                },
                None => break Ok(tx),
            };
            members += 1;
            let served = match request {
                Request::Lend { lend: to, savepoint } => lend(tx, to, savepoint).await,
                Request::Run { work, savepoint } => run(tx, work, savepoint).await,
            };
            match served {
                Ok((back, committed)) => {
                    tx = back;
                    kept.extend(committed);
                }
                Err(e) => break Err(e),
            }
        };
        let outcome = match group {
            Ok(tx) => tx.commit().await,
            // The transaction is gone (rolled back as it dropped): nothing of the group is kept.
            Err(e) => Err(e),
        };
        for waiting in kept {
            waiting(outcome.as_ref().map(|_| ()).map_err(copy));
        }
    }
}

/// Lends `tx` to one caller for its turn; back with the caller's wish to keep its writes, or
/// the error that broke the transaction.
async fn lend(mut tx: Tx, to: oneshot::Sender<Result<Lent, sqlx::Error>>, savepoint: bool) -> Result<(Tx, Option<Committed>), sqlx::Error> {
    if savepoint {
        if let Err(e) = tx.execute(SAVEPOINT).await {
            let _ = to.send(Err(copy(&e)));
            return Err(e);
        }
    }
    let (back, returned) = oneshot::channel();
    let (mut tx, kept) = match to.send(Ok(Lent { tx, back, savepoint })) {
        Ok(()) => match returned.await {
            Ok(r) => (r.tx, r.kept),
            // The turn was forgotten without being dropped: the transaction went with it.
            Err(_) => return Err(stopped()),
        },
        // The caller went away before its turn: nothing was written.
        Err(Ok(lent)) => (lent.tx, None),
        Err(Err(_)) => unreachable!("only a lent transaction is sent here"),
    };
    if kept.is_none() && savepoint {
        tx.execute(UNDO).await?;
    }
    Ok((tx, kept))
}

/// Runs `work` on `tx` here, on the writer's task; back with what it keeps, or the error that
/// broke the transaction. A work that panics is undone (as a lent turn whose task panicked is),
/// and the writer goes on.
async fn run(mut tx: Tx, work: Work, savepoint: bool) -> Result<(Tx, Option<Committed>), sqlx::Error> {
    if savepoint {
        if let Err(e) = tx.execute(SAVEPOINT).await {
            work(Err(copy(&e))).await;
            return Err(e);
        }
    }
    let mut turn = Turn { tx: Some(tx), back: None, savepoint };
    let ended = std::panic::AssertUnwindSafe(work(Ok(&mut turn))).catch_unwind().await;
    let mut tx = turn.tx.take().ok_or_else(stopped)?;
    match ended {
        Ok(Ended::Kept(committed)) => Ok((tx, Some(committed))),
        Ok(Ended::Undone) | Err(_) => {
            if savepoint {
                tx.execute(UNDO).await?;
            }
            Ok((tx, None))
        }
    }
}

fn stopped() -> sqlx::Error {
    sqlx::Error::WorkerCrashed
}

/// The same error for each waiting caller (sqlx's errors are not `Clone`); whether it means the
/// database is unreachable is kept, as the API answers 503 for those.
fn copy(e: &sqlx::Error) -> sqlx::Error {
    if e.is_unavailable() {
        sqlx::Error::Io(std::io::Error::other(e.to_string()))
    } else {
        sqlx::Error::Protocol(format!("the transaction of this write failed: {e}"))
    }
}

#[cfg(test)]
mod tests;

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
use sqlx::{Any, AnyConnection, AnyPool, Executor, Transaction};
use tokio::sync::{mpsc, oneshot};

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
    tx: Transaction<'static, Any>,
    back: oneshot::Sender<Returned>,
    savepoint: bool,
}

/// The transaction back from a turn; `kept` when what the turn wrote stays (its caller then
/// waits for the commit).
struct Returned {
    tx: Transaction<'static, Any>,
    kept: Option<Committed>,
}

impl GroupCommit {
    /// Starts the writer task of `pool` (on the current runtime; it ends with the last handle).
    pub fn start(pool: AnyPool, dialect: Dialect) -> GroupCommit {
        let (requests, receiver) = mpsc::unbounded_channel();
        tokio::spawn(writer(pool, receiver));
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
    tx: Option<Transaction<'static, Any>>,
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

async fn writer(pool: AnyPool, mut requests: mpsc::UnboundedReceiver<Request>) {
    while let Some(first) = requests.recv().await {
        let mut tx = match pool.begin().await {
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
async fn lend(
    mut tx: Transaction<'static, Any>,
    to: oneshot::Sender<Result<Lent, sqlx::Error>>,
    savepoint: bool,
) -> Result<(Transaction<'static, Any>, Option<Committed>), sqlx::Error> {
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
async fn run(
    mut tx: Transaction<'static, Any>,
    work: Work,
    savepoint: bool,
) -> Result<(Transaction<'static, Any>, Option<Committed>), sqlx::Error> {
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
mod tests {
    use std::sync::Arc;

    use sqlx::Row;

    use crate::store::db::Db;
    use crate::store::{StoreError, StoreResult};

    async fn db() -> (tempfile::TempDir, Db) {
        let dir = tempfile::tempdir().unwrap();
        let db = Db::open_sqlite(&dir.path().join("t.db")).await.unwrap();
        sqlx::query("CREATE TABLE t (k INTEGER PRIMARY KEY, v TEXT NOT NULL)").execute(&db.write).await.unwrap();
        (dir, db)
    }

    async fn insert(db: &Db, k: i64, fail_after: bool) -> StoreResult<()> {
        let mut turn = db.group.turn().await?;
        let done = sqlx::query("INSERT INTO t (k, v) VALUES (?, 'x')").bind(k).execute(&mut *turn).await;
        let result = match done {
            Ok(_) if fail_after => Err(StoreError::Invalid(format!("{k} refused after writing"))),
            Ok(_) => Ok(()),
            Err(e) => Err(e.into()),
        };
        turn.finish(result).await
    }

    async fn keys(db: &Db) -> Vec<i64> {
        let rows = sqlx::query("SELECT k FROM t ORDER BY k").fetch_all(db.reader()).await.unwrap();
        rows.iter().map(|r| r.get::<i64, _>(0)).collect()
    }

    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn concurrent_turns_are_each_kept_or_undone_on_their_own() {
        let (_dir, db) = db().await;
        let db = Arc::new(db);
        // Even keys are kept; odd keys write, then fail, and must leave nothing.
        let mut tasks = Vec::new();
        for k in 0..200 {
            let db = db.clone();
            tasks.push(tokio::spawn(async move { insert(&db, k, k % 2 == 1).await }));
        }
        for (k, task) in tasks.into_iter().enumerate() {
            let result = task.await.unwrap();
            assert_eq!(result.is_ok(), k % 2 == 0, "key {k}: {result:?}");
        }
        assert_eq!(keys(&db).await, (0..200).step_by(2).collect::<Vec<i64>>());
        // A statement that fails (a duplicate key) fails its turn only.
        let (dup, fresh) = tokio::join!(insert(&db, 0, false), insert(&db, 1001, false));
        assert!(matches!(dup, Err(StoreError::Db(_))));
        fresh.unwrap();
        assert!(keys(&db).await.contains(&1001));
    }

    #[tokio::test]
    async fn a_turn_dropped_unfinished_is_undone_and_the_next_one_goes_on() {
        let (_dir, db) = db().await;
        {
            let mut turn = db.group.turn().await.unwrap();
            sqlx::query("INSERT INTO t (k, v) VALUES (1, 'gone')").execute(&mut *turn).await.unwrap();
            // Dropped here, as a handler is when its client goes away.
        }
        insert(&db, 2, false).await.unwrap();
        assert_eq!(keys(&db).await, vec![2]);
        // A turn's own undo lets it go on reading in the same turn.
        let mut turn = db.group.turn().await.unwrap();
        sqlx::query("INSERT INTO t (k, v) VALUES (3, 'undone')").execute(&mut *turn).await.unwrap();
        turn.undo().await.unwrap();
        let n: i64 = sqlx::query("SELECT COUNT(*) FROM t").fetch_one(&mut *turn).await.unwrap().get(0);
        assert_eq!(n, 1);
        turn.finish(Ok::<_, StoreError>(())).await.unwrap();
        assert_eq!(keys(&db).await, vec![2]);
    }

    #[tokio::test]
    async fn a_single_write_turn_that_fails_leaves_its_group_and_its_undo_touches_no_neighbour() {
        let (_dir, db) = db().await;
        let db = Arc::new(db);
        // Neighbours with savepoints and without, all in flight at once, every second one failing
        // on a duplicate key after its neighbours wrote.
        insert(&db, 0, false).await.unwrap();
        let mut tasks = Vec::new();
        for k in 1..100i64 {
            let db = db.clone();
            tasks.push(tokio::spawn(async move {
                let mut turn = if k % 3 == 0 { db.group.turn().await? } else { db.group.single_write().await? };
                let key = if k % 2 == 0 { 0 } else { k };
                let done = sqlx::query("INSERT INTO t (k, v) VALUES (?, 'x')").bind(key).execute(&mut *turn).await;
                if done.is_err() {
                    turn.undo().await?;
                }
                turn.finish(done.map_err(StoreError::from)).await.map(|_| ())
            }));
        }
        for (i, task) in tasks.into_iter().enumerate() {
            let k = i as i64 + 1;
            assert_eq!(task.await.unwrap().is_ok(), k % 2 == 1, "key {k}");
        }
        let mut expected: Vec<i64> = (1..100).filter(|k| k % 2 == 1).collect();
        expected.insert(0, 0);
        assert_eq!(keys(&db).await, expected);
    }

    #[tokio::test]
    async fn a_kept_turn_is_answered_only_once_committed() {
        let (_dir, db) = db().await;
        // The answer of a kept turn means the row is visible to another connection, so committed.
        for k in 0..20 {
            insert(&db, k, false).await.unwrap();
            assert!(keys(&db).await.contains(&k));
        }
    }

    /// Inserts `k` with a work sent to the writer; it writes, then fails when `fail_after`.
    async fn sent(db: &Db, k: i64, single: bool, fail_after: bool) -> StoreResult<i64> {
        (db.group)
            .write(single, move |turn: &mut super::Turn| -> futures_util::future::BoxFuture<'_, StoreResult<i64>> {
                Box::pin(async move {
                    sqlx::query("INSERT INTO t (k, v) VALUES (?, 'sent')").bind(k).execute(&mut **turn).await?;
                    if fail_after {
                        return Err(StoreError::Invalid(format!("{k} refused after writing")));
                    }
                    Ok(k)
                })
            })
            .await
    }

    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn writes_run_by_the_writer_and_lent_turns_share_groups_and_each_keeps_or_undoes_its_own() {
        let (_dir, db) = db().await;
        let db = Arc::new(db);
        // Keys 0..300: a third lent, two thirds sent (with and without savepoints); every fourth
        // fails after writing, and a sent single write on a taken key fails on its statement.
        insert(&db, 1000, false).await.unwrap();
        let mut tasks = Vec::new();
        for k in 0..300i64 {
            let db = db.clone();
            tasks.push(tokio::spawn(async move {
                let fail = k % 4 == 1;
                match k % 3 {
                    0 => insert(&db, k, fail).await.map(|()| k),
                    1 => sent(&db, k, true, fail).await,
                    _ => sent(&db, if k % 4 == 2 { 1000 } else { k }, false, fail).await,
                }
            }));
        }
        let mut expected = vec![];
        for (k, task) in tasks.into_iter().enumerate() {
            let k = k as i64;
            let kept = k % 4 != 1 && !(k % 3 == 2 && k % 4 == 2);
            let result = task.await.unwrap();
            assert_eq!(result.is_ok(), kept, "key {k}: {result:?}");
            if kept {
                assert_eq!(result.unwrap(), k, "a sent write answers with its own value");
                expected.push(k);
            }
        }
        expected.push(1000);
        // A single sent write that fails after its statement ran has no savepoint to go back to
        // on SQLite (as with `single_write`): only the failed writes with one are checked absent.
        let stored = keys(&db).await;
        for k in &expected {
            assert!(stored.contains(k), "key {k} is stored");
        }
        for k in (0..300i64).filter(|k| k % 4 == 1 && k % 3 != 1) {
            assert!(!stored.contains(&k), "key {k} failed with a savepoint, yet is stored");
        }
    }

    #[tokio::test]
    async fn a_sent_write_that_panics_is_undone_and_the_writer_goes_on() {
        let (_dir, db) = db().await;
        let panicked = (db.group)
            .write(false, |turn: &mut super::Turn| -> futures_util::future::BoxFuture<'_, StoreResult<()>> {
                Box::pin(async move {
                    sqlx::query("INSERT INTO t (k, v) VALUES (7, 'panic')").execute(&mut **turn).await?;
                    panic!("a bug in a write");
                })
            })
            .await;
        assert!(panicked.is_err());
        assert_eq!(sent(&db, 8, true, false).await.unwrap(), 8);
        insert(&db, 9, false).await.unwrap();
        assert_eq!(keys(&db).await, vec![8, 9]);
    }
}

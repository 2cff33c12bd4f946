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

use std::ops::{Deref, DerefMut};

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

type Committed = oneshot::Sender<Result<(), sqlx::Error>>;

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

struct Request {
    lend: oneshot::Sender<Result<Lent, sqlx::Error>>,
    savepoint: bool,
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
        self.requests.send(Request { lend, savepoint }).map_err(|_| stopped())?;
        let lent = lent.await.map_err(|_| stopped())??;
        Ok(Turn { tx: Some(lent.tx), back: Some(lent.back), savepoint: lent.savepoint })
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
                let _ = first.lend.send(Err(copy(&e)));
                while let Ok(waiting) = requests.try_recv() {
                    let _ = waiting.lend.send(Err(copy(&e)));
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
            match lend(tx, request).await {
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
            let _ = waiting.send(outcome.as_ref().map(|_| ()).map_err(copy));
        }
    }
}

/// Lends `tx` to one caller for its turn; back with the caller's wish to keep its writes, or
/// the error that broke the transaction.
async fn lend(mut tx: Transaction<'static, Any>, request: Request) -> Result<(Transaction<'static, Any>, Option<Committed>), sqlx::Error> {
    let savepoint = request.savepoint;
    if savepoint {
        if let Err(e) = tx.execute(SAVEPOINT).await {
            let _ = request.lend.send(Err(copy(&e)));
            return Err(e);
        }
    }
    let (back, returned) = oneshot::channel();
    let (mut tx, kept) = match request.lend.send(Ok(Lent { tx, back, savepoint })) {
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
}

//! The group commit's tests: turns lent and sent, kept and undone, together in one group.

use std::sync::Arc;

use sqlx::Row;

use crate::store::db::Db;
use crate::store::{StoreError, StoreResult};

async fn db() -> (tempfile::TempDir, Db) {
    let dir = tempfile::tempdir().unwrap();
    let db = Db::open_sqlite(&dir.path().join("t.db")).await.unwrap();
    sqlx::query("CREATE TABLE t (k INTEGER PRIMARY KEY, v TEXT NOT NULL)").execute(&mut *db.writer().await.unwrap()).await.unwrap();
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
    let rows = sqlx::query("SELECT k FROM t ORDER BY k").fetch_all(&mut *db.reader().await.unwrap()).await.unwrap();
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

//! The node pool's warm connections on PostgreSQL (`store/warm_connections.rs`): a connection an
//! instance gave back is lent to that instance's next use as it is, and to another instance's
//! only after its `search_path` is set to that other instance's schema; a transaction dropped
//! without commit is rolled back before the connection's next use. A real PostgreSQL
//! database with two instance schemas, each with a table of its own rows.

use std::time::Duration;

use herald_host::store::node_pool::{NodePool, PoolSettings, Transactions};
use herald_tests::TestDatabase;
use sqlx::{AnyConnection, Row, TransactionManager};

/// The connection's server process, the schema its session works in, and the rows it sees.
async fn session(conn: &mut AnyConnection) -> (i32, String, Vec<String>) {
    let row = sqlx::query("SELECT pg_backend_pid(), current_schema()::text").fetch_one(&mut *conn).await.unwrap();
    let rows = sqlx::query("SELECT name FROM owner ORDER BY name").fetch_all(&mut *conn).await.unwrap();
    (row.get(0), row.get(1), rows.iter().map(|r| r.get(0)).collect())
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_instance_gets_its_connection_back_and_another_only_with_its_own_path() {
    let Some(database) = TestDatabase::create().await else {
        eprintln!("the node pool is PostgreSQL's: this test runs in the PostgreSQL pass");
        return;
    };
    let mut setup = <sqlx::PgConnection as sqlx::Connection>::connect(&database.url).await.unwrap();
    for name in ["instance_a", "instance_b"] {
        sqlx::raw_sql(&format!("CREATE SCHEMA {name}; CREATE TABLE {name}.owner (name text); INSERT INTO {name}.owner VALUES ('{name}')"))
            .execute(&mut setup)
            .await
            .unwrap();
    }
    // 2 connections for the instances.
    let settings = PoolSettings { max_connections: 4, acquire_timeout: Duration::from_secs(5) };
    let pool = NodePool::new(&database.url, &settings).unwrap();
    let (a, b) = (pool.schema("\"instance_a\""), pool.schema("\"instance_b\""));

    let (mut first, share) = a.connection().await.unwrap();
    let (a_pid, schema, rows) = session(&mut first).await;
    assert_eq!((schema.as_str(), rows), ("instance_a", vec!["instance_a".to_string()]));
    drop((first, share));

    // The pool has room: b opens a connection of its own rather than take a's warm one.
    let (mut b_held, b_share) = b.connection().await.unwrap();
    let (b_pid, schema, rows) = session(&mut b_held).await;
    assert_ne!(b_pid, a_pid, "a's warm connection stays a's while the pool has room");
    assert_eq!((schema.as_str(), rows), ("instance_b", vec!["instance_b".to_string()]));

    let (mut again, share) = a.connection().await.unwrap();
    let (pid, schema, _) = session(&mut again).await;
    assert_eq!((pid, schema.as_str()), (a_pid, "instance_a"), "a's next use gets the connection it gave back");
    drop((again, share));

    // The pool is full (b holds the other): b's second use takes a's kept connection, path set to b.
    let (mut taken, share) = b.connection().await.unwrap();
    let (pid, schema, rows) = session(&mut taken).await;
    assert_eq!(pid, a_pid, "the only free connection is a's kept one");
    assert_eq!((schema.as_str(), rows), ("instance_b", vec!["instance_b".to_string()]), "it works in b's schema only");
    drop((taken, share, b_held, b_share));

    // A transaction dropped without commit: rolled back before its connection's next use.
    let (mut tx, share) = a.begin().await.unwrap();
    sqlx::query("INSERT INTO owner VALUES ('not committed')").execute(&mut *tx).await.unwrap();
    drop((tx, share));
    let (mut next, share) = a.connection().await.unwrap();
    let (_, schema, rows) = session(&mut next).await;
    assert_eq!((schema.as_str(), rows), ("instance_a", vec!["instance_a".to_string()]), "the insert was rolled back");
    drop((next, share));

    // And a committed one is kept.
    let (mut tx, share) = a.begin().await.unwrap();
    sqlx::query("INSERT INTO owner VALUES ('committed')").execute(&mut *tx).await.unwrap();
    Transactions::commit(&mut *tx).await.unwrap();
    drop((tx, share));
    let (mut next, share) = b.connection().await.unwrap();
    let (_, schema, rows) = session(&mut next).await;
    assert_eq!((schema.as_str(), rows), ("instance_b", vec!["instance_b".to_string()]), "b never sees a's rows");
    drop((next, share));
    let (mut next, _share) = a.connection().await.unwrap();
    let (_, _, rows) = session(&mut next).await;
    assert_eq!(rows, vec!["committed".to_string(), "instance_a".to_string()]);
    let (open, idle) = pool.connections();
    assert!(open <= 2 && idle <= 2, "never more than the instances' part of the setting: {open} open, {idle} idle");
}

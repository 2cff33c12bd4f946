//! On PostgreSQL, the backends of the node's pool run on short turns, and the backend that
//! applies an import's batch at queued work's priority (`--background-nice`) on the kernel's own
//! turn while it does, and as before afterwards (`store::backend_priority`), but only once each is proven to
//! be the process on this machine that holds the server's end of the connection. The suite's PostgreSQL always runs on this machine
//! (scripts/test.sh); where Herald lacks `CAP_SYS_NICE` nothing may change. On SQLite there is
//! no backend: these tests have nothing to check.

use std::time::Duration;

use herald_host::scheduling::{turn_of, PROMPT_TURN_NS};
use herald_host::store::backend_priority::{self, Lowered};
use herald_tests::database::TestDatabase;
use herald_tests::imports::{import_to, over, started, watch};
use herald_tests::TestServer;
use sqlx::{Connection, Row};

/// The nice value of process `pid` (`/proc/<pid>/stat`: the 19th field, the 17th after the
/// command's closing parenthesis).
fn nice_of(pid: i32) -> Option<i32> {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    stat.rsplit_once(')')?.1.split_whitespace().nth(16)?.parse().ok()
}

#[tokio::test]
async fn a_backend_is_lowered_only_once_proven_and_given_its_priority_back() {
    let Some(database) = TestDatabase::create().await else { return };
    sqlx::any::install_default_drivers();
    let mut conn = sqlx::AnyConnection::connect(&database.url).await.unwrap();
    let row = sqlx::query("SELECT pg_backend_pid(), inet_server_port(), inet_client_port()").fetch_one(&mut conn).await.unwrap();
    let (pid, server_port, client_port) = (row.get::<i32, _>(0), row.get::<i32, _>(1) as u16, row.get::<i32, _>(2) as u16);
    assert!(backend_priority::serves_connection(pid, server_port, client_port), "the backend {pid} holds the server's end");
    let own = std::process::id() as i32;
    assert!(!backend_priority::serves_connection(own, server_port, client_port), "this process holds the client's end, not the server's");
    assert!(!backend_priority::serves_connection(pid, server_port, client_port.wrapping_add(1)), "another connection's ports");

    let before = nice_of(pid).unwrap();
    let turn_before = turn_of(pid);
    let lowered = Lowered::backend_of(&mut conn, 10).await;
    if !backend_priority::may_renice() {
        assert!(lowered.is_none(), "without CAP_SYS_NICE nothing changes");
        assert_eq!(nice_of(pid), Some(before));
        backend_priority::prompt_turns(&mut conn).await;
        assert_eq!(turn_of(pid), turn_before);
        return;
    }
    assert!(lowered.is_some(), "a proven backend is lowered");
    assert_eq!(nice_of(pid), Some((before + 10).min(19)));
    // A new connection's backend has the kernel's own turn, which a lowered one keeps.
    assert_eq!(turn_of(pid), turn_before, "a lowered backend runs on the kernel's own turn");
    drop(lowered);
    assert_eq!(nice_of(pid), Some(before), "given back");
    assert_eq!(turn_of(pid), turn_before, "its turn given back");
    assert!(Lowered::backend_of(&mut conn, 0).await.is_none(), "0 steps change nothing");
    assert_eq!(nice_of(pid), Some(before));

    backend_priority::prompt_turns(&mut conn).await;
    if turn_before.is_some() {
        assert_eq!(turn_of(pid), Some(PROMPT_TURN_NS), "a proven backend gets short turns");
        let lowered = Lowered::backend_of(&mut conn, 10).await;
        assert_eq!(turn_of(pid), turn_before, "the kernel's own turn while lowered");
        drop(lowered);
        assert_eq!(turn_of(pid), Some(PROMPT_TURN_NS), "the short turn given back");
    }
    assert_eq!(nice_of(pid), Some(before), "a turn leaves the nice value alone");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_imports_backend_runs_below_the_api_and_only_while_it_writes() {
    let s = TestServer::start().await;
    let Some(url) = s.database_url().map(str::to_string) else { return };
    let api = s.demo().await;
    let mut file = String::from("USER_ID,EMAIL,FIRST_NAME\n");
    for i in 1..=60_000 {
        file.push_str(&format!("{i},p{i}@nice.test,Name {i}\n"));
    }
    let id = started(&import_to(&api, "/recipients/:import", "text/csv", file).await);
    // The database's backends, sampled while the import runs: the one applying a batch shows
    // queued work's nice value (10 by default) when Herald may set it.
    let mut watcher = sqlx::PgConnection::connect(&url).await.unwrap();
    let backends = "SELECT pid FROM pg_stat_activity WHERE datname = current_database() AND pid <> pg_backend_pid()";
    let mut highest_nice = 0;
    // The backends seen applying a batch (lowered, off the pool's short turn).
    let mut lowered_seen = std::collections::HashSet::new();
    loop {
        let pids: Vec<i32> = sqlx::query_scalar(backends).fetch_all(&mut watcher).await.unwrap();
        // The batch's backend, lowered, has left the pool's short turn for the kernel's own.
        lowered_seen
            .extend(pids.iter().copied().filter(|pid| nice_of(*pid) == Some(10) && turn_of(*pid).is_some_and(|t| t != PROMPT_TURN_NS)));
        highest_nice = pids.into_iter().filter_map(nice_of).fold(highest_nice, i32::max);
        let state = api.get(&format!("/imports/{id}")).await.json();
        if over(&state) {
            assert_eq!(state["created"], 60_000, "{state}");
            break;
        }
        tokio::time::sleep(Duration::from_millis(2)).await;
    }
    let may = backend_priority::may_renice();
    assert_eq!(highest_nice, if may { 10 } else { 0 }, "the highest nice value seen among the database's backends during the import");
    let turns_told = turn_of(0).is_some();
    assert_eq!(!lowered_seen.is_empty(), may && turns_told, "a lowered backend seen on the kernel's own turn during the import");
    // Once the import is over, every backend is back at its own priority (the API's reads and
    // writes take the same connections).
    let done = watch(&api, &id, Duration::from_secs(10), over).await;
    assert_eq!(done["state"], "completed");
    let pids: Vec<i32> = sqlx::query_scalar(backends).fetch_all(&mut watcher).await.unwrap();
    assert!(!pids.is_empty());
    for pid in &pids {
        assert_eq!(nice_of(*pid).unwrap_or(0), 0, "backend {pid} after the import");
        if lowered_seen.contains(pid) {
            assert_eq!(turn_of(*pid), Some(PROMPT_TURN_NS), "backend {pid}, which applied a batch, has its short turn back");
        }
    }
    // The node's pool answered the calls on backends with short turns.
    let prompt = pids.iter().filter(|pid| turn_of(**pid) == Some(PROMPT_TURN_NS)).count();
    assert_eq!(prompt > 0, may && turns_told, "backends on short turns after the import: {prompt} of {}", pids.len());
}

/// A pool that answers calls (the control plane's admits each of them) gives its backends short
/// turns; a command-line tool's pool of an instance leaves them as PostgreSQL starts them.
#[tokio::test]
async fn pools_that_answer_calls_give_their_backends_short_turns() {
    let Some(database) = TestDatabase::create().await else { return };
    let prompt = backend_priority::may_renice() && turn_of(0).is_some();
    for (schema, answers_calls) in [("herald", true), ("instance_tool", false)] {
        let db = herald_host::store::db::Db::open_postgres(&database.url, schema, 2, Duration::from_secs(5), answers_calls).await.unwrap();
        let mut conn = db.reader().await.unwrap();
        let pid: i32 = sqlx::query("SELECT pg_backend_pid()").fetch_one(&mut *conn).await.unwrap().get(0);
        assert_eq!(turn_of(pid) == Some(PROMPT_TURN_NS), prompt && answers_calls, "{schema}'s backend {pid}");
    }
}

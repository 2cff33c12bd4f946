//! Tenancy at scale (issue 35): a node's cost follows its work, not its number of instances.
//! Real `herald serve` processes over real sockets:
//!
//! - SQLite: 300 instances, at most 16 open at once, called round-robin by 8 clients that write
//!   and read back; the process's threads and descriptors stay under a bound computed from the
//!   settings, idle instances are put to sleep, and an instance whose database is corrupt or gone
//!   answers 503 alone.
//! - PostgreSQL: 300 instances behind two nodes with 10 connections each on a private cluster
//!   whose `max_connections` is 30 (`scripts/test.sh` starts it and names it in
//!   `HERALD_TEST_POSTGRES_SMALL`): every call succeeds and PostgreSQL never sees more than 20 of
//!   Herald's connections.

use std::collections::HashMap;
use std::path::Path;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use std::time::Duration;

use herald_host::auth::secret;
use herald_host::model::DefinitionFile;
use herald_host::store::node_pool::PoolSettings;
use herald_host::store::{Backend, ControlDb};
use herald_host::tenants::OpenInstances;
use herald_tests::process::{ServerProcess, UNLIMITED_RATE};
use herald_tests::recorder::Recorder;
use herald_tests::{accept_open, eventually, json, reqwest, settled, Api, Settings, TestDatabase, TestServer, OPS_INSTANCE};
use sqlx::Connection;

const INSTANCES: usize = 300;
const CLIENTS: usize = 8;
const ROUNDS: usize = 2;

/// What one open SQLite instance may hold: the writer, two readers of the API and one of queued
/// work (`store::db`), each a thread, with two descriptors each and the shared-memory index.
const THREADS_PER_OPEN: usize = 4;
const FDS_PER_OPEN: usize = 9;

fn customer(i: usize) -> String {
    format!("t{i:03}")
}

/// `count` instances sharing one small model, each with a Public Api credential
/// (`key-<customerId>`, secret `secret`), written through the operator's code path.
async fn create_instances(backend: &Backend, count: usize) {
    let mut definition = String::new();
    for i in 0..count {
        definition.push_str(&format!("[[instance]]\ncustomer_id = \"{}\"\nenvironment = \"staging\"\n\n", customer(i)));
    }
    definition.push_str(
        "[model]\nrecipient_id = \"ID\"\nperson_data = [{ name = \"ID\", type = \"NUMBER\", unique = true }, { name = \"EMAIL\", type = \"STRING\" }]\n",
    );
    let control = ControlDb::open(backend).await.unwrap();
    herald_host::tenants::apply(&control, &DefinitionFile::from_toml(&definition).unwrap()).await.unwrap();
    let hash = secret::hash("secret");
    for i in 0..count {
        let id = customer(i);
        control.insert_credential(&format!("key-{id}"), &id, &hash, "public", "tenancy test").await.unwrap();
    }
}

fn free_port() -> u16 {
    std::net::TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap().port()
}

/// The process's threads and open descriptors.
fn usage(pid: u32) -> (usize, usize) {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).unwrap();
    let threads = status.lines().find_map(|l| l.strip_prefix("Threads:")).unwrap().trim().parse().unwrap();
    let fds = std::fs::read_dir(format!("/proc/{pid}/fd")).unwrap().count();
    (threads, fds)
}

/// A metric's value on the operator listener (the first sample whose name and labels start so).
async fn metric(client: &reqwest::Client, ops: &str, name: &str) -> f64 {
    // The operator's listener binds a moment after the API's, which is what the start waits for.
    let answer = eventually(Duration::from_secs(10), "the operator's listener answers", || async {
        match client.get(format!("{ops}/metrics")).send().await {
            Ok(answer) => Ok(answer),
            Err(e) if e.is_connect() => Err(e.to_string()),
            Err(e) => panic!("{ops}/metrics: {e}"),
        }
    })
    .await;
    let text = answer.text().await.unwrap();
    text.lines()
        .find(|l| l.starts_with(name) && l[name.len()..].starts_with(' '))
        .and_then(|l| l.rsplit(' ').next())
        .and_then(|v| v.parse().ok())
        .unwrap_or_else(|| panic!("no {name} in\n{text}"))
}

/// Each of `CLIENTS` clients takes every `CLIENTS`th instance, `ROUNDS` times over: a recipient
/// written, then read back. Servers are taken in turn. Returns the calls made.
async fn round_robin(bases: &[String]) -> u64 {
    let calls = Arc::new(AtomicU64::new(0));
    let mut clients = Vec::new();
    for k in 0..CLIENTS {
        let (bases, calls) = (bases.to_vec(), calls.clone());
        clients.push(tokio::spawn(async move {
            // One client (and so one connection per server) for all its instances.
            let http = reqwest::Client::new();
            let mut apis: HashMap<usize, Api> = HashMap::new();
            for round in 0..ROUNDS {
                for i in (k..INSTANCES).step_by(CLIENTS) {
                    let base = &bases[(i + round) % bases.len()];
                    let id = customer(i);
                    let logged_in = match apis.get(&i) {
                        Some(api) => api.clone(),
                        None => Api::login_with(http.clone(), base, &format!("key-{id}"), "secret").await,
                    };
                    apis.insert(i, logged_in.clone());
                    let api = Api { base: base.clone(), ..logged_in };
                    let email = format!("r{round}@{id}.test");
                    api.post("/recipients", json!({"personData": {"ID": round + 1, "EMAIL": email}})).await.expect(201);
                    let read = api.get(&format!("/recipients/{}", round + 1)).await;
                    read.expect(200);
                    assert_eq!(read.json()["personData"]["EMAIL"], email, "{id} reads back what it wrote");
                    calls.fetch_add(3, Ordering::Relaxed);
                }
            }
            // Every write is there, and only this instance's.
            for i in (k..INSTANCES).step_by(CLIENTS) {
                let all = apis[&i].get("/recipients").await;
                all.expect(200);
                let emails: Vec<String> =
                    all.json().as_array().unwrap().iter().map(|r| r["personData"]["EMAIL"].as_str().unwrap().to_string()).collect();
                let expected: Vec<String> = (0..ROUNDS).map(|round| format!("r{round}@{}.test", customer(i))).collect();
                assert_eq!(emails, expected);
            }
        }));
    }
    for client in clients {
        client.await.unwrap();
    }
    calls.load(Ordering::Relaxed)
}

/// Samples `sample` every 20 ms until the returned flag is set; the peak of each value.
fn sampler<F>(sample: F) -> (Arc<std::sync::atomic::AtomicBool>, tokio::task::JoinHandle<Vec<usize>>)
where
    F: Fn() -> futures_util::future::BoxFuture<'static, Vec<usize>> + Send + 'static,
{
    let stop = Arc::new(std::sync::atomic::AtomicBool::new(false));
    let flag = stop.clone();
    let task = tokio::spawn(async move {
        let mut peak: Vec<usize> = Vec::new();
        while !flag.load(Ordering::Relaxed) {
            let now = sample().await;
            peak.resize(now.len(), 0);
            for (p, n) in peak.iter_mut().zip(now) {
                *p = (*p).max(n);
            }
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
        peak
    });
    (stop, task)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn three_hundred_sqlite_instances_run_within_bounds_set_by_the_settings() {
    if std::env::var("HERALD_TEST_POSTGRES").is_ok_and(|u| !u.is_empty()) {
        eprintln!("SQLite's bounds are tested in the SQLite pass");
        return;
    }
    const MAX_OPEN: usize = 16;
    let dir = tempfile::tempdir().unwrap();
    create_instances(&Backend::Sqlite { data_dir: dir.path().into() }, INSTANCES).await;
    let ops_port = free_port();
    let ops = format!("http://127.0.0.1:{ops_port}");
    let mut args = UNLIMITED_RATE.to_vec();
    let ops_listen = format!("127.0.0.1:{ops_port}");
    args.extend(["--max-open-instances", "16", "--instance-idle-timeout", "1", "--ops-listen", &ops_listen]);
    let server = ServerProcess::start(dir.path(), None, &args).await;
    let pid = server.pid();
    let client = reqwest::Client::new();
    assert_eq!(metric(&client, &ops, "herald_instances{state=\"known\"}").await, INSTANCES as f64);
    assert_eq!(metric(&client, &ops, "herald_instances{state=\"open\"}").await, 0.0, "nothing is opened at start");
    let (idle_threads, idle_fds) = usage(pid);

    let (stop, peaks) = sampler(move || Box::pin(async move { <[usize; 2]>::from(usage(pid)).to_vec() }));
    let calls = round_robin(std::slice::from_ref(&server.base)).await;
    stop.store(true, Ordering::Relaxed);
    let peak = peaks.await.unwrap();

    // Open at most: the cap, plus the instances in use at one moment beyond it (one per
    // client), plus the one being opened.
    let most_open = MAX_OPEN + CLIENTS + 1;
    // Past the idle server: each open instance's connections, and each client's socket; tokio's
    // blocking threads come and go with the work, a few at a time.
    let thread_bound = idle_threads + most_open * THREADS_PER_OPEN + 8;
    let fd_bound = idle_fds + most_open * FDS_PER_OPEN + 2 * CLIENTS + 8;
    eprintln!("{calls} calls; threads {idle_threads} idle, {} at most (bound {thread_bound}); descriptors {idle_fds} idle, {} at most (bound {fd_bound})", peak[0], peak[1]);
    assert!(peak[0] <= thread_bound, "threads: {} > {thread_bound}", peak[0]);
    assert!(peak[1] <= fd_bound, "descriptors: {} > {fd_bound}", peak[1]);
    assert!(metric(&client, &ops, "herald_instance_activations_total").await >= INSTANCES as f64);
    assert!(metric(&client, &ops, "herald_instance_evictions_total").await >= (INSTANCES - MAX_OPEN) as f64);

    // Idle instances are put to sleep (idle after 1 s, looked at every 2 s), and their threads end.
    eventually(Duration::from_secs(15), "idle instances asleep", || async {
        let open = metric(&client, &ops, "herald_instances{state=\"open\"}").await;
        if open > 0.0 {
            Err(format!("{open} open"))
        } else {
            Ok(())
        }
    })
    .await;
    eventually(Duration::from_secs(15), "their threads ended", || async {
        let threads = usage(pid).0;
        if threads > idle_threads + 4 {
            Err(format!("{threads} threads against {idle_threads} idle"))
        } else {
            Ok(())
        }
    })
    .await;

    // A corrupt database, and a missing one: those instances answer 503, the others go on.
    let corrupt = Api::login(&server.base, "key-t000", "secret").await;
    let missing = Api::login(&server.base, "key-t001", "secret").await;
    let healthy = Api::login(&server.base, "key-t002", "secret").await;
    let data = |id: &str| dir.path().join("instances").join(id).join("data.db");
    std::fs::write(data("t000"), vec![0x5a; 8192]).unwrap();
    remove_database(&data("t001"));
    for broken in [&corrupt, &missing] {
        let answer = broken.request(reqwest::Method::GET, "/recipients").send().await.unwrap();
        assert_eq!(answer.status(), 503);
        assert!(answer.headers().contains_key("retry-after"));
    }
    healthy.get("/recipients").await.expect(200);
    healthy.post("/recipients", json!({"personData": {"ID": 99, "EMAIL": "after@t002.test"}})).await.expect(201);
    assert!(metric(&client, &ops, "herald_instance_activation_failures_total").await >= 2.0);
}

fn remove_database(file: &Path) {
    for suffix in ["", "-wal", "-shm"] {
        let _ = std::fs::remove_file(format!("{}{suffix}", file.display()));
    }
}

/// The name of the sampler's connections to PostgreSQL, which it does not count.
const SAMPLER: &str = "herald-test-sampler";

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn two_postgresql_nodes_serve_three_hundred_instances_on_twenty_connections() {
    let Some(server_url) = std::env::var("HERALD_TEST_POSTGRES_SMALL").ok().filter(|u| !u.is_empty()) else {
        eprintln!("this test needs the small PostgreSQL cluster scripts/test.sh starts (HERALD_TEST_POSTGRES_SMALL)");
        return;
    };
    let database = TestDatabase::create_on(&server_url).await;
    let dirs = (tempfile::tempdir().unwrap(), tempfile::tempdir().unwrap());
    {
        let backend =
            Backend::new(dirs.0.path(), Some(&database.url)).unwrap().with_pool(PoolSettings { max_connections: 4, ..Default::default() });
        create_instances(&backend, INSTANCES).await;
    }
    let url = database.url.clone();
    let herald_connections = move || {
        let url = url.clone();
        Box::pin(async move {
            // The sampler's own connections carry a name of their own: the one it closed 20 ms
            // ago may still be on PostgreSQL's list, on its way out (it once made 21 of 20).
            // Only client backends count: an autovacuum worker busy in this database (after
            // the 300 schemas' creation, on `pg_attribute`) is listed with it too.
            let options: sqlx::postgres::PgConnectOptions = url.parse().unwrap();
            let mut conn = sqlx::PgConnection::connect_with(&options.application_name(SAMPLER)).await.unwrap();
            let n: i64 = sqlx::query_scalar(
                "SELECT count(*) FROM pg_stat_activity
                 WHERE datname = current_database() AND backend_type = 'client backend' AND application_name <> $1",
            )
            .bind(SAMPLER)
            .fetch_one(&mut conn)
            .await
            .unwrap();
            conn.close().await.ok();
            vec![n as usize]
        }) as futures_util::future::BoxFuture<'static, Vec<usize>>
    };
    // The connections of the set-up are closed before the nodes start.
    eventually(Duration::from_secs(10), "the set-up's connections closed", || async {
        let open = herald_connections().await[0];
        if open > 0 {
            Err(format!("{open} open"))
        } else {
            Ok(())
        }
    })
    .await;

    let mut args = UNLIMITED_RATE.to_vec();
    args.extend(["--database-max-connections", "10"]);
    let a = ServerProcess::start(dirs.0.path(), Some(&database.url), &args).await;
    let b = ServerProcess::start(dirs.1.path(), Some(&database.url), &args).await;
    let (stop, peaks) = sampler(herald_connections);
    let calls = round_robin(&[a.base.clone(), b.base.clone()]).await;
    stop.store(true, Ordering::Relaxed);
    let peak = peaks.await.unwrap()[0];
    eprintln!("{calls} calls through two nodes; at most {peak} of Herald's connections");
    assert!(peak <= 20, "PostgreSQL saw {peak} of Herald's connections");
    assert!(peak >= 2, "the sampler saw the nodes work");
}

/// Waits until no instance is open: every one is asleep (idle for 0 s, looked at every 200 ms).
async fn all_asleep(s: &TestServer) {
    let client = reqwest::Client::new();
    eventually(Duration::from_secs(10), "every instance asleep", || async {
        let open = metric(&client, &s.ops, "herald_instances{state=\"open\"}").await;
        if open > 0.0 {
            Err(format!("{open} open"))
        } else {
            Ok(())
        }
    })
    .await;
}

/// Polls `path` until `ready` holds for its JSON answer.
async fn until(api: &Api, path: &str, what: &str, ready: impl Fn(&serde_json::Value) -> bool) -> serde_json::Value {
    let ready = &ready;
    eventually(Duration::from_secs(30), what, || async move {
        let answer = api.get(path).await;
        if answer.status == 200 && ready(&answer.json()) {
            Ok(answer.json())
        } else {
            Err(answer.text.clone())
        }
    })
    .await
}

/// A waiting run, a scheduled sweep of two batches, an asynchronous execution and a monitor's
/// run, each with its instance put to sleep in the middle: nothing is lost, all goes on.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn work_in_progress_survives_its_instance_being_put_to_sleep() {
    let open_instances = OpenInstances { max_open: 1, idle_after: Duration::ZERO };
    let s = TestServer::start_with(Settings { open_instances, ..Settings::default() }).await;
    let api = s.demo().await;
    let client = reqwest::Client::new();

    // A run that waits two hours: asleep meanwhile, it completes once the clock passes.
    api.put("/flows/later", json!({"trigger": {"event": "PURCHASE_MADE"}, "nodes": [{"wait": "2h"}, {"send": "welcome"}]}))
        .await
        .expect(201);
    let id = api.create_recipient(json!({"EMAIL": "w@example.com"})).await;
    api.post_empty(&format!("/recipients/{id}/events/PURCHASE_MADE/:achieveEvent")).await.expect(200);
    let runs = format!("/flows/later/runs?recipientId={id}");
    until(&api, &runs, "the wait", |r| r[0]["state"] == "waiting").await;
    all_asleep(&s).await;
    s.clock.advance_secs(2 * 3600 + 1);
    until(&api, &runs, "the end of the run", |r| r[0]["outcome"] == "completed").await;
    let history = api.get(&format!("/recipients/{id}/communicationHistory")).await.json();
    assert_eq!(history.as_array().map(Vec::len), Some(1), "{history}");

    // A sweep of two batches (500 a batch): the instance sleeps before it, and may between them.
    api.upload_extension("tagger.wasm", env!("GUEST_STEP_TAGGER"), "step").await;
    for i in 0..530 {
        api.create_recipient(json!({"EMAIL": format!("adult{i}@example.com"), "AGE": 30})).await;
    }
    let flow = json!({"trigger": {"schedule": "0 9 * * *", "targetGroup": "ADULTS"}, "nodes": [{"step": "tagger"}]});
    api.put("/flows/daily", flow).await.expect(201);
    until(&api, "/flows/daily", "the scheduler's first look", |f| f["scheduled"]["nextAt"].is_string()).await;
    all_asleep(&s).await;
    s.clock.advance_secs(25 * 3600);
    let fired = until(&api, "/flows/daily", "the end of the sweep", |f| f["scheduled"]["lastFiring"]["done"] == true).await;
    assert_eq!(fired["scheduled"]["lastFiring"]["recipients"], 530, "{fired}");
    let tagged = api.get("/recipients?filter=COUNTRY==\"FR\"").await.json();
    assert_eq!(tagged.as_array().map(Vec::len), Some(530));

    // An asynchronous execution accepted, its instance asleep before a worker takes it.
    api.upload_http_extension("job.wasm", env!("GUEST_ASYNC_OPEN")).await;
    let queued = accept_open(&client, &s.base, "job/orders?ms=300", "hello").await;
    let done = settled(&client, &s.base, &queued, Duration::from_secs(20)).await;
    assert_eq!(done.status(), 201);

    // A monitor of another instance, due while both sleep.
    let status_page = Recorder::start().await;
    s.apply_definition(OPS_INSTANCE).await;
    let ops = s.new_client("ops").await;
    ops.put("/globaldata/STATUS_URL", json!({"VALUE": status_page.url("127.0.0.1", "/health")})).await.expect(200);
    ops.upload_extension("status.wasm", env!("GUEST_MONITOR_HTTP"), "monitor").await;
    until(&ops, "/extensions/monitors", "a schedule", |m| m[0]["nextRunAt"].is_string()).await;
    all_asleep(&s).await;
    s.clock.advance_secs(61);
    let ran = until(&ops, "/extensions/monitors", "a run", |m| m[0]["history"].as_array().is_some_and(|h| h.len() == 1)).await;
    assert_eq!(ran[0]["status"], "healthy", "{ran}");

    let evictions = metric(&client, &s.ops, "herald_instance_evictions_total").await;
    assert!(evictions >= 4.0, "the instances slept: {evictions} evictions");
}

/// The node's pool on PostgreSQL: an instance holds at most three quarters of it, a use that waits
/// past the acquire timeout fails as "unavailable" (the API's 503 with `Retry-After`), and
/// another instance still gets its connection while one is at its share.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_node_pool_shares_its_connections_and_times_out_instead_of_overflowing() {
    use herald_host::store::node_pool::NodePool;
    use herald_host::store::Unavailable;
    let Some(database) = TestDatabase::create().await else {
        eprintln!("the node pool is PostgreSQL's: this test runs in the PostgreSQL pass");
        return;
    };
    // 6 in all: 2 for the control plane, 4 for the instances, 3 of them for one instance at most.
    let settings = PoolSettings { max_connections: 6, acquire_timeout: Duration::from_millis(300) };
    let pool = NodePool::new(&database.url, &settings).unwrap();
    let (a, b) = (pool.schema("\"instance_a\""), pool.schema("\"instance_b\""));
    let mut held = Vec::new();
    for _ in 0..3 {
        held.push(a.connection().await.unwrap());
    }
    let over = a.connection().await.expect_err("the fourth of one instance waits, then fails");
    assert!(matches!(over, sqlx::Error::PoolTimedOut) && over.is_unavailable(), "{over}");
    let other = b.connection().await.expect("another instance is served while the first is at its share");
    assert_eq!(pool.connections().0, 4, "never more than the instances' part of the setting");
    let full = b.connection().await.expect_err("the pool is full: a wait, then unavailable");
    assert!(full.is_unavailable(), "{full}");
    drop(other);
    held.pop();
    let _next = a.connection().await.expect("a connection given back serves the next use");
    assert!(pool.waits.timed_out.load(Ordering::Relaxed) >= 2);
}

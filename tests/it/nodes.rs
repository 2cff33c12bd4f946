//! Several nodes over one PostgreSQL database (issue: PostgreSQL backend and several nodes):
//! two `herald` processes on their own ports and their own data directories share everything a
//! later request needs. A token from one works on the other, a paging document continues on the
//! other, an extension uploaded through one is served by the other, an asynchronous execution
//! accepted by one is readable on both, and killing a node while it runs executions loses none.
//!
//! On SQLite there is one process per data directory, so this runs in the PostgreSQL pass of
//! `scripts/test.sh` only.

use std::time::Duration;

use herald_tests::process::{ServerProcess, UNLIMITED_RATE};
use herald_tests::{accept_open, eventually, json, reqwest, settled, Api, TestDatabase};
use reqwest::Method;
use serde_json::Value;
use sqlx::Connection;

/// Unlimited rates, and a node silent for 2 s taken for dead.
fn args() -> Vec<&'static str> {
    let mut args = UNLIMITED_RATE.to_vec();
    args.extend(["--node-timeout", "2"]);
    args
}

async fn scalar(url: &str, sql: &str) -> i64 {
    let mut conn = sqlx::PgConnection::connect(url).await.unwrap();
    let n: i64 = sqlx::query_scalar(sql).fetch_one(&mut conn).await.unwrap();
    conn.close().await.ok();
    n
}

/// Two nodes over one fresh PostgreSQL database, each on a data directory of its own.
struct TwoNodes {
    database: TestDatabase,
    a: ServerProcess,
    b: ServerProcess,
    _dirs: (tempfile::TempDir, tempfile::TempDir),
}

/// `None` on SQLite (one process per data directory there).
async fn two_nodes() -> Option<TwoNodes> {
    let Some(database) = TestDatabase::create().await else {
        eprintln!("several nodes need PostgreSQL: this test runs in the PostgreSQL pass of scripts/test.sh");
        return None;
    };
    let dirs = (tempfile::tempdir().unwrap(), tempfile::tempdir().unwrap());
    let a = ServerProcess::start(dirs.0.path(), Some(&database.url), &args()).await;
    let b = ServerProcess::start(dirs.1.path(), Some(&database.url), &args()).await;
    Some(TwoNodes { database, a, b, _dirs: dirs })
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn two_nodes_share_tokens_documents_extensions_and_the_queue() {
    let Some(TwoNodes { database, a, b, _dirs }) = two_nodes().await else { return };
    let client = reqwest::Client::new();

    // A token from A works on B.
    let on_a = Api::login(&a.base, "demo-public-key", "demo-public-secret").await;
    let on_b = Api { base: b.base.clone(), ..on_a.clone() };
    for i in 0..5 {
        on_a.post("/recipients", json!({"personData": {"EMAIL": format!("n{i}@nodes.test"), "AGE": 20 + i}})).await.expect(201);
    }
    let all = on_b.get("/recipients").await;
    all.expect(200);
    assert_eq!(all.json().as_array().unwrap().len(), 5, "B reads what A wrote");

    // A paging document made on A continues on B.
    let first = on_a.get("/recipients?objectResponse=true&pageSize=2").await;
    first.expect(200);
    let document = first.json()["page"]["documentId"].as_str().unwrap().to_string();
    let third = on_b.get(&format!("/recipients?objectResponse=true&documentId={document}&pageStart=5&pageSize=2")).await;
    third.expect(200);
    let page = third.json();
    let emails: Vec<&str> = page["content"].as_array().unwrap().iter().map(|r| r["personData"]["EMAIL"].as_str().unwrap()).collect();
    assert_eq!(emails, vec!["n4@nodes.test"]);
    assert_eq!(third.json()["page"]["totalElements"], 5);

    // An extension uploaded through A is served by B, whose data directory never saw the file.
    on_a.upload_http_extension("echo.wasm", env!("GUEST_ECHO")).await;
    let echoed = on_b.request(Method::POST, "/extensions/secure/echo/hello?x=1").body("from B").send().await.unwrap();
    assert_eq!(echoed.status(), 200);
    let echoed: Value = echoed.json().await.unwrap();
    assert_eq!(echoed["body"], "from B", "{echoed}");
    let listed = on_b.get("/assets/extensions/list").await;
    assert_eq!(listed.json()[0]["name"], "echo.wasm");

    // An asynchronous execution accepted by A is readable on both.
    on_a.upload_http_extension("job.wasm", env!("GUEST_ASYNC_OPEN")).await;
    let id = accept_open(&client, &a.base, "job/one?ms=10", "one").await;
    let (on_a, on_b) =
        (settled(&client, &a.base, &id, Duration::from_secs(30)).await, settled(&client, &b.base, &id, Duration::from_secs(30)).await);
    assert_eq!((on_a.status().as_u16(), on_b.status().as_u16()), (201, 201));
    let (body_a, body_b): (Value, Value) = (on_a.json().await.unwrap(), on_b.json().await.unwrap());
    assert_eq!(body_a, body_b);
    assert_eq!(body_a["body"], "one");

    // Both nodes take executions; A is killed while it runs some, and none is lost.
    let mut ids = Vec::new();
    for i in 0..24 {
        ids.push(accept_open(&client, &a.base, &format!("job/n{i}?ms=3000"), &format!("body {i}")).await);
    }
    eventually(Duration::from_secs(20), "both nodes running executions", || async {
        let nodes = scalar(&database.url, "SELECT COUNT(DISTINCT node) FROM herald.extension_jobs WHERE state = 'running'").await;
        if nodes >= 2 {
            Ok(())
        } else {
            Err(format!("{nodes} node(s)"))
        }
    })
    .await;
    a.kill();
    for (i, id) in ids.iter().enumerate() {
        let r = settled(&client, &b.base, id, Duration::from_secs(60)).await;
        assert_eq!(r.status().as_u16(), 201, "execution {i}");
        let body: Value = r.json().await.unwrap();
        assert_eq!(body["body"], format!("body {i}"));
    }
    let rerun = scalar(&database.url, "SELECT COUNT(*) FROM herald.extension_jobs WHERE attempts >= 2").await;
    assert!(rerun > 0, "the killed node's executions were run again by B");
}

/// Flows across nodes: a Context Parameter Schema published and a template committed through
/// node A are what node B checks a call against and what a run renders, on whichever node runs it.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn flow_runs_see_schemas_and_templates_published_on_another_node() {
    let Some(TwoNodes { database: _database, a, b, _dirs }) = two_nodes().await else { return };
    let on_a = Api::login(&a.base, "demo-public-key", "demo-public-secret").await;
    let on_b = Api { base: b.base.clone(), ..on_a.clone() };

    let schema =
        br#"{"models": [{"name": "VISIT", "type": "person_data", "fields": [{"name": "CITY", "data_type": "string", "required": true}]}]}"#;
    let form = reqwest::multipart::Form::new().part("file", reqwest::multipart::Part::bytes(schema.to_vec()).file_name("visit.json"));
    herald_tests::answer(on_a.request(Method::POST, "/assets/contexts").multipart(form).send().await.unwrap()).await.expect(201);
    on_a.commit_template("visit.txt", "{% set subject = \"Hello from \" ~ context.VISIT.CITY %}Seen in {{ context.VISIT.CITY }}").await;
    on_a.put("/flows/visit", json!({"trigger": {"event": "NEWSLETTER_SIGNUP"}, "contextSchema": "visit", "nodes": [{"send": "visit"}]}))
        .await
        .expect(201);

    // Node B knows the schema (a second publication of it is a conflict there too) and checks
    // calls against it.
    let form = reqwest::multipart::Form::new().part("file", reqwest::multipart::Part::bytes(schema.to_vec()).file_name("visit.json"));
    herald_tests::answer(on_b.request(Method::POST, "/assets/contexts").multipart(form).send().await.unwrap()).await.expect(409);
    let id =
        on_b.post("/recipients", json!({"personData": {"EMAIL": "v@nodes.test"}})).await.json()["personData"]["USER_ID"].as_i64().unwrap();
    let achieve = format!("/recipients/{id}/events/NEWSLETTER_SIGNUP/:achieveEvent");
    on_b.post(&achieve, json!({"name": "visit", "data": {"VISIT": {}}})).await.expect(400);
    on_b.post(&achieve, json!({"name": "visit", "data": {"VISIT": {"CITY": "Nantes"}}})).await.expect(200);

    let sent = eventually(Duration::from_secs(20), "the mail sent", || async {
        let history = on_a.get(&format!("/recipients/{id}/communicationHistory")).await.json();
        if history.as_array().is_some_and(|h| !h.is_empty()) {
            return Ok(history);
        }
        Err(on_b.get(&format!("/flows/visit/runs?recipientId={id}")).await.json().to_string())
    })
    .await;
    assert_eq!((sent[0]["subject"].as_str(), sent[0]["content"].as_str()), (Some("Hello from Nantes"), Some("Seen in Nantes")), "{sent}");
}

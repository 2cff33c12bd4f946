//! One vocabulary for how a call ended (`runtime::outcome`: ok, error, deadline, memory, trap,
//! fault): the same word for one call in the caller's status, the execution log, the server's
//! log, the operator's metrics and the author tools. The real binary, so that its log is read as
//! an operator reads it.

use std::time::Duration;

use herald_tests::process::ServerProcess;
use herald_tests::signing::{signed, whsec, SHOP_KEY};
use herald_tests::{eventually, json, Api};
use serde_json::Value;

async fn newest_log(api: &Api, extension: &str) -> Value {
    eventually(Duration::from_secs(10), &format!("{extension}'s execution is recorded"), || async {
        let logs = api.get(&format!("/extensions/logs/{extension}")).await.json();
        logs.get(0).cloned().ok_or_else(|| "no execution yet".to_string())
    })
    .await
}

#[tokio::test]
async fn one_failure_has_one_word_in_the_answer_the_logs_the_metrics_and_the_server_log() {
    let data = tempfile::tempdir().unwrap();
    let logs = tempfile::tempdir().unwrap();
    let log_file = logs.path().join("server.log");
    let ops = std::net::TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap();
    let ops = ops.to_string();
    let database = herald_tests::TestDatabase::create().await;
    let url = database.as_ref().map(|d| d.url.as_str());
    let server = ServerProcess::start_logging(data.path(), url, &["--ops-listen", &ops], "info", Some(&log_file)).await;
    let api = Api::login(&server.base, "demo-public-key", "demo-public-secret").await;
    let client = reqwest::Client::new();

    // The JavaScript shop webhook, sent an order whose lines are not a list: the handler throws,
    // and the SDK answers 500: the extension's own error, passed on to the caller as it answered.
    api.upload_extension("hook.wasm", env!("GUEST_JS_SHOP_WEBHOOK"), "http").await;
    api.put("/extensions/secrets/SHOP_SIGNING_SECRET", json!({"value": whsec(SHOP_KEY)})).await.expect(201);
    let order = json!({"customer": {"email": "zed@example.com"}, "order": {"id": "C-1", "lines": 5}}).to_string();
    let open = format!("{}/extensions/open/demo/hook", server.base);
    let answer = signed(client.post(&open), SHOP_KEY, order.as_bytes(), 0).send().await.unwrap();
    assert_eq!(answer.status(), 500);
    let hook = newest_log(&api, "hook").await;
    assert_eq!((&hook["outcome"], &hook["reason"]), (&json!("error"), &json!("answered 500")), "{hook}");
    assert!(hook["log"].to_string().contains("TypeError"), "the exception is in the extension's log: {hook}");

    // A Rust guest that panics traps: 502 with an empty body, `trap` with the reason.
    api.upload_extension("panic.wasm", env!("GUEST_PANIC"), "http").await;
    let panicked = api.get("/extensions/secure/panic").await;
    panicked.expect(502);
    let panic = newest_log(&api, "panic").await;
    assert_eq!(panic["outcome"], "trap", "{panic}");
    assert!(panic["reason"].as_str().unwrap().contains("wasm trap"), "{panic}");

    // The operator's metrics count both under the same words.
    let metrics = client.get(format!("http://{ops}/metrics")).send().await.unwrap().text().await.unwrap();
    for outcome in ["error", "trap"] {
        assert!(
            metrics.lines().any(|l| l.starts_with("herald_extension_executions_total") && l.contains(&format!("outcome=\"{outcome}\""))),
            "{outcome}: {metrics}"
        );
    }

    // The server's log says how each call ended, at `info`: both are the extension's doing, not
    // Herald's, so neither is an error of the server.
    let log = eventually(Duration::from_secs(10), "the server logs both outcomes", || async {
        let log = std::fs::read_to_string(&log_file).unwrap_or_default();
        let ended = |word: &str| log.lines().any(|l| l.contains("an extension's call ended") && l.contains(&format!("outcome={word}")));
        if ended("error") && ended("trap") {
            Ok(log)
        } else {
            Err(log)
        }
    })
    .await;
    let errors: Vec<&str> = log.lines().filter(|l| l.contains("ERROR")).collect();
    assert!(errors.is_empty(), "the extensions' own failures are not errors of the server: {errors:?}");
    drop(server);
}

/// Herald's own fault is told apart from the extension's: a platform call whose table is gone
/// from under the server (dropped behind its back, as a broken disk or database would leave it)
/// traps the guest, which could not handle it; the caller gets 500, the execution `fault` with
/// Herald's words, never the database's.
#[tokio::test]
async fn a_platform_call_that_herald_fails_ends_fault() {
    let s = herald_tests::TestServer::start().await;
    let api = s.demo().await;
    api.upload_extension("locator.wasm", env!("GUEST_STORE_LOCATOR"), "http").await;
    api.get("/extensions/secure/locator?city=Paris").await.expect(200);
    let table = herald_host::store::tenant::gdt_table("STORES");
    match s.database_url() {
        Some(url) => {
            let schema = herald_host::model::column(&herald_host::store::tenant_schema("demo"));
            let db: sqlx::PgPool = sqlx::PgPool::connect(url).await.unwrap();
            sqlx::query(&format!("DROP TABLE {schema}.{table}")).execute(&db).await.unwrap();
        }
        None => {
            let url = format!("sqlite://{}", s.data_dir.join("instances/demo/data.db").display());
            let db: sqlx::SqlitePool = sqlx::SqlitePool::connect(&url).await.unwrap();
            sqlx::query(&format!("DROP TABLE {table}")).execute(&db).await.unwrap();
        }
    }
    let failed = api.get("/extensions/secure/locator?city=Paris").await;
    failed.expect(500);
    assert!(failed.text.is_empty(), "nothing of the cause in the answer: {}", failed.text);
    let log = newest_log(&api, "locator").await;
    assert_eq!(log["outcome"], "fault", "{log}");
    let reason = log["reason"].as_str().unwrap();
    assert!(reason.contains("the instance's data could not be reached") && !reason.contains("STORES"), "{log}");
}

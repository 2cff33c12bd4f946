//! Asynchronous extensions (spec: States and transitions): the 202 with a queueId, both status
//! endpoints through every state, failures, retention, fairness between instances, and a server
//! process killed between the 202 and the result.

use std::time::{Duration, Instant};

use herald_host::limits::RateSettings;
use herald_tests::process::ServerProcess;
use herald_tests::{
    accept_open, answer, eventually, json, open_status, reqwest, settled, until_not, Api, Settings, TestDatabase, TestServer,
};
use reqwest::Method;
use serde_json::Value;

/// The status endpoints are polled often: the rate smoothing stays out of the way.
fn settings() -> Settings {
    let rate =
        RateSettings { per_address_per_second: 1000, per_address_burst: 1000, per_credential_per_second: 1000, per_credential_burst: 1000 };
    Settings { rate, ..Settings::default() }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_async_call_is_answered_202_and_its_status_gives_the_response_later() {
    let s = TestServer::start_with(settings()).await;
    let api = s.demo().await;
    api.upload_http_extension("job.wasm", env!("GUEST_ASYNC_OPEN")).await;
    let id = accept_open(&s.client, &s.base, "job/orders?ms=1000", "hello").await;
    assert_eq!(id.len(), 32);
    // Queued or running: 202 with the same body, on the open status path only (the secure one
    // answers only for calls made through the secure endpoint).
    let pending = answer(open_status(&s.client, &s.base, "demo", &id).await).await;
    pending.expect(202);
    assert_eq!(pending.json(), json!({ "queueId": id }));
    api.get(&format!("/extensions/status/secure/{id}")).await.expect(404);
    // Complete: the extension's own status, headers and body, as often as asked.
    for _ in 0..2 {
        let done = settled(&s.client, &s.base, &id, Duration::from_secs(10)).await;
        assert_eq!(done.status(), 201);
        assert_eq!(done.headers()["x-job"], "done");
        let body: Value = done.json().await.unwrap();
        assert_eq!(body, json!({"slept": 1000, "method": "POST", "path": "/orders?ms=1000", "body": "hello"}));
    }
    // Done, it is still the open path's alone.
    let secure = api.request(Method::GET, &format!("/extensions/status/secure/{id}")).send().await.unwrap();
    assert_eq!(secure.status(), 404);
    // Unknown ids, another instance, another customerId: 404, with nothing to tell them apart.
    let staging = s.staging().await;
    staging.get(&format!("/extensions/status/secure/{id}")).await.expect(404);
    assert_eq!(open_status(&s.client, &s.base, "demo-staging", &id).await.status(), 404);
    assert_eq!(open_status(&s.client, &s.base, "nobody", &id).await.status(), 404);
    let unknown = "0123456789abcdef0123456789abcdef";
    assert_eq!(open_status(&s.client, &s.base, "demo", unknown).await.status(), 404);
    assert_eq!(open_status(&s.client, &s.base, "demo", "not-a-queue-id").await.status(), 404);
    api.get(&format!("/extensions/status/secure/{unknown}")).await.expect(404);
    assert_eq!(s.client.get(format!("{}/extensions/status/secure/{id}", s.base)).send().await.unwrap().status(), 401);
    // The result is kept for the retention (24 hours), then it is gone.
    s.clock.advance_secs(23 * 3600);
    assert_eq!(open_status(&s.client, &s.base, "demo", &id).await.status(), 201);
    s.clock.advance_secs(2 * 3600);
    assert_eq!(open_status(&s.client, &s.base, "demo", &id).await.status(), 404);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_secure_async_extension_is_queued_for_its_instance() {
    let s = TestServer::start_with(settings()).await;
    let api = s.demo().await;
    api.upload_http_extension("job.wasm", env!("GUEST_ASYNC_SECURE")).await;
    let r = api.request(Method::PUT, "/extensions/secure/job/items/7").body("payload").send().await.unwrap();
    let accepted = answer(r).await;
    accepted.expect(202);
    let id = accepted.json()["queueId"].as_str().unwrap().to_string();
    let path = format!("/extensions/status/secure/{id}");
    let done = until_not(202, Duration::from_secs(10), || async { api.request(Method::GET, &path).send().await.unwrap() }).await;
    assert_eq!(done.status(), 201);
    let body: Value = done.json().await.unwrap();
    assert_eq!((body["method"].as_str(), body["path"].as_str(), body["body"].as_str()), (Some("PUT"), Some("/items/7"), Some("payload")));
    // A secure async extension is still not reachable through the open endpoint.
    let open = s.client.post(format!("{}/extensions/open/demo/job/x", s.base)).send().await.unwrap();
    assert_eq!(open.status(), 403);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn past_the_report_threshold_the_status_is_400_and_the_result_still_comes() {
    let s = TestServer::start_with(settings()).await;
    let api = s.demo().await;
    api.upload_http_extension("job.wasm", env!("GUEST_ASYNC_OPEN")).await;
    let id = accept_open(&s.client, &s.base, "job/slow?ms=1500", "").await;
    assert_eq!(open_status(&s.client, &s.base, "demo", &id).await.status(), 202);
    s.clock.advance_secs(61);
    let overdue = answer(open_status(&s.client, &s.base, "demo", &id).await).await;
    overdue.expect(400);
    assert!(overdue.message().contains("longer than 60 seconds"), "{}", overdue.message());
    // The execution was not stopped: a later status call returns its result.
    let done = until_not(400, Duration::from_secs(10), || open_status(&s.client, &s.base, "demo", &id)).await;
    assert_eq!(done.status(), 201);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn failures_and_the_execution_limit_are_reported_and_logged() {
    let s = TestServer::start_with(settings()).await;
    let api = s.demo().await;
    api.upload_http_extension("job.wasm", env!("GUEST_ASYNC_OPEN")).await;
    let failing = accept_open(&s.client, &s.base, "job/x?fail=1", "").await;
    let spinning = accept_open(&s.client, &s.base, "job/x?spin=1", "").await;
    let r = settled(&s.client, &s.base, &failing, Duration::from_secs(10)).await;
    assert_eq!(r.status(), 502);
    assert!(r.text().await.unwrap().is_empty(), "no internals in the body");
    // The execution limit of the tests' queue is 3 s.
    let r = settled(&s.client, &s.base, &spinning, Duration::from_secs(10)).await;
    assert_eq!(r.status(), 504);
    let logs = api.get("/extensions/logs/job").await;
    logs.expect(200);
    let outcomes: Vec<String> = logs.json().as_array().unwrap().iter().map(|e| e["outcome"].as_str().unwrap().to_string()).collect();
    assert!(outcomes.iter().any(|o| o == "deadline"), "{outcomes:?}");
    assert!(outcomes.iter().any(|o| o == "trap"), "{outcomes:?}");
    // A failed execution is still found until its retention ends.
    assert_eq!(open_status(&s.client, &s.base, "demo", &failing).await.status(), 502);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn one_instance_flooding_the_queue_does_not_starve_another() {
    let s = TestServer::start_with(settings()).await;
    let (demo, staging) = (s.demo().await, s.staging().await);
    demo.upload_http_extension("job.wasm", env!("GUEST_ASYNC_SECURE")).await;
    staging.upload_http_extension("job.wasm", env!("GUEST_ASYNC_SECURE")).await;
    // 4 workers, of which demo may hold 3: 40 two-second executions of demo are 26 seconds of
    // work at the least. They are accepted ten at a time, so that their durable writes share
    // commits: on a slow disk, one call after another could take as long as demo's executions
    // and the flood would drain while it was being accepted (seen once in CI).
    let flood_started = Instant::now();
    let mut flood = Vec::new();
    for _ in 0..4 {
        let wave = futures_util::future::join_all((0..10).map(|_| demo.post_empty("/extensions/secure/job/x?ms=2000"))).await;
        for r in wave {
            r.expect(202);
            flood.push(r.json()["queueId"].as_str().unwrap().to_string());
        }
    }
    let flood_accepted_in = flood_started.elapsed();
    let started = Instant::now();
    let mut mine = Vec::new();
    for r in futures_util::future::join_all((0..2).map(|_| staging.post_empty("/extensions/secure/job/x?ms=50"))).await {
        r.expect(202);
        mine.push(r.json()["queueId"].as_str().unwrap().to_string());
    }
    let mine_accepted_in = started.elapsed();
    for id in &mine {
        // Only a safety stop: what tells fairness from starvation is how much of demo's flood is
        // still waiting when staging is done (below), which a pause of the whole machine (slow
        // commits, say) does not change.
        eventually(Duration::from_secs(30), "staging's executions finish", || async {
            let r = staging.get(&format!("/extensions/status/secure/{id}")).await;
            if r.status == 201 {
                return Ok(());
            }
            r.expect(202);
            Err("202".to_string())
        })
        .await;
    }
    let waited = started.elapsed();
    let mut statuses = std::collections::BTreeMap::new();
    for id in &flood {
        *statuses.entry(demo.get(&format!("/extensions/status/secure/{id}")).await.status.as_u16()).or_insert(0) += 1;
    }
    let pending = statuses.get(&202).copied().unwrap_or(0);
    assert!(
        pending >= 20,
        "staging's executions waited for demo's flood ({pending} of 40 still pending when they were done after {waited:?}; statuses of the flood: {statuses:?}; \
         the flood was accepted in {flood_accepted_in:?}, staging's calls in {mine_accepted_in:?})"
    );
    eprintln!("fairness: flood accepted in {flood_accepted_in:?}, staging's in {mine_accepted_in:?}, done after {waited:?} with {pending} of 40 pending");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_killed_server_loses_no_accepted_execution() {
    let dir = tempfile::tempdir().unwrap();
    let database = TestDatabase::create().await;
    let url = database.as_ref().map(|d| d.url.as_str());
    let args = ["--rate-per-address", "100000", "--burst-per-address", "100000"];
    let server = ServerProcess::start(dir.path(), url, &args).await;
    let api = Api::login(&server.base, "demo-public-key", "demo-public-secret").await;
    api.upload_http_extension("job.wasm", env!("GUEST_ASYNC_OPEN")).await;
    let client = reqwest::Client::new();
    // One running when the process dies, more still queued behind the 16 workers' worth. The
    // first runs long enough that it is still running however slowly the machine accepts the
    // other 19 (2 s was not always enough).
    let mut ids = Vec::new();
    for i in 0..20 {
        let ms = if i == 0 { 8000 } else { 2000 };
        ids.push(accept_open(&client, &server.base, &format!("job/n{i}?ms={ms}"), &format!("body {i}")).await);
    }
    assert_eq!(open_status(&client, &server.base, "demo", &ids[0]).await.status(), 202);
    server.kill();
    let server = ServerProcess::start(dir.path(), url, &args).await;
    for (i, id) in ids.iter().enumerate() {
        let r = settled(&client, &server.base, id, Duration::from_secs(30)).await;
        assert_eq!(r.status(), 201, "execution {i}");
        let body: Value = r.json().await.unwrap();
        assert_eq!(body["body"], format!("body {i}"));
    }
}

//! Http extensions built from guest sources (tests/build.rs), uploaded through the Assets API and
//! called through the secure and open endpoints over real HTTP; hostile guests contained.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;

use herald_host::runtime::RuntimeSettings;
use herald_tests::process::{ServerProcess, UNLIMITED_RATE};
use herald_tests::{answer, json, reqwest, test_runtime, Answer, Api, TestServer};
use reqwest::multipart::{Form, Part};
use reqwest::Method;

fn guest(path: &str) -> Vec<u8> {
    std::fs::read(path).unwrap_or_else(|e| panic!("{path}: {e}"))
}

async fn upload(api: &Api, name: &str, bytes: Vec<u8>, kind: &str, folder: Option<&str>) -> Answer {
    let mut form = Form::new().part("file", Part::bytes(bytes).file_name(name.to_string())).text("type", kind.to_string());
    if let Some(f) = folder {
        form = form.text("folder", f.to_string());
    }
    answer(api.request(Method::POST, "/assets/extensions").multipart(form).send().await.unwrap()).await
}

#[tokio::test]
async fn a_secure_extension_gets_the_call_and_answers_as_it_likes() {
    let s = TestServer::start().await;
    let api = s.demo().await;
    upload(&api, "echo.wasm", guest(env!("GUEST_ECHO")), "http", None).await.expect(201);
    let r = api
        .request(Method::POST, "/extensions/secure/echo/orders/42?x=1&y=%20z")
        .header("x-echo", "hello")
        .body("payload")
        .send()
        .await
        .unwrap();
    assert_eq!(r.status(), 200);
    assert_eq!(r.headers()["x-made-by"], "echo");
    let body: serde_json::Value = r.json().await.unwrap();
    assert_eq!(body, json!({"method": "POST", "path": "/orders/42?x=1&y=%20z", "echo": "hello", "body": "payload"}));
    let root = api.get("/extensions/secure/echo").await;
    root.expect(200);
    assert_eq!(root.json()["path"], "/");
    let no_credentials = s.client.get(format!("{}/extensions/secure/echo/x", s.base)).send().await.unwrap();
    assert_eq!(no_credentials.status(), 401);
    // A secure extension is not reachable through the open endpoint, and the unknown are 404.
    let open = s.client.get(format!("{}/extensions/open/demo/echo/x", s.base)).send().await.unwrap();
    assert_eq!(open.status(), 403);
    api.get("/extensions/secure/nope/x").await.expect(404);
    // Extensions in folders are named with a double-encoded slash.
    upload(&api, "hook.wasm", guest(env!("GUEST_ECHO")), "http", Some("web")).await.expect(201);
    api.get("/extensions/secure/web%252Fhook/x").await.expect(200);
}

#[tokio::test]
async fn an_open_extension_answers_without_credentials_for_its_instance_only() {
    let s = TestServer::start().await;
    let api = s.demo().await;
    upload(&api, "webhook.wasm", guest(env!("GUEST_OPEN_WEBHOOK")), "http", None).await.expect(201);
    let r = s.client.post(format!("{}/extensions/open/demo/webhook/events", s.base)).body("{\"id\": 1}").send().await.unwrap();
    assert_eq!(r.status(), 202);
    assert!(r.headers().contains_key("x-ratelimit-remaining"), "open calls count against the instance's cap");
    assert_eq!(r.text().await.unwrap(), "{\"received\":9}");
    api.get("/extensions/secure/webhook/events").await.expect(403);
    let other = s.client.post(format!("{}/extensions/open/demo-staging/webhook/events", s.base)).send().await.unwrap();
    assert_eq!(other.status(), 404);
    let unknown = s.client.post(format!("{}/extensions/open/nobody/webhook/events", s.base)).send().await.unwrap();
    assert_eq!(unknown.status(), 404);
}

#[tokio::test]
async fn uploads_that_cannot_run_are_refused_with_a_reason() {
    let s = TestServer::start().await;
    let api = s.demo().await;
    let cases: Vec<(&str, Vec<u8>, &str, &str)> = vec![
        ("junk.wasm", b"hello".to_vec(), "http", "not a WebAssembly component"),
        ("core.wasm", b"\0asm\x01\0\0\0".to_vec(), "http", "core WebAssembly module"),
        ("step.wasm", guest(env!("GUEST_ECHO")), "step", "must export herald:platform/step@0.1"),
        ("tagger.wasm", guest(env!("GUEST_STEP_TAGGER")), "http", "must export wasi:http/incoming-handler@0.2"),
        ("adult.wasm", guest(env!("GUEST_CONDITION_ADULT")), "monitor", "must export herald:platform/monitor@0.1"),
    ];
    for (name, bytes, kind, reason) in cases {
        let a = upload(&api, name, bytes, kind, None).await;
        a.expect(400);
        assert!(a.message().contains(reason), "{name}: {}", a.message());
    }
    assert_eq!(api.get("/assets/extensions/list").await.json(), json!([]), "nothing stored");
}

// Multi-threaded like the real server: the test's own runtime also runs the server under test.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn hostile_extensions_are_contained() {
    let s = TestServer::start().await;
    let api = s.demo().await;
    for (name, path) in
        [("echo", env!("GUEST_ECHO")), ("spin", env!("GUEST_SPIN")), ("bomb", env!("GUEST_BOMB")), ("panic", env!("GUEST_PANIC"))]
    {
        upload(&api, &format!("{name}.wasm"), guest(path), "http", None).await.expect(201);
    }
    // The endless loop ends at its deadline; meanwhile other calls are served.
    let spin_done = Arc::new(AtomicBool::new(false));
    let spinning = {
        let (api, done) = (api.clone(), spin_done.clone());
        tokio::spawn(async move {
            let a = api.get("/extensions/secure/spin").await;
            done.store(true, Ordering::SeqCst);
            a
        })
    };
    tokio::time::sleep(std::time::Duration::from_millis(200)).await;
    for _ in 0..5 {
        api.get("/extensions/secure/echo").await.expect(200);
    }
    assert!(!spin_done.load(Ordering::SeqCst), "the echo calls were served while the loop ran");
    let spun = spinning.await.unwrap();
    spun.expect(504);
    assert!(spun.text.is_empty());

    let bombed = api.get("/extensions/secure/bomb").await;
    bombed.expect(502);
    api.get("/extensions/secure/panic").await.expect(502);
    api.get("/extensions/secure/echo").await.expect(200);
    // The log records why each failed.
    let panicked = api.get("/extensions/logs/panic").await.json();
    assert_eq!(panicked[0]["outcome"], "trap", "{panicked}");
    assert!(panicked[0]["reason"].as_str().unwrap().contains("wasm trap"), "{panicked}");
    assert!(panicked[0]["stderr"].as_str().unwrap().contains("this extension always fails"), "{panicked}");
    assert_eq!(api.get("/extensions/logs/spin").await.json()[0]["outcome"], "deadline");
    assert_eq!(api.get("/extensions/logs/bomb").await.json()[0]["outcome"], "memory");
}

#[tokio::test]
async fn a_restart_serves_the_first_call_without_compiling() {
    // Its own folder of compiled components (the data directory's), not the run's shared one,
    // where another test may have compiled the same guest.
    let s = TestServer::start_with_runtime(RuntimeSettings { compiled_dir: None, ..test_runtime() }).await;
    let api = s.demo().await;
    upload(&api, "echo.wasm", guest(env!("GUEST_ECHO")), "http", None).await.expect(201);
    assert_eq!(s.compilations(), 1, "compiled once, at upload");
    api.get("/extensions/secure/echo").await.expect(200);
    assert_eq!(s.compilations(), 1, "the call used the upload's compilation");
    let s = s.restart().await;
    let api = s.demo().await;
    api.get("/extensions/secure/echo").await.expect(200);
    assert_eq!(s.compilations(), 0, "served from the precompiled artifact");
}

/// Successful executions' logs gather for up to 200 ms before they are written (`logs.rs`): a
/// graceful stop (SIGTERM to the real binary) writes what gathered, so every call answered before
/// the stop has its log after the restart.
#[tokio::test]
async fn a_graceful_stop_keeps_the_log_of_every_answered_call() {
    const CALLS: usize = 30;
    let data = tempfile::tempdir().unwrap();
    let database = herald_tests::TestDatabase::create().await;
    let url = database.as_ref().map(|d| d.url.as_str());
    let server = ServerProcess::start(data.path(), url, &UNLIMITED_RATE).await;
    let api = Api::login(&server.base, "demo-public-key", "demo-public-secret").await;
    api.upload_http_extension("hello.wasm", env!("GUEST_HELLO")).await;
    // The first log is written at once and the writer pauses: the calls after it gather.
    let client = reqwest::Client::new();
    for _ in 0..CALLS {
        let answer = client.get(format!("{}/extensions/open/demo/hello", server.base)).send().await.unwrap();
        assert_eq!(answer.status(), 200);
    }
    server.stop().await;
    let server = ServerProcess::start(data.path(), url, &UNLIMITED_RATE).await;
    let api = Api::login(&server.base, "demo-public-key", "demo-public-secret").await;
    let logs = api.get(&format!("/extensions/logs/hello?limit={}", CALLS + 10)).await.expect(200).json();
    let kept = logs.as_array().unwrap();
    assert_eq!(kept.len(), CALLS, "one log a call answered before the stop: {logs}");
    assert!(kept.iter().all(|log| log["outcome"] == "ok"), "{logs}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn outgoing_calls_reach_only_declared_hosts() {
    let s = TestServer::start().await;
    let api = s.demo().await;
    upload(&api, "fetch.wasm", guest(env!("GUEST_FETCH")), "http", None).await.expect(201);
    let encode = |url: &str| url.replace(':', "%3A").replace('/', "%2F");
    // Declared: 127.0.0.1 (this very server).
    let own = format!("{}/oauth2/token", s.base);
    let allowed = api.get(&format!("/extensions/secure/fetch?url={}", encode(&own))).await;
    allowed.expect(200);
    assert_eq!(allowed.text, "status 405", "the call went out and came back (GET on the token endpoint)");
    // Not declared: refused to the guest, which sees the error and goes on.
    for url in ["http://localhost:9/", "http://example.com/", "http://10.0.0.1/"] {
        let refused = api.get(&format!("/extensions/secure/fetch?url={}", encode(url))).await;
        refused.expect(200);
        assert_eq!(refused.text, "error ErrorCode::HttpRequestDenied", "{url}");
    }
}

#[tokio::test]
async fn every_extension_type_has_its_world() {
    let s = TestServer::start().await;
    let api = s.demo().await;
    for (name, path, kind) in [
        ("tagger.wasm", env!("GUEST_STEP_TAGGER"), "step"),
        ("adult.wasm", env!("GUEST_CONDITION_ADULT"), "condition"),
        ("campaign.wasm", env!("GUEST_MONITOR_OK"), "monitor"),
        ("apikey.wasm", env!("GUEST_AUTHHEADER_KEY"), "authheader"),
    ] {
        let a = upload(&api, name, guest(path), kind, None).await;
        a.expect(201);
        assert_eq!(a.json()["type"], kind);
    }
    let listed = api.get("/assets/extensions/list").await.json();
    assert_eq!(listed.as_array().unwrap().len(), 4);
    // Only http extensions answer calls.
    api.get("/extensions/secure/tagger").await.expect(404);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_operator_decides_too_and_private_addresses_stay_closed_by_default() {
    let encode = |url: &str| url.replace(':', "%3A").replace('/', "%2F");
    // The production default: any public host the extension declares, no private addresses.
    let s = TestServer::start_with_runtime(herald_host::runtime::RuntimeSettings::default()).await;
    let api = s.demo().await;
    upload(&api, "fetch.wasm", guest(env!("GUEST_FETCH")), "http", None).await.expect(201);
    let own = format!("{}/oauth2/token", s.base);
    let refused = api.get(&format!("/extensions/secure/fetch?url={}", encode(&own))).await;
    assert_eq!(refused.text, "error ErrorCode::HttpRequestDenied", "127.0.0.1 is declared but private");

    // Private allowed, but the operator's list does not name the host.
    let s = TestServer::start_with_runtime(herald_host::runtime::RuntimeSettings {
        outbound_private: true,
        outbound_hosts: vec!["api.example.com".into()],
        ..herald_tests::test_runtime()
    })
    .await;
    let api = s.demo().await;
    upload(&api, "fetch.wasm", guest(env!("GUEST_FETCH")), "http", None).await.expect(201);
    let own = format!("{}/oauth2/token", s.base);
    let refused = api.get(&format!("/extensions/secure/fetch?url={}", encode(&own))).await;
    assert_eq!(refused.text, "error ErrorCode::HttpRequestDenied", "the operator did not allow 127.0.0.1");
}

#[tokio::test]
async fn an_execution_runs_to_its_end_when_the_caller_goes_away() {
    // The guest runs in the caller's task until it answers; a caller that leaves first must not
    // stop it halfway (it may be writing to the instance's data).
    let s = TestServer::start().await;
    let api = s.demo().await;
    upload(&api, "sleepy.wasm", guest(env!("GUEST_SLEEPY")), "http", None).await.expect(201);
    let impatient = reqwest::Client::builder().timeout(std::time::Duration::from_millis(100)).build().unwrap();
    let gone = impatient.get(format!("{}/extensions/open/demo/sleepy/x?ms=600", s.base)).send().await;
    assert!(gone.is_err(), "the client gave up before the answer");
    let mut outcomes = json!([]);
    for _ in 0..60 {
        outcomes = api.get("/extensions/logs/sleepy").await.json();
        if !outcomes.as_array().unwrap().is_empty() {
            break;
        }
        tokio::time::sleep(std::time::Duration::from_millis(50)).await;
    }
    // It slept its 600 ms and went on to write its body, which nobody reads any more: the guest
    // finds that out itself (this one panics on it), rather than being cut off at 100 ms.
    assert!(outcomes[0]["durationMs"].as_i64().unwrap() >= 600, "{outcomes}");
    assert!(outcomes[0]["stderr"].as_str().unwrap().contains("write"), "{outcomes}");
}

/// Each kind imports only what its world offers: an authheader extension sees no recipient data,
/// so an upload that imports recipients-write is refused with the reason, while a step may.
#[tokio::test]
async fn each_kind_may_import_only_what_its_world_offers() {
    let s = TestServer::start().await;
    let api = s.demo().await;
    let component = |export: &str| {
        wat::parse_str(format!(
            r#"(component
                (import "herald:platform/recipients-write@0.1.0" (instance (export "achieve-event" (func))))
                (instance $e)
                (export "{export}" (instance $e)))"#
        ))
        .unwrap()
    };
    let refused = upload(&api, "auth.wasm", component("herald:platform/authheader@0.1.0"), "authheader", None).await;
    refused.expect(400);
    assert!(refused.message().contains("type 'authheader' may not import herald:platform/recipients-write@0.1.0"), "{}", refused.message());
    // A step's world offers recipients-write: the policy lets it through (the linker then checks
    // the function's shape, which this stand-in does not have).
    let step = upload(&api, "step.wasm", component("herald:platform/step@0.1.0"), "step", None).await;
    step.expect(400);
    assert!(!step.message().contains("may not import"), "{}", step.message());
    // Only an authheader's world offers the secrets.
    let reads_secrets = |export: &str| {
        wat::parse_str(format!(
            r#"(component
                (import "herald:platform/secrets@0.1.0" (instance (export "get" (func))))
                (instance $e)
                (export "{export}" (instance $e)))"#
        ))
        .unwrap()
    };
    for (kind, export) in [("step", "herald:platform/step@0.1.0"), ("monitor", "herald:platform/monitor@0.1.0")] {
        let refused = upload(&api, "reader.wasm", reads_secrets(export), kind, None).await;
        refused.expect(400);
        assert!(
            refused.message().contains(&format!("type '{kind}' may not import herald:platform/secrets@0.1.0")),
            "{}",
            refused.message()
        );
    }
    let authheader = upload(&api, "reader.wasm", reads_secrets("herald:platform/authheader@0.1.0"), "authheader", None).await;
    authheader.expect(400);
    assert!(!authheader.message().contains("may not import"), "an authheader may: {}", authheader.message());
    let unknown = upload(&api, "x.wasm", component("herald:platform/step@0.1.0"), "webhook", None).await;
    unknown.expect(400);
    assert!(unknown.message().contains("step, condition, http, monitor, authheader"), "{}", unknown.message());
}

/// The counter guest opts into reuse (5 calls, 2 s idle, 8 MiB) and answers how many calls its
/// instance has served. Calls are a little apart: an instance goes back for the next call when
/// its execution has ended, which may be just after its answer reached the client.
#[tokio::test]
async fn an_instance_is_reused_only_by_its_own_extension_and_instance_while_it_behaves() {
    let s = TestServer::start().await;
    let (demo, staging) = (s.demo().await, s.staging().await);
    for (api, name) in [(&demo, "counter.wasm"), (&demo, "twin.wasm"), (&staging, "counter.wasm")] {
        upload(api, name, guest(env!("GUEST_COUNTER")), "http", None).await.expect(201);
    }
    let call = |customer: &'static str, id: &'static str, path: &'static str| {
        let (client, url) = (s.client.clone(), format!("{}/extensions/open/{customer}/{id}/{path}", s.base));
        async move {
            tokio::time::sleep(std::time::Duration::from_millis(150)).await;
            let r = client.get(url).send().await.unwrap();
            (r.status().as_u16(), r.text().await.unwrap())
        }
    };
    for n in 1..=5 {
        assert_eq!(call("demo", "counter", "x").await, (200, format!("calls={n} leaked=0")), "one instance serves the calls in turn");
    }
    assert_eq!(call("demo", "counter", "x").await.1, "calls=1 leaked=0", "a fresh instance after reuse_calls calls");
    assert_eq!(call("demo-staging", "counter", "x").await.1, "calls=1 leaked=0", "another instance's calls never get it");
    assert_eq!(call("demo", "twin", "x").await.1, "calls=1 leaked=0", "nor does another extension of the same component");
    assert_eq!(call("demo", "counter", "x").await.1, "calls=2 leaked=0");
    // A call that fails drops its instance.
    assert_eq!(call("demo", "counter", "panic").await.0, 502);
    assert_eq!(call("demo", "counter", "x").await.1, "calls=1 leaked=0", "a failed call's instance is not reused");
    // The memory a reused instance keeps counts against the extension's 8 MiB: the call that
    // would pass it fails, and the next one starts afresh.
    assert_eq!(call("demo", "counter", "leak").await.1, "calls=2 leaked=2");
    assert_eq!(call("demo", "counter", "leak").await.1, "calls=3 leaked=4");
    let mut reached = false;
    for _ in 0..3 {
        let (status, text) = call("demo", "counter", "leak").await;
        if status == 502 {
            reached = true;
            break;
        }
        assert_eq!(status, 200, "{text}");
    }
    assert!(reached, "the memory cap stopped the hoarding instance");
    assert_eq!(call("demo", "counter", "x").await.1, "calls=1 leaked=0", "the instance that reached its cap was dropped");
    // Idle past reuse_idle_seconds, an instance is dropped.
    tokio::time::sleep(std::time::Duration::from_millis(2500)).await;
    assert_eq!(call("demo", "counter", "x").await.1, "calls=1 leaked=0", "an idle instance is not kept");
    // Each execution's record holds its own call only.
    let logs = demo.get("/extensions/logs/counter").await.json();
    assert!(logs.as_array().unwrap().iter().any(|l| l["outcome"] == "memory"), "{logs}");
}

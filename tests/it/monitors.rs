//! Monitor extensions on their schedules: run when due on the server's clock (one node runs each
//! due time, on PostgreSQL with two nodes too), their reports and failures kept and listed by
//! `GET /extensions/monitors`, and a change of status achieving the monitor's alert event.

use std::time::{Duration, Instant};

use herald_tests::recorder::Recorder;
use herald_tests::{eventually, json, Api, Settings, TestServer, OPS_INSTANCE};
use serde_json::Value;

/// The `ops` instance created through the operator's commands, and a client of it.
async fn ops(s: &TestServer) -> Api {
    s.apply_definition(OPS_INSTANCE).await;
    s.new_client("ops").await
}

async fn monitors(api: &Api) -> Value {
    let answer = api.get("/extensions/monitors").await;
    answer.expect(200);
    answer.json()
}

/// Polls the monitor list until `check` holds for the first monitor.
async fn until(api: &Api, what: &str, check: impl Fn(&Value) -> bool) -> Value {
    let check = &check;
    eventually(Duration::from_secs(30), what, || async move {
        let list = monitors(api).await;
        if list.get(0).is_some_and(check) {
            Ok(list[0].clone())
        } else {
            Err(list.to_string())
        }
    })
    .await
}

#[tokio::test]
async fn a_monitor_runs_on_its_schedule_and_alerts_when_its_status_changes() {
    let s = TestServer::start().await;
    let status_page = Recorder::start().await;
    let api = ops(&s).await;
    api.put("/globaldata/STATUS_URL", json!({"VALUE": status_page.url("127.0.0.1", "/health")})).await.expect(200);
    api.post("/recipients", json!({"personData": {"ID": 1, "EMAIL": "ops@example.com"}})).await.expect(201);
    api.upload_extension("status.wasm", env!("GUEST_MONITOR_HTTP"), "monitor").await;

    // Seen by a scheduler: when it runs next, nothing run yet.
    let pending = until(&api, "a schedule", |m| m["nextRunAt"].is_string()).await;
    assert_eq!(
        (pending["id"].as_str(), pending["schedule"].as_str(), pending["status"].as_str()),
        (Some("status"), Some("every 1m"), Some("pending"))
    );
    assert_eq!(pending["alert"], json!({"event": "INTEGRATION_DOWN", "recipient": 1}));
    assert_eq!(pending["history"], json!([]));
    // Not before its time.
    tokio::time::sleep(Duration::from_millis(700)).await;
    assert!(status_page.seen_at("/health").is_empty(), "a monitor ran before it was due");

    // A minute later on the server's clock it runs, and reports healthy.
    s.clock.advance_secs(61);
    let healthy = until(&api, "a first run", |m| m["history"].as_array().is_some_and(|h| h.len() == 1)).await;
    assert_eq!(healthy["status"], "healthy", "{healthy}");
    assert!(healthy["lastRun"]["message"].as_str().unwrap().contains("answered 200"), "{healthy}");
    let events = api.get("/recipients/1/events").await.json();
    assert_eq!(events, json!([]), "a first healthy run alerts no one");

    // The status page fails: the next run reports it, and the alert's event is achieved.
    status_page.set_health(503);
    s.clock.advance_secs(60);
    let down = until(&api, "a second run", |m| m["history"].as_array().is_some_and(|h| h.len() == 2)).await;
    assert_eq!(down["status"], "unhealthy");
    assert!(down["history"][0]["message"].as_str().unwrap().contains("answered 503"), "newest first: {down}");
    assert_eq!(down["history"][1]["status"], "healthy");
    let events = api.get("/recipients/1/events").await.json();
    assert_eq!(events.as_array().map(Vec::len), Some(1), "{events}");
    assert!(events.to_string().contains("INTEGRATION_DOWN"), "{events}");

    // One that hangs past its deadline (5 s) is kept as failed.
    api.put("/globaldata/STATUS_URL", json!({"VALUE": status_page.url("127.0.0.1", "/slow")})).await.expect(200);
    s.clock.advance_secs(60);
    let failed = until(&api, "a third run", |m| m["history"].as_array().is_some_and(|h| h.len() == 3)).await;
    assert_eq!(failed["status"], "failed", "{failed}");
    assert!(failed["lastRun"]["message"].as_str().unwrap().contains("deadline"), "{failed}");
    assert_eq!(api.get("/recipients/1/events").await.json().as_array().map(Vec::len), Some(2), "unhealthy to failed is a change");

    // Another instance sees none of it.
    assert_eq!(monitors(&s.demo().await).await, json!([]));
}

#[tokio::test]
async fn monitor_uploads_need_a_schedule_and_an_alert_the_instance_defines() {
    let s = TestServer::start().await;
    let api = s.demo().await;
    let upload = |name: &'static str, path: &'static str| {
        let api = api.clone();
        async move {
            let form = herald_tests::reqwest::multipart::Form::new()
                .part("file", herald_tests::reqwest::multipart::Part::bytes(std::fs::read(path).unwrap()).file_name(name))
                .text("type", "monitor");
            herald_tests::answer(
                api.request(herald_tests::reqwest::Method::POST, "/assets/extensions").multipart(form).send().await.unwrap(),
            )
            .await
        }
    };
    // demo defines no INTEGRATION_DOWN event.
    let refused = upload("status.wasm", env!("GUEST_MONITOR_HTTP")).await;
    refused.expect(400);
    assert!(
        refused.message().contains("'alert' names event 'INTEGRATION_DOWN', which the instance does not define"),
        "{}",
        refused.message()
    );
    upload("campaign.wasm", env!("GUEST_MONITOR_OK")).await.expect(201);
    let listed = until(&api, "a schedule", |m| m["nextRunAt"].is_string()).await;
    assert_eq!((listed["schedule"].as_str(), listed["alert"].is_null()), (Some("every 5m"), true));
}

/// On PostgreSQL two nodes share the schedule: a due run happens once.
#[tokio::test]
async fn two_nodes_run_a_due_monitor_once() {
    let first = TestServer::start().await;
    // Only PostgreSQL is shared by nodes.
    let Some(database) = first.database() else { return };
    let second_dir = tempfile::tempdir().unwrap();
    let second = TestServer::start_in(second_dir.path().to_path_buf(), Some(database), Settings::default()).await;
    let status_page = Recorder::start().await;
    let api = ops(&first).await;
    api.put("/globaldata/STATUS_URL", json!({"VALUE": status_page.url("127.0.0.1", "/health")})).await.expect(200);
    // The second node has just read (and cached) a list without the monitor: its scheduler must
    // not take that for the monitor's deletion and forget the schedule the first node sets.
    let on_second = second.new_client("ops").await;
    assert_eq!(monitors(&on_second).await, json!([]));
    api.upload_extension("status.wasm", env!("GUEST_MONITOR_HTTP"), "monitor").await;
    until(&api, "a schedule", |m| m["nextRunAt"].is_string()).await;
    first.clock.advance_secs(60);
    second.clock.advance_secs(60);
    until(&api, "a first run", |m| m["history"].as_array().is_some_and(|h| h.len() == 1)).await;
    for _ in 0..2 {
        first.clock.advance_secs(60);
        second.clock.advance_secs(60);
        tokio::time::sleep(Duration::from_millis(1500)).await;
    }
    let runs = until(&api, "three runs", |m| m["history"].as_array().is_some_and(|h| h.len() >= 3)).await;
    tokio::time::sleep(Duration::from_secs(1)).await;
    assert_eq!(monitors(&api).await[0]["history"].as_array().unwrap().len(), 3, "{runs}");
    assert_eq!(status_page.seen_at("/health").len(), 3, "each due run happened on one node");
}

/// Monitors run on the queue's fair worker pool: an instance whose monitors all hang does not hold
/// back another instance's monitor (the tests' pool has 4 places, at most 3 for one instance).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn one_instances_hanging_monitors_do_not_hold_back_anothers() {
    let s = TestServer::start().await;
    let status_page = Recorder::start().await;
    let ops = ops(&s).await;
    // Each of these hangs until its deadline (5 s): /slow answers after 10.
    ops.put("/globaldata/STATUS_URL", json!({"VALUE": status_page.url("127.0.0.1", "/slow")})).await.expect(200);
    for i in 0..6 {
        ops.upload_extension(&format!("slow{i}.wasm"), env!("GUEST_MONITOR_HTTP"), "monitor").await;
    }
    let demo = s.demo().await;
    demo.upload_extension("campaign.wasm", env!("GUEST_MONITOR_OK"), "monitor").await;
    eventually(Duration::from_secs(15), "every monitor scheduled", || async {
        let (all_ops, demo_listed) = (monitors(&ops).await, monitors(&demo).await);
        let scheduled = |list: &Value| list.as_array().unwrap().iter().all(|m| m["nextRunAt"].is_string());
        if all_ops.as_array().unwrap().len() == 6 && scheduled(&all_ops) && scheduled(&demo_listed) {
            Ok(())
        } else {
            Err(format!("{all_ops} {demo_listed}"))
        }
    })
    .await;
    // Everything is due at once (demo's monitor runs every 5 minutes, ops' every minute).
    s.clock.advance_secs(301);
    let due = Instant::now();
    let ran = until(&demo, "demo's monitor", |m| m["history"].as_array().is_some_and(|h| !h.is_empty())).await;
    assert_eq!(ran["status"], "healthy", "{ran}");
    let waited = due.elapsed();
    assert!(waited < Duration::from_millis(4500), "demo's monitor waited {waited:?} behind ops' hanging ones");
    assert!(monitors(&ops).await.as_array().unwrap().iter().all(|m| m["history"] == json!([])), "ops' monitors were still hanging");
}

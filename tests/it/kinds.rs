//! Every kind of extension runs through the runtime's one call path (a fresh store for the
//! instance, limits, deadline, log, execution record). Step, condition, monitor and authheader
//! extensions are called through the runtime's test harness (`POST /testing/extensions/{id}/:run`)
//! until flows, schedules and outbound calls call them.

use herald_tests::{answer, json, reqwest, Answer, Api, TestServer};
use reqwest::multipart::{Form, Part};
use reqwest::Method;
use serde_json::Value;

async fn upload(api: &Api, name: &str, path: &str, kind: &str) {
    let bytes = std::fs::read(path).unwrap();
    let form = Form::new().part("file", Part::bytes(bytes).file_name(name.to_string())).text("type", kind.to_string());
    answer(api.request(Method::POST, "/assets/extensions").multipart(form).send().await.unwrap()).await.expect(201);
}

async fn run(api: &Api, id: &str, body: Value) -> Value {
    let a: Answer = api.post(&format!("/testing/extensions/{id}/:run"), body).await;
    a.expect(200);
    a.json()
}

#[tokio::test]
async fn steps_conditions_monitors_and_authheaders_run_for_their_instance() {
    let s = TestServer::start().await;
    let api = s.demo().await;
    upload(&api, "tagger.wasm", env!("GUEST_STEP_TAGGER"), "step").await;
    upload(&api, "adult.wasm", env!("GUEST_CONDITION_ADULT"), "condition").await;
    upload(&api, "campaign.wasm", env!("GUEST_MONITOR_OK"), "monitor").await;
    upload(&api, "key.wasm", env!("GUEST_AUTHHEADER_KEY"), "authheader").await;
    let adult = api.create_recipient(json!({"AGE": 30})).await;
    let child = api.create_recipient(json!({"AGE": 10})).await;

    // A condition reads the recipient it is given.
    assert_eq!(run(&api, "adult", json!({"recipient": adult})).await, json!({"outcome": "ok", "value": true}));
    assert_eq!(run(&api, "adult", json!({"recipient": child})).await, json!({"outcome": "ok", "value": false}));
    // A step writes through the platform interfaces, to its own instance.
    assert_eq!(run(&api, "tagger", json!({"recipient": adult, "context": {"x": 1}})).await["outcome"], "ok");
    assert_eq!(api.get(&format!("/recipients/{adult}")).await.json()["personData"]["COUNTRY"], "FR");
    // A monitor reports; an authheader makes headers for its host and none for another.
    let report = run(&api, "campaign", json!({})).await;
    assert_eq!(report["value"]["healthy"], true, "{report}");
    let declined = run(&api, "key", json!({"host": "api.example.com", "method": "GET", "path": "/x"})).await;
    // An authheader's own reason is not passed on (it may hold a secret in any form): a local run
    // (`herald extension run`) shows it to its author.
    assert_eq!(declined, json!({"outcome": "error", "reason": "it declined; its own text is not kept (it holds the instance's secrets)"}));
    api.put("/extensions/secrets/CRM_TOKEN", json!({"value": "tok-kinds"})).await.expect(201);
    let headers = run(&api, "key", json!({"host": "api.example.com", "method": "GET", "path": "/x"})).await;
    assert_eq!(headers["value"], json!({"headers": [["authorization", "Bearer tok-kinds"]], "maxAgeSeconds": 60}), "{headers}");
    // Each execution is recorded like an http call's (successful ones are written in batches).
    let logs = herald_tests::eventually(std::time::Duration::from_secs(10), "both executions recorded", || async {
        let logs = api.get("/extensions/logs/adult").await.json();
        if logs.as_array().map(Vec::len) == Some(2) {
            Ok(logs)
        } else {
            Err(logs.to_string())
        }
    })
    .await;
    assert!(logs.as_array().unwrap().iter().all(|l| l["outcome"] == "ok"), "{logs}");

    // The same step for a recipient of another instance is not reachable: its harness call is
    // made with staging's credential, and runs on staging's data.
    let staging = s.staging().await;
    staging.post("/testing/extensions/tagger/:run", json!({"recipient": adult})).await.expect(404);
}

#[tokio::test]
async fn a_step_that_declines_or_fails_ends_with_its_reason() {
    let s = TestServer::start().await;
    let api = s.demo().await;
    upload(&api, "tagger.wasm", env!("GUEST_STEP_TAGGER"), "step").await;
    // Without a recipient the step has no USER_ID: it declines with its own message.
    let declined = run(&api, "tagger", json!({})).await;
    assert_eq!(declined, json!({"outcome": "error", "reason": "no USER_ID"}));
    // A component that is not a step (an http extension uploaded as one is refused at upload, so
    // the harness is asked for an unknown id).
    api.post("/testing/extensions/nope/:run", json!({})).await.expect(404);
}

//! Scheduled flows: at its cron time (the server's clock), a flow runs for every recipient of its
//! target group, in batches, with its progress on `GET /flows/{name}`.

use std::time::Duration;

use futures_util::FutureExt;
use herald_tests::reqwest::Method;
use herald_tests::{eventually, json, until_not, Api, TestServer};
use serde_json::Value;

/// `GET /flows/{name}` once the flow exists and `ready` holds for it.
async fn flow_when(api: &Api, name: &str, what: &str, ready: impl Fn(&Value) -> bool) -> Value {
    let ready = &ready;
    eventually(Duration::from_secs(30), what, || async move {
        let answer = api.get(&format!("/flows/{name}")).await;
        let flow = if answer.status == 200 { answer.json() } else { json!({"status": answer.status.as_u16()}) };
        if answer.status == 200 && ready(&flow) {
            Ok(flow)
        } else {
            Err(flow.to_string())
        }
    })
    .await
}

#[tokio::test]
async fn a_scheduled_flow_runs_for_every_recipient_of_its_target_group() {
    let s = TestServer::start().await;
    let api = s.demo().await;
    api.upload_extension("adult.wasm", env!("GUEST_CONDITION_ADULT"), "condition").await;
    api.upload_extension("tagger.wasm", env!("GUEST_STEP_TAGGER"), "step").await;
    // More adults than one batch of a sweep holds (500), and some who are not in the target group.
    for i in 0..530 {
        api.create_recipient(json!({"EMAIL": format!("adult{i}@example.com"), "AGE": 20 + i % 50})).await;
    }
    let mut minors = Vec::new();
    for i in 0..3 {
        minors.push(api.create_recipient(json!({"EMAIL": format!("minor{i}@example.com"), "AGE": 12})).await);
    }
    let flow = json!({
        "trigger": {"schedule": "0 9 * * *", "targetGroup": "ADULTS"},
        "nodes": [{"condition": {"extension": "adult"}}, {"step": "tagger"}]
    });
    api.put("/flows/daily", flow).await.expect(201);
    let seen = flow_when(&api, "daily", "the scheduler's first look", |f| f["scheduled"]["nextAt"].is_string()).await;
    assert!(seen["scheduled"]["lastFiring"].is_null(), "not fired before its time: {seen}");
    // A day later, 09:00 UTC has passed once.
    s.clock.advance_secs(25 * 3600);
    let fired = flow_when(&api, "daily", "the end of the sweep", |f| f["scheduled"]["lastFiring"]["done"] == true).await;
    assert_eq!(fired["scheduled"]["lastFiring"]["recipients"], 530, "{fired}");

    let tagged = api.get("/recipients?filter=COUNTRY==\"FR\"").await.json();
    assert_eq!(tagged.as_array().map(Vec::len), Some(530));
    for minor in minors {
        assert!(api.get(&format!("/recipients/{minor}")).await.json()["personData"]["COUNTRY"].is_null());
        assert_eq!(api.get(&format!("/flows/daily/runs?recipientId={minor}")).await.json(), json!([]));
    }
    let runs = api.get("/flows/daily/runs?recipientId=1").await.json();
    assert_eq!(runs.as_array().map(Vec::len), Some(1), "{runs}");
    assert_eq!((runs[0]["trigger"].as_str(), runs[0]["outcome"].as_str()), (Some("schedule"), Some("completed")));
    let traced = api.get(&format!("/flows/daily/runs/{}", runs[0]["id"].as_str().unwrap())).await.json();
    assert_eq!(traced["trace"].as_array().map(Vec::len), Some(2), "{traced}");

    // It fires once per time: nothing more until the next 09:00.
    tokio::time::sleep(Duration::from_secs(1)).await;
    assert_eq!(api.get("/flows/daily/runs?recipientId=1").await.json().as_array().map(Vec::len), Some(1));
    s.clock.advance_secs(24 * 3600);
    flow_when(&api, "daily", "the second firing", |f| {
        f["scheduled"]["lastFiring"]["done"] == true && f["scheduled"]["lastFiring"]["at"] != fired["scheduled"]["lastFiring"]["at"]
    })
    .await;
    assert_eq!(api.get("/flows/daily/runs?recipientId=1").await.json().as_array().map(Vec::len), Some(2));
}

// A schedule belongs to its flow: one deleted and created again under the same name starts from
// its own next time, not from the deleted one's (which has passed, and would fire it at once).
#[tokio::test]
async fn a_flow_created_again_under_a_deleted_ones_name_waits_for_its_own_time() {
    let s = TestServer::start().await;
    let api = s.demo().await;
    api.create_recipient(json!({"EMAIL": "adult@example.com", "AGE": 30})).await;
    let flow = json!({"trigger": {"schedule": "0 9 * * *", "targetGroup": "ADULTS"}, "nodes": [{"set": {"OPTIN": true}}]});
    api.put("/flows/morning", flow.clone()).await.expect(201);
    flow_when(&api, "morning", "the scheduler's first look", |f| f["scheduled"]["nextAt"].is_string()).await;
    api.delete("/flows/morning").await.expect(204);
    // The deleted flow's next time passes.
    s.clock.advance_secs(25 * 3600);
    api.put("/flows/morning", flow).await.expect(201);
    let seen = flow_when(&api, "morning", "the new flow's schedule", |f| f["scheduled"]["nextAt"].is_string()).await;
    waits_for_its_own_time(&api, "morning", &seen).await;
}

/// After a few of the scheduler's looks, flow `name` has not fired: no last firing, the next time
/// `seen` showed, and no run for recipient 1.
async fn waits_for_its_own_time(api: &Api, name: &str, seen: &Value) {
    tokio::time::sleep(Duration::from_secs(2)).await;
    let later = api.get(&format!("/flows/{name}")).await.json();
    assert!(later["scheduled"]["lastFiring"].is_null(), "fired before its own time: {later}");
    assert_eq!(later["scheduled"]["nextAt"], seen["scheduled"]["nextAt"]);
    assert_eq!(api.get(&format!("/flows/{name}/runs?recipientId=1")).await.json(), json!([]));
}

/// An instance whose definition ships a daily flow (with `flow`) or not.
fn definition(flow: bool) -> String {
    let mut toml = String::from(
        r#"
[[instance]]
customer_id = "mornings"
environment = "production"
licensed_uar = 1000

[model]
recipient_id = "USER_ID"
person_data = [{ name = "USER_ID", type = "NUMBER", unique = true }, { name = "OPTIN", type = "BOOLEAN" }]
"#,
    );
    if flow {
        toml.push_str(
            r#"
[[model.flows]]
name = "MORNING"
trigger = { schedule = "0 9 * * *", filter = "USER_ID>0" }
nodes = [{ set = { OPTIN = true } }]
"#,
        );
    }
    toml
}

// The same for a flow of the instance definition: one that `herald instance apply` drops, then
// defines again after its old next time has passed, starts from its own next time.
#[tokio::test]
async fn a_flow_dropped_from_the_definition_and_defined_again_waits_for_its_own_time() {
    let s = TestServer::start().await;
    s.apply_definition(&definition(true)).await;
    let api = s.new_client("mornings").await;
    api.create_recipient(json!({"USER_ID": 1})).await;
    flow_when(&api, "MORNING", "the scheduler's first look", |f| f["scheduled"]["nextAt"].is_string()).await;
    s.apply_definition(&definition(false)).await;
    let gone = until_not(200, Duration::from_secs(10), || api.request(Method::GET, "/flows/MORNING").send().map(Result::unwrap)).await;
    assert_eq!(gone.status(), 404, "the server loads the definition without the flow");
    // A few of the scheduler's looks without the flow (each forgets what it does not see).
    tokio::time::sleep(Duration::from_secs(2)).await;
    s.clock.advance_secs(25 * 3600);
    s.apply_definition(&definition(true)).await;
    let seen = flow_when(&api, "MORNING", "the flow's new schedule", |f| f["scheduled"]["nextAt"].is_string()).await;
    waits_for_its_own_time(&api, "MORNING", &seen).await;
}

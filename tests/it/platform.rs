//! Extensions reaching their instance's data through `herald:platform` (wit/platform.wit): an
//! open webhook writes recipients and One-To-Many records, a secure extension reads, each only in
//! the instance of its route or credential; an open extension that could read is refused.

use herald_tests::{answer, json, reqwest, Answer, Api, TestServer};
use reqwest::multipart::{Form, Part};
use reqwest::Method;

async fn upload(api: &Api, name: &str, path: &str) -> Answer {
    let form = Form::new().part("file", Part::bytes(std::fs::read(path).unwrap()).file_name(name.to_string())).text("type", "http");
    answer(api.request(Method::POST, "/assets/extensions").multipart(form).send().await.unwrap()).await
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_open_webhook_writes_recipients_and_their_records() {
    let s = TestServer::start().await;
    let api = s.demo().await;
    upload(&api, "crm-webhook.wasm", env!("GUEST_CRM_WEBHOOK")).await.expect(201);
    let url = format!("{}/extensions/open/demo/crm-webhook", s.base);
    let payload = json!({"email": "ann@shop.example", "firstName": "Ann",
                         "purchases": [{"id": "o1", "product": "hat", "amount": 9.5}, {"id": "o2", "product": "scarf", "amount": 20}]});
    let r = answer(s.client.post(&url).json(&payload).send().await.unwrap()).await;
    r.expect(200);
    assert_eq!(r.json(), json!({"userId": 1.0, "purchases": 2}));

    let stored = api.get("/recipients/EMAIL=ann%2540shop.example").await;
    stored.expect(200);
    assert_eq!(stored.json()["personData"]["FIRST_NAME"], "Ann");
    let records = api.get("/recipients/1/oneToManyTables/PURCHASES").await.json();
    assert_eq!(records.as_array().unwrap().len(), 2);
    assert_eq!(records[0]["PRODUCT"], "hat");

    // The same customer again: updated, not duplicated.
    let again = json!({"email": "ann@shop.example", "firstName": "Anne", "purchases": [{"id": "o1", "product": "cap", "amount": 5}]});
    let r = answer(s.client.post(&url).json(&again).send().await.unwrap()).await;
    assert_eq!(r.json()["userId"], 1.0);
    assert_eq!(api.get("/recipients").await.json().as_array().unwrap().len(), 1);
    assert_eq!(api.get("/recipients/1").await.json()["personData"]["FIRST_NAME"], "Anne");
    assert_eq!(api.get("/recipients/1/oneToManyTables/PURCHASES").await.json()[0]["PRODUCT"], "cap");

    // What the data model refuses, the guest hears and reports.
    let bad = json!({"email": "bob@shop.example", "purchases": [{"id": "o9", "amount": "lots"}]});
    let r = answer(s.client.post(&url).json(&bad).send().await.unwrap()).await;
    r.expect(400);
    assert!(r.text.contains("AMOUNT"), "{}", r.text);
    // The executions are kept for the operator, newest first, with what the extension logged.
    // A successful call's log is written once its task ends, just after the response.
    let mut logs = json!([]);
    for _ in 0..50 {
        let answer = api.get("/extensions/logs/crm-webhook").await;
        answer.expect(200);
        logs = answer.json();
        if logs.as_array().unwrap().len() == 3 {
            break;
        }
        tokio::time::sleep(std::time::Duration::from_millis(50)).await;
    }
    assert_eq!(logs.as_array().unwrap().len(), 3, "{logs}");
    assert_eq!(logs[2]["outcome"], "ok");
    assert_eq!(logs[2]["log"], json!(["info: upserted ann@shop.example with 2 purchases"]));
    api.get("/extensions/logs/nope").await.expect(404);
    assert_eq!(s.staging().await.get("/extensions/logs/crm-webhook").await.status.as_u16(), 404);
    // The webhook of demo wrote nothing into demo-staging.
    assert_eq!(s.staging().await.get("/recipients").await.json(), json!([]));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_secure_extension_reads_its_own_instance_only() {
    let s = TestServer::start().await;
    let demo = s.demo().await;
    let staging = s.staging().await;
    upload(&demo, "finder.wasm", env!("GUEST_RECIPIENT_FINDER")).await.expect(201);
    upload(&staging, "finder.wasm", env!("GUEST_RECIPIENT_FINDER")).await.expect(201);
    demo.create_recipient(json!({"EMAIL": "p1@example.com", "CITY": "Paris"})).await;
    demo.create_recipient(json!({"EMAIL": "l1@example.com", "CITY": "Lyon"})).await;
    demo.create_recipient(json!({"EMAIL": "p2@example.com", "CITY": "Paris"})).await;
    let filter = "CITY%3D%3D%22Paris%22";
    let found = demo.get(&format!("/extensions/secure/finder?filter={filter}")).await;
    found.expect(200);
    assert_eq!(found.json(), json!({"emails": ["p1@example.com", "p2@example.com"]}));
    let everyone = demo.get("/extensions/secure/finder").await.json();
    assert_eq!(everyone["emails"].as_array().unwrap().len(), 3);
    // The same extension in staging sees staging's (empty) data: the instance is the route's.
    assert_eq!(staging.get(&format!("/extensions/secure/finder?filter={filter}")).await.json(), json!({"emails": []}));
    let bad = demo.get("/extensions/secure/finder?filter=NOPE%3D%3D1").await;
    bad.expect(400);
    assert!(bad.text.contains("unknown selector NOPE"), "{}", bad.text);
}

#[tokio::test]
async fn an_open_extension_that_could_read_recipients_is_refused() {
    let s = TestServer::start().await;
    let api = s.demo().await;
    let refused = upload(&api, "leak.wasm", env!("GUEST_OPEN_READER")).await;
    refused.expect(400);
    assert!(refused.message().contains("may not import herald:platform/recipients-read"), "{}", refused.message());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_extension_keeps_global_data_table_records() {
    let s = TestServer::start().await;
    let api = s.demo().await;
    upload(&api, "locator.wasm", env!("GUEST_STORE_LOCATOR")).await.expect(201);
    for (id, name, city) in [("S1", "Opera", "Paris"), ("S2", "Bellecour", "Lyon"), ("S3", "Bastille", "Paris")] {
        api.post("/extensions/secure/locator", json!({"id": id, "name": name, "city": city})).await.expect(200);
    }
    assert_eq!(api.get("/globaldata/tables/STORES").await.json().as_array().unwrap().len(), 3, "visible to the REST API");
    let paris = api.get("/extensions/secure/locator?city=Paris").await;
    paris.expect(200);
    assert_eq!(paris.json(), json!({"stores": ["Opera", "Bastille"], "context": null}));
    let no_id = api.post("/extensions/secure/locator", json!({"name": "Nameless"})).await;
    no_id.expect(400);
    assert!(no_id.text.contains("identifier"), "{}", no_id.text);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_sdk_extension_creates_and_updates_recipients() {
    let s = TestServer::start().await;
    let api = s.demo().await;
    upload(&api, "admin.wasm", env!("GUEST_RECIPIENT_ADMIN")).await.expect(201);
    let call = |method: Method, path: &str, body: Option<serde_json::Value>| {
        let mut r = api.request(method, &format!("/extensions/secure/admin{path}"));
        if let Some(b) = body {
            r = r.json(&b);
        }
        async move { answer(r.send().await.unwrap()).await }
    };
    let created = call(Method::POST, "/", Some(json!({"personData": {"EMAIL": "bo@x.example", "FIRST_NAME": "Bo", "AGE": 40}}))).await;
    created.expect(201);
    assert_eq!((created.json()["EMAIL"].as_str(), created.json()["AGE"].as_f64()), (Some("bo@x.example"), Some(40.0)));
    let again = call(Method::POST, "/", Some(json!({"personData": {"EMAIL": "bo@x.example"}}))).await;
    again.expect(409);
    assert!(again.message().contains("EMAIL"), "{}", again.message());
    let updated = call(Method::PUT, "/bo@x.example", Some(json!({"personData": {"CITY": "Lyon"}}))).await;
    updated.expect(200);
    assert_eq!((updated.json()["CITY"].as_str(), updated.json()["FIRST_NAME"].as_str()), (Some("Lyon"), Some("Bo")));
    call(Method::PUT, "/nobody@x.example", Some(json!({"personData": {"CITY": "Lyon"}}))).await.expect(404);
    // A unique value another recipient holds: the update is refused and names the field.
    call(Method::POST, "/", Some(json!({"personData": {"EMAIL": "al@x.example"}}))).await.expect(201);
    let taken = call(Method::PUT, "/bo@x.example", Some(json!({"personData": {"EMAIL": "al@x.example"}}))).await;
    taken.expect(409);
    assert!(taken.message().contains("EMAIL") && taken.message().contains("al@x.example"), "{}", taken.message());
    let moved = call(Method::PUT, "/bo@x.example", Some(json!({"personData": {"USER_ID": 999}}))).await;
    // The same rule and answer as the REST API's (one place decides: `domain::recipients`).
    moved.expect(409);
    assert!(moved.message().contains("cannot be changed"), "{}", moved.message());
    let invalid = call(Method::POST, "/", Some(json!({"personData": {"EMAIL": "cy@x.example", "AGE": "old"}}))).await;
    invalid.expect(400);
    assert!(invalid.message().contains("AGE"), "{}", invalid.message());
    call(Method::GET, "/bo@x.example", None).await.expect(200);
    call(Method::GET, "/cy@x.example", None).await.expect(404);
    let stored = api.get("/recipients/EMAIL=bo%2540x.example").await;
    stored.expect(200);
    assert_eq!(stored.json()["personData"]["CITY"], "Lyon");
}

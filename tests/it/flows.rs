//! Flows through the API: defined by the instance's people (`PUT /flows/{name}`) beside the
//! operator's (the demo's WELCOME_MAIL, from its instance definition), validated with every
//! problem at once, and kept per instance.

use herald_tests::{answer, json, reqwest, TestServer};
use reqwest::multipart::{Form, Part};
use reqwest::Method;

#[tokio::test]
async fn flows_are_defined_listed_replaced_and_deleted_per_instance() {
    let s = TestServer::start().await;
    let api = s.demo().await;
    // The operator's flow is there from the instance definition.
    let listed = api.get("/flows").await.json();
    assert_eq!(listed[0]["name"], "WELCOME_MAIL");
    assert_eq!(listed[0]["source"], "definition");
    assert_eq!(listed[0]["trigger"], json!({"event": "WELCOME"}));

    let flow = json!({
        "description": "Tag adults in Paris every Monday",
        "trigger": {"schedule": "0 9 * * 1", "targetGroup": "PARIS"},
        "nodes": [{"condition": {"filter": "AGE>=18"}, "else": [{"set": {"OPTIN": false}}]}, {"step": "tagger"}, {"wait": "2d"}, {"event": "NEWSLETTER_SIGNUP"}]
    });
    let created = api.put("/flows/paris-adults", flow.clone()).await;
    created.expect(201);
    assert_eq!((created.json()["version"].as_i64(), created.json()["source"].as_str()), (Some(1), Some("api")));
    let replaced = api.put("/flows/paris-adults", flow).await;
    replaced.expect(200);
    assert_eq!(replaced.json()["version"], 2, "every change counts");
    assert_eq!(api.get("/flows/paris-adults").await.json()["nodes"][1]["step"], "tagger");
    let names: Vec<String> =
        api.get("/flows").await.json().as_array().unwrap().iter().map(|f| f["name"].as_str().unwrap().to_string()).collect();
    assert_eq!(names, ["WELCOME_MAIL", "STORE_ASSIGNMENT", "paris-adults"], "the operator's first, then the instance's");

    // Another instance sees none of it.
    let staging = s.staging().await;
    staging.get("/flows/paris-adults").await.expect(404);
    assert!(staging.get("/flows").await.json().as_array().unwrap().iter().all(|f| f["name"] != "paris-adults"));

    // The operator's flow is the operator's.
    api.put("/flows/WELCOME_MAIL", json!({"trigger": {"event": "WELCOME"}, "nodes": [{"send": "x"}]})).await.expect(409);
    api.delete("/flows/WELCOME_MAIL").await.expect(409);
    api.delete("/flows/paris-adults").await.expect(204);
    api.delete("/flows/paris-adults").await.expect(404);
}

#[tokio::test]
async fn a_flow_with_problems_is_refused_with_all_of_them() {
    let s = TestServer::start().await;
    let api = s.demo().await;
    // An uploaded extension of the wrong kind is a problem; one not uploaded yet is not.
    let condition = std::fs::read(env!("GUEST_CONDITION_ADULT")).unwrap();
    let form = Form::new().part("file", Part::bytes(condition).file_name("adult.wasm")).text("type", "condition");
    answer(api.request(Method::POST, "/assets/extensions").multipart(form).send().await.unwrap()).await.expect(201);
    let bad = api
        .put(
            "/flows/broken",
            json!({
                "trigger": {"event": "NO_SUCH_EVENT"},
                "contextSchema": "nope",
                "nodes": [{"condition": {"filter": "COLOUR==red"}}, {"step": "adult"}, {"set": {"AGE": "old"}}, {"wait": "soon"}, {"step": "not-uploaded-yet"}]
            }),
        )
        .await;
    bad.expect(400);
    let message = bad.message();
    for expected in [
        "unknown event 'NO_SUCH_EVENT'",
        "unknown Context Parameter Schema 'nope'",
        "node 1: condition filter 'COLOUR==red': unknown Person Data field COLOUR",
        "node 2: extension 'adult' is a condition extension, not a step",
        "node 3: set: Person Data field AGE expects a NUMBER",
        "node 4: wait 'soon'",
    ] {
        assert!(message.contains(expected), "missing {expected:?} in:\n{message}");
    }
    assert!(!message.contains("not-uploaded-yet"), "an extension to come is accepted: {message}");
    api.get("/flows/broken").await.expect(404);
    // Not a flow at all.
    let unreadable = api.put("/flows/x", json!({"trigger": {"event": "WELCOME"}, "nodes": [], "colour": "red"})).await;
    unreadable.expect(400);
    assert!(unreadable.message().contains("colour"), "{}", unreadable.message());
    api.put("/flows/other", json!({"name": "mismatch", "trigger": {"event": "WELCOME"}, "nodes": [{"send": "w"}]})).await.expect(400);
    api.put("/flows/bad%20name", json!({"trigger": {"event": "WELCOME"}, "nodes": [{"send": "w"}]})).await.expect(400);
}

/// The demo creates the template its WELCOME_MAIL sends, committed, on its first start.
#[tokio::test]
async fn the_demo_ships_the_welcome_template() {
    let s = TestServer::start().await;
    let api = s.demo().await;
    let names: Vec<String> = api
        .get("/assets/templates/list")
        .await
        .json()
        .as_array()
        .unwrap()
        .iter()
        .map(|e| e["name"].as_str().unwrap().to_string())
        .collect();
    assert!(names.contains(&"welcome.html".to_string()), "{names:?}");
    let text = s
        .client
        .get(format!("{}/dav/templates/welcome.html", s.base))
        .basic_auth("demo-public-key", Some("demo-public-secret"))
        .send()
        .await
        .unwrap()
        .text()
        .await
        .unwrap();
    assert!(text.contains("Welcome"), "{text}");
    assert!(s.data_dir.join("instances/demo/committed/templates/welcome.html").exists(), "committed too");
}

/// Contextual data on an achieved event: checked against its published schema and against the
/// flows the event triggers before anything is recorded, and never written to the recipient.
#[tokio::test]
async fn contextual_data_is_checked_before_the_event_is_recorded() {
    let s = TestServer::start().await;
    let api = s.demo().await;
    let schema = br#"{"models": [{"name": "SIGNUP", "type": "person_data", "required": true, "fields": [{"name": "SOURCE", "data_type": "string", "required": true}]}]}"#;
    let form = Form::new().part("file", Part::bytes(schema.to_vec()).file_name("signup.json"));
    answer(api.request(Method::POST, "/assets/contexts").multipart(form).send().await.unwrap()).await.expect(201);
    let id = api.create_recipient(json!({"EMAIL": "c@example.com"})).await;
    let achieve = |event: &str| format!("/recipients/{id}/events/{event}/:achieveEvent");

    // Without a body, as before; with valid data too.
    api.post_empty(&achieve("PURCHASE_MADE")).await.expect(200);
    api.post(&achieve("PURCHASE_MADE"), json!({"name": "signup", "data": {"SIGNUP": {"SOURCE": "web"}}})).await.expect(200);
    // Invalid data, an unknown schema, a malformed body: 400 saying what, and nothing recorded.
    let invalid = api.post(&achieve("PURCHASE_MADE"), json!({"name": "signup", "data": {"SIGNUP": {}}})).await;
    invalid.expect(400);
    assert!(invalid.message().contains("SOURCE"), "{}", invalid.message());
    api.post(&achieve("PURCHASE_MADE"), json!({"name": "nope", "data": {}})).await.expect(400);
    api.post(&achieve("PURCHASE_MADE"), json!({"schema": "signup"})).await.expect(400);
    assert_eq!(api.get(&format!("/recipients/{id}/events")).await.json().as_array().map(Vec::len), Some(2));

    // A flow that declares a schema needs its data from the calls that trigger it.
    let flow = json!({"trigger": {"event": "NEWSLETTER_SIGNUP"}, "contextSchema": "signup", "nodes": [{"send": "welcome"}]});
    api.put("/flows/signup-mail", flow).await.expect(201);
    let missing = api.post_empty(&achieve("NEWSLETTER_SIGNUP")).await;
    missing.expect(400);
    assert!(missing.message().contains("flow signup-mail needs contextual data of schema 'signup'"), "{}", missing.message());
    api.post(&achieve("NEWSLETTER_SIGNUP"), json!({"name": "signup", "data": {"SIGNUP": {"SOURCE": "app"}}})).await.expect(200);
    // The data is not the recipient's.
    let stored = api.get(&format!("/recipients/{id}")).await.json();
    assert!(!stored.to_string().contains("app"), "{stored}");
}

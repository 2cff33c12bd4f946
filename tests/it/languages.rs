//! Extensions written in JavaScript (componentize-js) and Python (componentize-py) with their
//! SDKs (sdk/js, sdk/python), built from guest-examples/ by the build: an open webhook that parses
//! a shop's payload and upserts a recipient with One-To-Many records, a secure http extension that
//! finds recipients by a filter, and a condition and a step run by a flow.

use std::time::Duration;

use herald_tests::reqwest::multipart::{Form, Part};
use herald_tests::reqwest::Method;
use herald_tests::signing::{signed, whsec, SHOP_KEY};
use herald_tests::{answer, eventually, json, test_runtime, Api, Settings, TestServer};
use serde_json::Value;

struct Language {
    folder: &'static str,
    webhook: &'static str,
    finder: &'static str,
    condition: &'static str,
    step: &'static str,
}

const JS: Language = Language {
    folder: "js",
    webhook: env!("GUEST_JS_SHOP_WEBHOOK"),
    finder: env!("GUEST_JS_RECIPIENT_FINDER"),
    condition: env!("GUEST_JS_ADULT_CONDITION"),
    step: env!("GUEST_JS_TAGGER_STEP"),
};

const PYTHON: Language = Language {
    folder: "py",
    webhook: env!("GUEST_PY_SHOP_WEBHOOK"),
    finder: env!("GUEST_PY_RECIPIENT_FINDER"),
    condition: env!("GUEST_PY_ADULT_CONDITION"),
    step: env!("GUEST_PY_TAGGER_STEP"),
};

async fn upload(api: &Api, folder: &str, name: &str, path: &str, kind: &str) {
    let form = Form::new()
        .part("file", Part::bytes(std::fs::read(path).unwrap()).file_name(format!("{name}.wasm")))
        .text("type", kind.to_string())
        .text("folder", folder.to_string());
    answer(api.request(Method::POST, "/assets/extensions").multipart(form).send().await.unwrap()).await.expect(201);
}

/// The interpreters' components take seconds to compile: the servers of these tests share their
/// compiled artifacts (by content hash), so each is compiled once per test run, not per server;
/// in the run's shared folder when there is one (`herald_tests::shared_compiled_dir`).
fn sharing_compiled_components() -> Settings {
    let own = || std::path::PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join("compiled-guests");
    let compiled_dir = Some(herald_tests::shared_compiled_dir().unwrap_or_else(own));
    Settings { runtime: herald_host::runtime::RuntimeSettings { compiled_dir, ..test_runtime() }, ..Settings::default() }
}

async fn the_examples_work_end_to_end(language: &Language) {
    let s = TestServer::start_with(sharing_compiled_components()).await;
    let api = s.demo().await;
    let f = language.folder;
    upload(&api, f, "shop", language.webhook, "http").await;
    upload(&api, f, "finder", language.finder, "http").await;
    upload(&api, f, "adult", language.condition, "condition").await;
    upload(&api, f, "tagger", language.step, "step").await;

    // The open webhook: no credentials, a third party's payload, a recipient and its purchases.
    let order = json!({
        "customer": {"email": "ann@example.com", "first_name": "Ann", "city": "Paris"},
        "order": {"id": "A-1001", "paid_at": "2026-11-20T10:00:00Z",
                  "lines": [{"sku": "TEA-1", "title": "Green tea", "price": 4.5}, {"sku": "CUP", "title": "Cup", "price": 12}]}
    });
    let hook = format!("{}/extensions/open/demo/{f}%252Fshop", s.base);
    let order_bytes = serde_json::to_vec(&order).unwrap();
    let send = |body: &[u8], key: &[u8], age: u64| signed(s.client.post(&hook), key, body, age).send();
    // The webhook checks the shop's signature with a secret it names and never reads: until the
    // instance has it, the webhook says so; then only calls signed with it, lately, are taken.
    let r = send(&order_bytes, SHOP_KEY, 0).await.unwrap();
    assert_eq!(r.status(), 503, "{f}");
    assert!(r.text().await.unwrap().contains("SHOP_SIGNING_SECRET"), "{f}");
    let secret = json!({"value": whsec(SHOP_KEY)});
    api.put("/extensions/secrets/SHOP_SIGNING_SECRET", secret).await.expect(201);
    let unsigned = s.client.post(&hook).json(&order).send().await.unwrap();
    assert_eq!(unsigned.status(), 401, "{f}: {}", unsigned.text().await.unwrap());
    assert_eq!(send(&order_bytes, b"another key", 0).await.unwrap().status(), 401, "{f}: signed with another key");
    assert_eq!(send(&order_bytes, SHOP_KEY, 3600).await.unwrap().status(), 401, "{f}: signed an hour ago");
    let tampered =
        signed(s.client.post(&hook), SHOP_KEY, &order_bytes, 0).body(order_bytes.iter().copied().chain(*b" ").collect::<Vec<u8>>());
    assert_eq!(tampered.send().await.unwrap().status(), 401, "{f}: a body changed after signing");
    let r = send(&order_bytes, SHOP_KEY, 0).await.unwrap();
    assert_eq!(r.status(), 200, "{f}: {}", r.text().await.unwrap());
    // Delivered again (at least once): the same data.
    let stored: Value = send(&order_bytes, SHOP_KEY, 0).await.unwrap().json().await.unwrap();
    let id = stored["recipient"].as_i64().unwrap_or_else(|| panic!("{f}: {stored}"));
    assert_eq!(stored["purchases"], 2, "{f}: {stored}");
    let person = api.get(&format!("/recipients/{id}")).await.json();
    assert_eq!(
        (person["personData"]["EMAIL"].as_str(), person["personData"]["CITY"].as_str()),
        (Some("ann@example.com"), Some("Paris")),
        "{f}: {person}"
    );
    let purchases = api.get(&format!("/recipients/{id}/oneToManyTables/PURCHASES")).await.json();
    assert_eq!(purchases.as_array().map(Vec::len), Some(2), "{f}: the second call replaced, not added: {purchases}");
    assert!(purchases.to_string().contains("Green tea"), "{f}: {purchases}");
    // A payload that is not an order is the webhook's 400, with its reason.
    let bad = send(b"not json", SHOP_KEY, 0).await.unwrap();
    assert_eq!(bad.status(), 400, "{f}");
    // A record the model refuses: the guest's HeraldError reads as the REST API's message does.
    let mistyped = json!({"customer": {"email": "ann@example.com"}, "order": {"id": "A-1002", "paid_at": "2026-11-20T10:00:00Z", "lines": [{"title": 42, "price": 1}]}});
    let refused = send(&serde_json::to_vec(&mistyped).unwrap(), SHOP_KEY, 0).await.unwrap();
    assert_eq!(refused.status(), 400, "{f}");
    let said = refused.text().await.unwrap();
    assert!(
        said.contains("invalid: PURCHASES field PRODUCT expects a STRING") && !said.contains("Error::") && !said.contains("Invalid("),
        "{f}: {said}"
    );
    // The webhook is open: the secure endpoint refuses it.
    api.get(&format!("/extensions/secure/{f}%252Fshop")).await.expect(403);
    // Its folder's '/' written plainly: a 404 that says how to address it.
    let plain =
        herald_tests::answer(s.client.post(format!("{}/extensions/open/demo/{f}/shop", s.base)).json(&order).send().await.unwrap()).await;
    plain.expect(404);
    assert!(
        plain.message().contains(&format!("'{f}' is a folder, holding '{f}/")) && plain.message().contains("%252F"),
        "{f}: {}",
        plain.message()
    );

    // The secure finder answers JSON, its whole numbers as the REST API writes them.
    api.create_recipient(json!({"EMAIL": "bob@example.com", "CITY": "Lyon"})).await;
    let found = api.get(&format!("/extensions/secure/{f}%252Ffinder?city=Paris")).await;
    found.expect(200);
    assert_eq!(found.json(), json!([{"id": id, "email": "ann@example.com", "purchases": 2}]), "{f}");
    api.get(&format!("/extensions/secure/{f}%252Ffinder")).await.expect(400);

    // A flow runs the condition and the step for each recipient who signs up.
    let flow = json!({"trigger": {"event": "NEWSLETTER_SIGNUP"}, "nodes": [{"condition": {"extension": format!("{f}/adult")}}, {"step": format!("{f}/tagger")}]});
    api.put(&format!("/flows/{f}-adults"), flow).await.expect(201);
    let adult = api.create_recipient(json!({"AGE": 30})).await;
    let child = api.create_recipient(json!({"AGE": 12})).await;
    for who in [adult, child] {
        api.post_empty(&format!("/recipients/{who}/events/NEWSLETTER_SIGNUP/:achieveEvent")).await.expect(200);
    }
    eventually(Duration::from_secs(15), &format!("{f}: the step runs for the adult"), || async {
        let person = api.get(&format!("/recipients/{adult}")).await.json();
        if person["personData"]["COUNTRY"] == "FR" {
            Ok(())
        } else {
            Err(person.to_string())
        }
    })
    .await;
    // The child's run ended at the condition.
    eventually(Duration::from_secs(15), &format!("{f}: both runs done"), || async {
        let runs = api.get(&format!("/flows/{f}-adults/runs")).await.json();
        let list = runs.as_array().cloned().unwrap_or_default();
        if list.len() == 2 && list.iter().all(|r| r["state"] == "done") {
            Ok(())
        } else {
            Err(runs.to_string())
        }
    })
    .await;
    assert_eq!(api.get(&format!("/recipients/{child}")).await.json()["personData"]["COUNTRY"], Value::Null, "{f}");
    // What the step logged (successful executions' logs are written within moments).
    eventually(Duration::from_secs(10), &format!("{f}: the step's log"), || async {
        let log = api.get(&format!("/extensions/logs/{f}%252Ftagger")).await.json();
        if log.to_string().contains(&format!("recipient {adult}: COUNTRY=FR")) {
            Ok(())
        } else {
            Err(log.to_string())
        }
    })
    .await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn javascript_examples_work_end_to_end() {
    the_examples_work_end_to_end(&JS).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn python_examples_work_end_to_end() {
    the_examples_work_end_to_end(&PYTHON).await;
}

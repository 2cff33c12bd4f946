//! Signature checks of http extensions (`herald:platform/signatures`): Herald computes the HMAC
//! with a secret the extension names and never reads; a call may check 8 times. The Rust SDK's
//! wrapper, through guest-examples/rust/signature-probe (the JavaScript and Python SDKs' through
//! the shop webhooks, `languages.rs`).

use herald_tests::signing::{standard_webhook_headers, whsec};
use herald_tests::{json, TestServer};
use serde_json::Value;

const KEY: &[u8] = b"a key shared with the sender";

#[tokio::test]
async fn a_secure_extension_checks_signatures_with_a_secret_it_never_reads_at_most_8_a_call() {
    let s = TestServer::start().await;
    let api = s.demo().await;
    api.upload_http_extension("probe.wasm", env!("GUEST_SIGNATURE_PROBE")).await;
    let body = br#"{"event": "paid"}"#;
    let check = |query: &'static str, key: &'static [u8]| {
        let mut request = api.request(herald_tests::reqwest::Method::POST, &format!("/extensions/secure/probe{query}")).body(body.to_vec());
        for (name, value) in standard_webhook_headers(key, body, 0) {
            request = request.header(name, value);
        }
        async move {
            let answer = herald_tests::answer(request.send().await.unwrap()).await;
            answer.expect(200);
            answer.json()["checks"].clone()
        }
    };
    // No such secret yet: not-found, not a failure of the call.
    assert_eq!(check("", KEY).await, json!(["not-found"]));
    // The secret as the Standard Webhooks scheme gives it (whsec_ and the key in base64).
    let value = whsec(KEY);
    api.put("/extensions/secrets/SIGNING", json!({"value": value})).await.expect(201);
    assert_eq!(check("", KEY).await, json!([true]));
    assert_eq!(check("", b"another key").await, json!([false]));
    // A secret that is the key itself (no whsec_ prefix) works as well.
    api.put("/extensions/secrets/PLAIN", json!({"value": "a key shared with the sender"})).await.expect(201);
    assert_eq!(check("?secret=PLAIN", KEY).await, json!([true]));
    // Eight checks a call, then limit-exceeded: the answers are no oracle for guessing a secret.
    let mut expected: Vec<Value> = vec![Value::Bool(true); 8];
    expected.push("limit-exceeded".into());
    assert_eq!(check("?times=9", KEY).await, Value::Array(expected));
    // The next call has its own eight.
    assert_eq!(check("?times=2", KEY).await, json!([true, true]));
    // The secret's value is nowhere in what the executions left.
    let logs = api.get("/extensions/logs/probe").await;
    logs.expect(200);
    assert!(!logs.text.contains(&value) && !logs.text.contains("a key shared with the sender"), "{}", logs.text);
}

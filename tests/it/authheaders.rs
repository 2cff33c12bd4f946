//! Authheader extensions: the headers they make are added to the outbound calls that the
//! instance's other extensions make to their bound hosts (a real HTTP server on loopback records
//! what arrives), cached while they last, never shown to the calling extension, never in any log;
//! a failing authheader fails the call; another instance's authheader never applies.

use std::time::Duration;

use herald_tests::recorder::Recorder;
use herald_tests::{eventually, json, Api, TestServer};
use serde_json::Value;

fn encode(url: &str) -> String {
    percent_encoding::utf8_percent_encode(url, percent_encoding::NON_ALPHANUMERIC).to_string()
}

/// What the `crm` http extension (crm-call) saw when calling `url`.
async fn call(api: &Api, url: &str) -> Value {
    let answer = api.get(&format!("/extensions/secure/crm?url={}", encode(url))).await;
    answer.expect(200);
    answer.json()
}

/// The execution logs of `extension` once there are at least `n` (successful ones are written in
/// batches).
async fn logs(api: &Api, extension: &str, n: usize) -> Vec<Value> {
    eventually(Duration::from_secs(10), &format!("{n} executions of {extension} logged"), || async move {
        let logs = api.get(&format!("/extensions/logs/{extension}")).await.json();
        let list = logs.as_array().cloned().unwrap_or_default();
        if list.len() >= n {
            Ok(list)
        } else {
            Err(logs.to_string())
        }
    })
    .await
}

#[tokio::test]
async fn a_bound_host_gets_the_header_and_no_one_else_does() {
    let s = TestServer::start().await;
    let crm = Recorder::start().await;
    let api = s.demo().await;
    api.upload_extension("crm.wasm", env!("GUEST_CRM_CALL"), "http").await;
    api.upload_extension("key.wasm", env!("GUEST_AUTHHEADER_KEY"), "authheader").await;
    api.put("/extensions/secrets/CRM_TOKEN", json!({"value": "tok-first-31337"})).await.expect(201);

    // 127.0.0.1 is bound to `key`: the request arrives with its header.
    let answer = call(&api, &crm.url("127.0.0.1", "/contacts")).await;
    assert_eq!(answer["status"], 200, "{answer}");
    assert_eq!(crm.seen_at("/contacts")[0].headers.get("authorization").map(String::as_str), Some("Bearer tok-first-31337"));
    // The calling extension never saw it.
    assert!(!answer.to_string().contains("tok-first"), "{answer}");
    // localhost is allowed to crm but bound to no authheader: no header.
    call(&api, &crm.url("localhost", "/unbound")).await;
    assert_eq!(crm.seen_at("/unbound")[0].headers.get("authorization"), None);

    // The headers last a minute: a second call does not ask `key` again.
    call(&api, &crm.url("127.0.0.1", "/contacts")).await;
    assert_eq!(crm.seen_at("/contacts")[1].headers["authorization"], "Bearer tok-first-31337");
    tokio::time::sleep(Duration::from_millis(500)).await;
    assert_eq!(logs(&api, "key", 1).await.len(), 1, "one authheader execution for two calls");
    // A changed secret is used at once (this node forgets what it cached).
    api.put("/extensions/secrets/CRM_TOKEN", json!({"value": "tok-second-4242"})).await.expect(200);
    call(&api, &crm.url("127.0.0.1", "/contacts")).await;
    assert_eq!(crm.seen_at("/contacts")[2].headers["authorization"], "Bearer tok-second-4242");

    // No log of either execution holds a credential.
    for extension in ["key", "crm"] {
        let text = serde_json::to_string(&logs(&api, extension, 1).await).unwrap();
        assert!(!text.contains("tok-first") && !text.contains("tok-second"), "{extension}: {text}");
    }

    // Another instance's extension calling the same host gets no header from demo's authheader.
    let staging = s.staging().await;
    staging.upload_extension("crm.wasm", env!("GUEST_CRM_CALL"), "http").await;
    call(&staging, &crm.url("127.0.0.1", "/staging")).await;
    assert_eq!(crm.seen_at("/staging")[0].headers.get("authorization"), None);

    // Two authheaders bound to one host: refused, naming the other.
    let form = herald_tests::reqwest::multipart::Form::new()
        .part(
            "file",
            herald_tests::reqwest::multipart::Part::bytes(std::fs::read(env!("GUEST_AUTHHEADER_LEAKY")).unwrap()).file_name("leaky.wasm"),
        )
        .text("type", "authheader");
    let clash =
        herald_tests::answer(api.request(herald_tests::reqwest::Method::POST, "/assets/extensions").multipart(form).send().await.unwrap())
            .await;
    clash.expect(409);
    assert!(
        clash.message().contains("'127.0.0.1' overlaps '127.0.0.1', bound to the authheader extension key.wasm"),
        "{}",
        clash.message()
    );
}

#[tokio::test]
async fn a_failing_authheader_fails_the_call_and_no_log_holds_the_secret() {
    let s = TestServer::start().await;
    let crm = Recorder::start().await;
    let api = s.staging().await;
    api.upload_extension("crm.wasm", env!("GUEST_CRM_CALL"), "http").await;
    api.upload_extension("leaky.wasm", env!("GUEST_AUTHHEADER_LEAKY"), "authheader").await;
    let secret = "leak-me-9f8e7d";
    let reversed: String = secret.chars().rev().collect();
    api.put("/extensions/secrets/CRM_TOKEN", json!({"value": secret})).await.expect(201);

    call(&api, &crm.url("127.0.0.1", "/ok")).await;
    assert_eq!(crm.seen_at("/ok")[0].headers["x-crm-key"], secret);
    // An error result and a trap each fail the request, which never goes out; the caller sees why.
    for path in ["/fail", "/trap"] {
        let answer = call(&api, &crm.url("127.0.0.1", path)).await;
        let error = answer["error"].as_str().unwrap_or_else(|| panic!("{path}: {answer}"));
        assert!(error.contains("InternalError") && error.contains("the authheader extension 'leaky' failed"), "{error}");
        assert!(!error.contains(secret) && !error.contains(&reversed) && !error.contains("l e a k"), "{error}");
        assert!(error.contains("its own text is not kept"), "{error}");
        assert!(crm.seen_at(path).is_empty(), "{path} was sent without its header");
    }
    // The authheader wrote the secret (as it is, reversed and spaced out) to its log, stdout and
    // stderr, and into its error and its panic: none of its own text is kept, only the outcome,
    // a fixed message and the duration.
    let leaky = logs(&api, "leaky", 3).await;
    let text = serde_json::to_string(&leaky).unwrap();
    assert!(!text.contains(secret) && !text.contains(&reversed) && !text.contains("l e a k"), "{text}");
    assert!(!text.contains("the token is"), "{text}");
    let outcomes: Vec<(&Value, &Value)> = leaky.iter().map(|e| (&e["outcome"], &e["reason"])).collect();
    assert_eq!(
        outcomes,
        [
            (&json!("trap"), &json!("it trapped")),
            (&json!("error"), &json!("it declined; its own text is not kept (it holds the instance's secrets)")),
            (&json!("ok"), &Value::Null)
        ]
    );
    assert!(leaky.iter().all(|e| e["log"] == json!([]) && e["stdout"] == "" && e["stderr"] == "" && e["durationMs"].is_number()), "{text}");
    // The calling execution's log says which authheader failed, in Herald's words only.
    let crm_logs = serde_json::to_string(&logs(&api, "crm", 3).await).unwrap();
    assert!(crm_logs.contains("not sent: the authheader extension 'leaky' failed"), "{crm_logs}");
    assert!(!crm_logs.contains(secret) && !crm_logs.contains(&reversed) && !crm_logs.contains("l e a k"), "{crm_logs}");
}

#[tokio::test]
async fn an_oauth_token_is_fetched_once_and_again_when_it_expires() {
    let s = TestServer::start().await;
    let api_host = Recorder::start().await;
    api_host.token_lifetime.store(3, std::sync::atomic::Ordering::SeqCst);
    let api = s.demo().await;
    api.upload_extension("crm.wasm", env!("GUEST_CRM_CALL"), "http").await;
    api.upload_extension("oauth.wasm", env!("GUEST_AUTHHEADER_OAUTH"), "authheader").await;
    for (name, value) in [
        ("OAUTH_TOKEN_URL", api_host.url("127.0.0.1", "/token")),
        ("OAUTH_CLIENT_ID", "herald".into()),
        ("OAUTH_CLIENT_SECRET", "cs-1234".into()),
    ] {
        api.put(&format!("/extensions/secrets/{name}"), json!({"value": value})).await.expect(201);
    }
    // Five calls at once to the bound host (localhost): one token request, the same token on all.
    let people = api_host.url("localhost", "/v1/people");
    let calls: Vec<_> = (0..5).map(|_| call(&api, &people)).collect();
    for answer in futures_util::future::join_all(calls).await {
        assert_eq!(answer["status"], 200, "{answer}");
    }
    assert_eq!(api_host.tokens_handed_out(), 1);
    let seen = api_host.seen_at("/v1/people");
    assert_eq!(seen.len(), 5);
    assert!(seen.iter().all(|r| r.headers.get("authorization").map(String::as_str) == Some("Bearer tok-1")), "{seen:?}");
    // The token request was the authheader's own: client credentials in the form, no header added.
    let token_requests = api_host.seen_at("/token");
    let token_request = &token_requests[0];
    assert!(
        token_request.body.contains("client_secret=cs-1234") && !token_request.headers.contains_key("authorization"),
        "{token_request:?}"
    );
    // Past its lifetime the token is fetched again.
    tokio::time::sleep(Duration::from_millis(3500)).await;
    call(&api, &api_host.url("localhost", "/v1/people")).await;
    assert_eq!(api_host.tokens_handed_out(), 2);
    assert_eq!(api_host.seen_at("/v1/people")[5].headers["authorization"], "Bearer tok-2");
}

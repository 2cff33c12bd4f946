//! Authentication: OAuth2 client credentials, Bearer and Basic, scopes, and 401/403 answers.

use herald_tests::{answer, json, reqwest::StatusCode, Api, TestServer};

#[tokio::test]
async fn token_endpoint_returns_the_standard_fields() {
    let s = TestServer::start().await;
    let r = s
        .client
        .post(format!("{}/oauth2/token", s.base))
        .form(&[("grant_type", "client_credentials"), ("client_id", "demo-public-key"), ("client_secret", "demo-public-secret")])
        .send()
        .await
        .unwrap();
    assert_eq!(r.headers()["cache-control"], "no-store");
    let a = answer(r).await;
    a.expect(200);
    let body = a.json();
    assert_eq!(body["token_type"], "Bearer");
    assert_eq!(body["expires_in"], 7200);
    assert_eq!(body["scope"], "public");
    assert!(body["access_token"].as_str().unwrap().len() > 20);
    assert_eq!(a.content_type.as_deref(), Some("application/json; charset=utf-8"));
}

#[tokio::test]
async fn token_endpoint_refuses_bad_requests_and_bad_credentials() {
    let s = TestServer::start().await;
    let url = format!("{}/oauth2/token", s.base);
    let post = |form: Vec<(&'static str, &'static str)>| s.client.post(&url).form(&form).send();

    let wrong = answer(
        post(vec![("grant_type", "client_credentials"), ("client_id", "demo-public-key"), ("client_secret", "nope")]).await.unwrap(),
    )
    .await;
    wrong.expect(401);
    assert!(wrong.text.is_empty(), "401 bodies are empty");
    let unknown =
        answer(post(vec![("grant_type", "client_credentials"), ("client_id", "nobody"), ("client_secret", "x")]).await.unwrap()).await;
    unknown.expect(401);

    let grant = answer(
        post(vec![("grant_type", "password"), ("client_id", "demo-public-key"), ("client_secret", "demo-public-secret")]).await.unwrap(),
    )
    .await;
    grant.expect(400);
    assert_eq!(grant.json()["error"], "unsupported_grant_type");
    assert!(grant.message().contains("client_credentials"));

    let missing = answer(post(vec![("grant_type", "client_credentials")]).await.unwrap()).await;
    missing.expect(400);
    assert!(missing.message().contains("client_id"));

    let json_body = answer(s.client.post(&url).json(&json!({"grant_type": "client_credentials"})).send().await.unwrap()).await;
    json_body.expect(415);
}

#[tokio::test]
async fn client_may_authenticate_to_the_token_endpoint_with_basic() {
    let s = TestServer::start().await;
    let r = s
        .client
        .post(format!("{}/oauth2/token", s.base))
        .basic_auth("demo-public-key", Some("demo-public-secret"))
        .form(&[("grant_type", "client_credentials")])
        .send()
        .await
        .unwrap();
    assert_eq!(r.status(), StatusCode::OK);
}

#[tokio::test]
async fn calls_need_valid_credentials() {
    let s = TestServer::start().await;
    let none = answer(s.client.get(format!("{}/recipients", s.base)).send().await.unwrap()).await;
    none.expect(401);
    assert!(none.text.is_empty());
    for header in ["Bearer garbage", "Bearer v1.e30.AAAA", "Basic bm9wZTpub3Bl", "Digest x", "Bearer"] {
        let a = answer(s.client.get(format!("{}/recipients", s.base)).header("Authorization", header).send().await.unwrap()).await;
        a.expect(401);
    }
}

#[tokio::test]
async fn basic_authentication_is_accepted() {
    let s = TestServer::start().await;
    let r = s.client.get(format!("{}/globaldata/", s.base)).basic_auth("demo-public-key", Some("demo-public-secret")).send().await.unwrap();
    assert_eq!(r.status(), StatusCode::OK);
    let wrong = s.client.get(format!("{}/globaldata/", s.base)).basic_auth("demo-public-key", Some("x")).send().await.unwrap();
    assert_eq!(wrong.status(), StatusCode::UNAUTHORIZED);
}

#[tokio::test]
async fn app_scope_reaches_only_the_register_api() {
    let s = TestServer::start().await;
    let app = s.api("demo-app-key", "demo-app-secret").await;
    for path in ["/recipients", "/globaldata/", "/discovery/persondata", "/globaldata/tables"] {
        let a = app.get(path).await;
        a.expect(403);
        assert!(a.text.is_empty());
    }
    app.post("/recipients", json!({"personData": {"EMAIL": "a@b.c"}})).await.expect(403);

    let registered = app.post("/register/recipients", json!({"personData": {"EMAIL": "dev@example.com", "OPTIN": true}})).await;
    registered.expect(201);
    let id = registered.json()["recipientId"].as_i64().unwrap();
    assert_eq!(registered.json().as_object().unwrap().len(), 1, "a device learns only the id");

    let refused = app.post("/register/recipients", json!({"personData": {"EMAIL": "x@example.com", "AGE": 40}})).await;
    refused.expect(400);
    assert!(refused.message().contains("AGE"), "{}", refused.message());
    app.post("/register/recipients", json!({"personData": {"EMAIL": "dev@example.com"}})).await.expect(409);

    let public = s.demo().await;
    let r = public.get(&format!("/recipients/{id}")).await;
    r.expect(200);
    assert_eq!(r.json()["personData"]["EMAIL"], "dev@example.com");
}

#[tokio::test]
async fn tokens_survive_a_restart() {
    let s = TestServer::start().await;
    let api = s.demo().await;
    api.get("/globaldata/").await.expect(200);
    let s = s.restart().await;
    let same = Api { base: s.base.clone(), ..api };
    same.get("/globaldata/").await.expect(200);
}

#[tokio::test]
async fn a_token_is_bound_to_its_instance() {
    let s = TestServer::start().await;
    let demo = s.demo().await;
    let staging = s.staging().await;
    demo.create_recipient(json!({"EMAIL": "only-in-demo@example.com"})).await;
    assert_eq!(demo.get("/recipients").await.json().as_array().unwrap().len(), 1);
    assert_eq!(staging.get("/recipients").await.json().as_array().unwrap().len(), 0);
    staging.get("/recipients/EMAIL=only-in-demo%2540example.com").await.expect(404);
}

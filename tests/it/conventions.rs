//! The spec's conventions: media types, custom methods, error bodies, payload size, isolation of
//! instances, durability across restarts.

use herald_tests::reqwest::Method;
use herald_tests::{answer, json, TestServer};

#[tokio::test]
async fn request_bodies_must_be_json() {
    let s = TestServer::start().await;
    let api = s.demo().await;
    let r =
        api.request(Method::POST, "/recipients").header("Content-Type", "text/plain").body(r#"{"personData":{}}"#).send().await.unwrap();
    let a = answer(r).await;
    a.expect(415);
    assert!(a.text.is_empty());
    let latin = api
        .request(Method::POST, "/recipients")
        .header("Content-Type", "application/json; charset=iso-8859-1")
        .body(r#"{"personData":{}}"#)
        .send()
        .await
        .unwrap();
    assert_eq!(latin.status(), 415);
    let plain_json = api
        .request(Method::POST, "/recipients")
        .header("Content-Type", "application/json")
        .body(r#"{"personData":{"EMAIL":"plain@example.com"}}"#)
        .send()
        .await
        .unwrap();
    assert_eq!(plain_json.status(), 201);
}

#[tokio::test]
async fn accept_must_admit_json() {
    let s = TestServer::start().await;
    let api = s.demo().await;
    let get = |accept: &'static str| api.request(Method::GET, "/globaldata/").header("Accept", accept).send();
    assert_eq!(get("text/html").await.unwrap().status(), 406);
    assert_eq!(get("application/json;q=0").await.unwrap().status(), 406);
    assert_eq!(get("application/json; charset=utf-8").await.unwrap().status(), 200);
    assert_eq!(get("*/*").await.unwrap().status(), 200);
}

#[tokio::test]
async fn malformed_json_is_a_400_with_a_message() {
    let s = TestServer::start().await;
    let api = s.demo().await;
    let r = api.request(Method::POST, "/recipients").header("Content-Type", "application/json").body("{not json").send().await.unwrap();
    let a = answer(r).await;
    a.expect(400);
    assert!(a.message().contains("not valid JSON"), "{}", a.message());
    let wrong_shape = api.post("/recipients", json!([1, 2])).await;
    wrong_shape.expect(400);
    assert!(wrong_shape.message().contains("JSON object"));
    let typo = api.post("/recipients", json!({"personDta": {}})).await;
    typo.expect(400);
    assert!(typo.message().contains("personDta"));
}

#[tokio::test]
async fn custom_methods_need_post_and_unknown_paths_are_404() {
    let s = TestServer::start().await;
    let api = s.demo().await;
    let id = api.create_recipient(json!({"EMAIL": "m@example.com"})).await;
    api.get(&format!("/recipients/{id}/:evaluatePromotion")).await.expect(405);
    api.post_empty(&format!("/recipients/{id}/:evaluatePromotion")).await.expect(200);
    api.post_empty(&format!("/recipients/{id}/:noSuchMethod")).await.expect(404);
    api.get("/globaldata/tables/STORES/:truncateTable").await.expect(405);
    let unknown = api.get("/no/such/path").await;
    unknown.expect(404);
    assert!(unknown.text.is_empty());
}

#[tokio::test]
async fn payload_over_20_mb_is_413() {
    let s = TestServer::start().await;
    let api = s.demo().await;
    let big = format!("{{\"personData\":{{\"FIRST_NAME\":\"{}\"}}}}", "x".repeat(20 * 1024 * 1024));
    let r = api.request(Method::POST, "/recipients").header("Content-Type", "application/json").body(big).send().await.unwrap();
    assert_eq!(r.status(), 413);
}

#[tokio::test]
async fn instances_are_isolated() {
    let s = TestServer::start().await;
    let demo = s.demo().await;
    let staging = s.staging().await;
    let id = demo.create_recipient(json!({"EMAIL": "iso@example.com"})).await;
    staging.get(&format!("/recipients/{id}")).await.expect(404);
    demo.put("/globaldata/CAMPAIGN_NAME", json!({"VALUE": "Winter"})).await.expect(200);
    assert_eq!(staging.get("/globaldata/CAMPAIGN_NAME").await.json()["VALUE"], "Autumn sale");
    demo.post("/globaldata/tables/STORES/record", json!({"ID": "S1", "NAME": "Opera"})).await.expect(201);
    assert_eq!(staging.get("/globaldata/tables/STORES").await.json(), json!([]));
    // The same unique value may exist in both instances.
    staging.create_recipient(json!({"EMAIL": "iso@example.com"})).await;
}

#[tokio::test]
async fn data_survives_a_restart() {
    let s = TestServer::start().await;
    let api = s.demo().await;
    let id = api.create_recipient(json!({"EMAIL": "durable@example.com", "SCORE": 4.5})).await;
    api.post(&format!("/recipients/{id}/oneToManyTables/DEVICES/:batchUpdateRecords"), json!([{"ID": "d1", "PLATFORM": "ios"}]))
        .await
        .expect(200);
    api.put("/globaldata/SUPPORT_EMAIL", json!({"VALUE": "help@example.com"})).await.expect(200);
    let s = s.restart().await;
    let api = s.demo().await;
    let r = api.get(&format!("/recipients/{id}")).await;
    r.expect(200);
    assert_eq!(r.json()["personData"]["SCORE"], 4.5);
    assert_eq!(api.get(&format!("/recipients/{id}/oneToManyTables/DEVICES")).await.json()[0]["PLATFORM"], "ios");
    assert_eq!(api.get("/globaldata/SUPPORT_EMAIL").await.json()["VALUE"], "help@example.com");
    assert_eq!(api.get("/globaldata/CAMPAIGN_NAME").await.json()["VALUE"], "Autumn sale", "the demo is not re-seeded");
}

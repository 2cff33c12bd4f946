//! Paging documents (`objectResponse=true`): frozen selections, page arithmetic and links,
//! lifetimes on the server's clock, and every error the spec names.

use herald_tests::{json, Api, TestServer};
use serde_json::Value;

async fn seed(api: &Api, n: usize) {
    for i in 0..n {
        api.create_recipient(json!({"EMAIL": format!("p{i}@example.com"), "AGE": i})).await;
    }
}

fn ids(page: &Value) -> Vec<i64> {
    page["content"].as_array().unwrap().iter().map(|r| r["personData"]["USER_ID"].as_i64().unwrap()).collect()
}

fn link(page: &Value, rel: &str) -> Option<String> {
    page["links"].as_array().unwrap().iter().find(|l| l["rel"] == rel).map(|l| l["href"].as_str().unwrap().to_string())
}

#[tokio::test]
async fn pages_walk_a_frozen_selection() {
    let s = TestServer::start().await;
    let api = s.demo().await;
    seed(&api, 25).await;
    let first = api.get("/recipients?objectResponse=true&pageSize=10&filter=AGE%3E%3D3").await;
    first.expect(200);
    let first = first.json();
    assert_eq!(ids(&first), (4..=13).collect::<Vec<_>>());
    assert_eq!(first["page"]["totalElements"], 22);
    assert_eq!(first["page"]["totalPages"], 3);
    assert_eq!(first["page"]["number"], 1);
    let doc = first["page"]["documentId"].as_str().unwrap().to_string();
    assert!(doc.len() >= 20, "unguessable id");
    assert!(link(&first, "prev").is_none());
    let rels: Vec<&str> = first["links"].as_array().unwrap().iter().map(|l| l["rel"].as_str().unwrap()).collect();
    assert_eq!(rels, ["first", "self", "next", "last"]);

    // The selection is frozen: a new recipient and a later filter change nothing.
    api.create_recipient(json!({"EMAIL": "late@example.com", "AGE": 99})).await;
    let next = api.get(&link(&first, "next").unwrap()).await.json();
    assert_eq!(ids(&next), (14..=23).collect::<Vec<_>>());
    assert_eq!(next["page"]["number"], 2);
    assert!(link(&next, "prev").is_some());
    let last = api.get(&format!("{}&filter=AGE%3C0", link(&first, "last").unwrap())).await.json();
    assert_eq!(ids(&last), vec![24, 25]);
    assert!(link(&last, "next").is_none());
    assert_eq!(last["page"]["totalElements"], 22);

    // A page may run past the end when it starts inside the document.
    let tail = api.get(&format!("/recipients?objectResponse=true&documentId={doc}&pageStart=20&pageSize=1000")).await.json();
    assert_eq!(ids(&tail), vec![23, 24, 25]);
    api.get(&format!("/recipients?objectResponse=true&documentId={doc}&pageStart=23")).await.expect(404);
}

#[tokio::test]
async fn defaults_and_empty_selections() {
    let s = TestServer::start().await;
    let api = s.demo().await;
    seed(&api, 3).await;
    let all = api.get("/recipients?objectResponse=true").await.json();
    assert_eq!(all["page"]["pageSize"], 1000);
    assert_eq!(all["page"]["pageStart"], 1);
    assert_eq!(ids(&all), vec![1, 2, 3]);
    let none = api.get("/recipients?objectResponse=true&filter=AGE%3E100").await;
    none.expect(200);
    assert_eq!(none.json()["content"], json!([]));
    assert_eq!(none.json()["page"]["totalElements"], 0);
    // Without objectResponse the answer stays a plain array.
    assert!(api.get("/recipients").await.json().is_array());
}

#[tokio::test]
async fn bad_parameters_and_unknown_documents() {
    let s = TestServer::start().await;
    let api = s.demo().await;
    seed(&api, 2).await;
    for bad in ["pageSize=0", "pageSize=1001", "pageSize=ten", "pageStart=0", "pageStart=-1", "objectResponse=maybe"] {
        let q = if bad.starts_with("objectResponse") { bad.to_string() } else { format!("objectResponse=true&{bad}") };
        let a = api.get(&format!("/recipients?{q}")).await;
        a.expect(400);
        assert!(!a.message().is_empty());
    }
    let unknown = api.get("/recipients?objectResponse=true&documentId=nope").await;
    unknown.expect(404);
    assert!(unknown.text.is_empty());
    api.get("/recipients?objectResponse=true&filter=NOPE==1").await.expect(422);
    api.get("/recipients?objectResponse=true&pageStart=3").await.expect(404);

    // Documents belong to their instance.
    let doc = api.get("/recipients?objectResponse=true").await.json()["page"]["documentId"].as_str().unwrap().to_string();
    let staging = s.staging().await;
    staging.get(&format!("/recipients?objectResponse=true&documentId={doc}")).await.expect(404);
}

#[tokio::test]
async fn lifetime_is_five_minutes_from_each_use_and_thirty_at_most() {
    let s = TestServer::start().await;
    let api = s.demo().await;
    seed(&api, 2).await;
    let open = |doc: String| {
        let api = api.clone();
        async move { api.get(&format!("/recipients?objectResponse=true&documentId={doc}")).await.status.as_u16() }
    };
    let doc = api.get("/recipients?objectResponse=true").await.json()["page"]["documentId"].as_str().unwrap().to_string();
    s.clock.advance_secs(4 * 60 + 59);
    assert_eq!(open(doc.clone()).await, 200, "used within 5 minutes");
    s.clock.advance_secs(4 * 60 + 59);
    assert_eq!(open(doc.clone()).await, 200, "each use resets the 5 minutes");
    s.clock.advance_secs(5 * 60);
    assert_eq!(open(doc.clone()).await, 404, "idle for 5 minutes");

    let doc = api.get("/recipients?objectResponse=true").await.json()["page"]["documentId"].as_str().unwrap().to_string();
    for _ in 0..7 {
        s.clock.advance_secs(4 * 60);
        assert_eq!(open(doc.clone()).await, 200);
    }
    s.clock.advance_secs(2 * 60 + 1);
    assert_eq!(open(doc.clone()).await, 404, "30 minutes after creation, even when used");
}

#[tokio::test]
async fn documents_survive_a_restart() {
    let s = TestServer::start().await;
    let api = s.demo().await;
    seed(&api, 3).await;
    let doc = api.get("/recipients?objectResponse=true&pageSize=1").await.json()["page"]["documentId"].as_str().unwrap().to_string();
    let s = s.restart().await;
    let api = s.demo().await;
    let page = api.get(&format!("/recipients?objectResponse=true&documentId={doc}&pageStart=3&pageSize=1")).await;
    page.expect(200);
    assert_eq!(ids(&page.json()), vec![3]);
}

//! Reads of one recipient that come while their instance already has such reads in flight go
//! several to a statement on PostgreSQL (`store/tenant/combined_reads.rs`). Many reads at once,
//! by Recipient Id and by a text field, of recipients that exist and that do not: each answer is
//! its own recipient or its own 404, and on PostgreSQL the node's metrics show reads answered
//! together. On SQLite reads run on the calling thread; the same answers are checked.

use futures_util::StreamExt;
use herald_tests::TestServer;
use serde_json::json;

fn counter(text: &str, name: &str) -> f64 {
    text.lines().find_map(|l| l.strip_prefix(name).and_then(|rest| rest.trim().parse().ok())).unwrap_or(0.0)
}

async fn scrape(s: &TestServer) -> String {
    s.client.get(format!("{}/metrics", s.ops)).send().await.unwrap().text().await.unwrap()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn reads_at_once_each_get_their_own_recipient() {
    let s = TestServer::start().await;
    let api = s.demo().await;
    let mut ids = Vec::new();
    for i in 0..24 {
        ids.push(api.create_recipient(json!({"EMAIL": format!("gather{i}@example.com"), "FIRST_NAME": format!("Name {i}")})).await);
    }
    let before = scrape(&s).await;
    for round in 0..4 {
        let reads = (0..240).map(|n| {
            let api = api.clone();
            let i = (n * 7 + round) % 30;
            let id = ids.get(i).copied();
            async move {
                // Every fifth read looks by EMAIL; ids past the 24 recipients find none.
                let path = match (n % 5, id) {
                    (0, _) => format!("/recipients/EMAIL=gather{i}%2540example.com"),
                    (_, Some(id)) => format!("/recipients/{id}"),
                    (_, None) => format!("/recipients/{}", 900_000 + i),
                };
                let answer = api.get(&path).await;
                // A 404 has no body.
                let person = if answer.status == 200 { answer.json()["personData"].clone() } else { serde_json::Value::Null };
                (path, i, answer.status.as_u16(), person)
            }
        });
        // 16 at once: within the instance's 20 calls in flight, well past the cores' reads.
        let answers: Vec<_> = futures_util::stream::iter(reads).buffer_unordered(16).collect().await;
        for (path, i, status, person) in answers {
            if i < 24 {
                assert_eq!(status, 200, "{path}");
                assert_eq!(person["EMAIL"], format!("gather{i}@example.com"), "{path}");
                assert_eq!(person["FIRST_NAME"], format!("Name {i}"), "{path}");
                assert_eq!(person["USER_ID"], ids[i], "{path}");
            } else {
                assert_eq!(status, 404, "{path}");
            }
        }
    }
    let gathered =
        counter(&scrape(&s).await, "herald_node_pool_gathered_reads_total") - counter(&before, "herald_node_pool_gathered_reads_total");
    if s.database_url().is_some() {
        assert!(gathered > 0.0, "no read was answered together with another");
    } else {
        assert_eq!(gathered, 0.0, "SQLite has no node pool");
    }
}

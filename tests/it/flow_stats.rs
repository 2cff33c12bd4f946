//! A flow's counts over a period (`GET /flows/{name}/stats`): runs by state, and per node how
//! many runs entered it and which way they went on; a run's answer carries the flow as it ran
//! and, per trace entry, the way it took. What the console draws on a flow's diagram.

use std::time::Duration;

use herald_tests::{eventually, json, Api, TestServer};
use serde_json::Value;

async fn stats(api: &Api, query: &str) -> Value {
    let r = api.get(&format!("/flows/BRANCHED/stats{query}")).await;
    r.expect(200);
    r.json()
}

/// The counts of `node` in `stats`, as (entered, next, else, end, failed, wait).
fn node(stats: &Value, label: &str) -> (i64, i64, i64, i64, i64, i64) {
    let n = stats["nodes"].as_array().unwrap().iter().find(|n| n["node"] == label).unwrap_or_else(|| panic!("{label}: {stats}"));
    let count = |way: &str| n[way].as_i64().unwrap();
    (count("entered"), count("next"), count("else"), count("end"), count("failed"), count("wait"))
}

#[tokio::test]
async fn a_flow_s_counts_say_how_many_runs_took_each_way_over_a_period() {
    let s = TestServer::start().await;
    let api = s.demo().await;
    // Under 30 the run goes on to the next node; from 30 into the branch, where a second
    // condition ends the runs of those without a city.
    let flow = json!({"trigger": {"event": "NEWSLETTER_SIGNUP"}, "nodes": [
        {"condition": {"filter": "AGE=lt=30"}, "else": [
            {"condition": {"filter": "CITY=='*'"}},
            {"set": {"OPTIN": true}}]},
        {"set": {"OPTIN": false}}]});
    api.put("/flows/BRANCHED", flow.clone()).await.expect(201);
    let people = [(20, "Lyon"), (25, "Lyon"), (40, "Lyon"), (50, "")];
    let mut ids = Vec::new();
    for (age, city) in people {
        let mut data = json!({"EMAIL": format!("p{age}@example.com"), "AGE": age});
        if !city.is_empty() {
            data["CITY"] = json!(city);
        }
        let id = api.create_recipient(data).await;
        api.post_empty(&format!("/recipients/{id}/events/NEWSLETTER_SIGNUP/:achieveEvent")).await.expect(200);
        ids.push(id);
    }
    let counted = eventually(Duration::from_secs(20), "the four runs are done", || async {
        let counted = stats(&api, "").await;
        if counted["runs"]["done"] == 4 {
            Ok(counted)
        } else {
            Err(counted.to_string())
        }
    })
    .await;
    assert_eq!(counted["runs"], json!({"started": 4, "running": 0, "waiting": 0, "done": 4, "failed": 0}), "{counted}");
    assert_eq!(counted["version"], 1);
    assert!(counted["lastRunAt"].is_string() && counted["lastRunAtMs"].is_i64(), "{counted}");
    let labels: Vec<&str> = counted["nodes"].as_array().unwrap().iter().map(|n| n["node"].as_str().unwrap()).collect();
    assert_eq!(labels, ["node 1", "node 1 else 1", "node 1 else 2", "node 2"], "in the flow's order");
    assert_eq!(node(&counted, "node 1"), (4, 2, 2, 0, 0, 0));
    assert_eq!(node(&counted, "node 2"), (2, 2, 0, 0, 0, 0));
    assert_eq!(node(&counted, "node 1 else 1"), (2, 1, 0, 1, 0, 0), "the one without a city ends there");
    assert_eq!(node(&counted, "node 1 else 2"), (1, 1, 0, 0, 0, 0));

    // A run's answer draws its path: the flow as it ran, and the way taken at each node.
    let runs = api.get(&format!("/flows/BRANCHED/runs?recipientId={}", ids[3])).await.json();
    let run = api.get(&format!("/flows/BRANCHED/runs/{}", runs[0]["id"].as_str().unwrap())).await.json();
    assert_eq!(run["definition"]["nodes"], flow["nodes"], "{run}");
    let path: Vec<(&str, &str)> =
        run["trace"].as_array().unwrap().iter().map(|t| (t["node"].as_str().unwrap(), t["took"].as_str().unwrap())).collect();
    assert_eq!(path, [("node 1", "else"), ("node 1 else 1", "end")]);

    // A period without runs counts none; one that ends before it starts is refused.
    let now = counted["untilMs"].as_i64().unwrap();
    let later = stats(&api, &format!("?since={now}&until={}", now + 60_000)).await;
    assert_eq!((later["runs"]["started"].as_i64(), later["nodes"].as_array().map(Vec::len)), (Some(0), Some(0)), "{later}");
    let refused = api.get(&format!("/flows/BRANCHED/stats?since={now}&until={now}")).await;
    refused.expect(400);
    assert!(refused.json()["message"].as_str().unwrap().contains("must be before until"));
    api.get("/flows/NO_SUCH_FLOW/stats").await.expect(404);

    // A new version is counted afresh; the old one's counts stay readable by its number.
    api.put("/flows/BRANCHED", flow).await.expect(200);
    let current = stats(&api, "").await;
    assert_eq!((current["version"].as_i64(), current["nodes"].as_array().map(Vec::len)), (Some(2), Some(0)), "{current}");
    assert_eq!(current["runs"]["started"], 4, "runs of every version are counted by state");
    assert_eq!(node(&stats(&api, "?version=1").await, "node 1"), (4, 2, 2, 0, 0, 0));
}

//! Flow runs end to end: an event (or a creation) starts the flows it triggers for the
//! recipient, and their nodes run in the queue: conditions (built-in and extension) with both
//! branches, steps, waits across a restart, `set`, chained events and their bound, `send` into
//! the communication history; contextual data for the directly triggered runs alone; failures
//! that end one run; instances kept apart. Every run's trace is read through the API.

use std::time::Duration;

use herald_host::store::ControlDb;
use herald_tests::{eventually, json, Api, TestServer};
use serde_json::Value;

/// The runs of `flow` for recipient `id` once `n` of them are over (done or failed).
async fn runs_over(api: &Api, flow: &str, id: i64, n: usize) -> Vec<Value> {
    eventually(Duration::from_secs(20), &format!("{n} runs of {flow} for {id} over"), || async move {
        let runs = api.get(&format!("/flows/{flow}/runs?recipientId={id}")).await;
        runs.expect(200);
        let list = runs.json().as_array().cloned().unwrap_or_default();
        let over = list.iter().filter(|r| r["state"] == "done" || r["state"] == "failed").count();
        if over >= n {
            Ok(list)
        } else {
            Err(format!("{list:?}"))
        }
    })
    .await
}

async fn run(api: &Api, flow: &str, run: &Value) -> Value {
    let r = api.get(&format!("/flows/{flow}/runs/{}", run["id"].as_str().unwrap())).await;
    r.expect(200);
    r.json()
}

async fn history(api: &Api, id: i64) -> Vec<Value> {
    api.get(&format!("/recipients/{id}/communicationHistory")).await.json().as_array().cloned().unwrap()
}

fn achieve(id: i64, event: &str) -> String {
    format!("/recipients/{id}/events/{event}/:achieveEvent")
}

/// The demo's own flow, with no upload: WELCOME for a recipient with an EMAIL sends the
/// committed `welcome` template, rendered with its Person Data and Global Data; without an EMAIL,
/// nothing.
#[tokio::test]
async fn the_demo_welcome_mail_reaches_recipients_with_an_email() {
    let s = TestServer::start().await;
    let api = s.demo().await;
    let ada = api.create_recipient(json!({"EMAIL": "ada@example.com", "FIRST_NAME": "Ada"})).await;
    let nobody = api.create_recipient(json!({"FIRST_NAME": "Nobody"})).await;
    let answer = api.post_empty(&achieve(ada, "WELCOME")).await;
    answer.expect(200);
    assert_eq!(answer.json()["flowRuns"].as_array().map(Vec::len), Some(1), "{:?}", answer.json());
    api.post_empty(&achieve(nobody, "WELCOME")).await.expect(200);

    let runs = runs_over(&api, "WELCOME_MAIL", ada, 1).await;
    assert_eq!((runs[0]["state"].as_str(), runs[0]["outcome"].as_str()), (Some("done"), Some("completed")), "{runs:?}");
    let sent = history(&api, ada).await;
    assert_eq!(sent.len(), 1, "{sent:?}");
    assert_eq!((sent[0]["template"].as_str(), sent[0]["flow"].as_str()), (Some("welcome.html"), Some("WELCOME_MAIL")));
    let content = sent[0]["content"].as_str().unwrap();
    assert!(content.contains("Welcome, Ada!") && content.contains("Autumn sale"), "{content}");

    let runs = runs_over(&api, "WELCOME_MAIL", nobody, 1).await;
    assert_eq!(runs[0]["outcome"], "the condition is false");
    assert!(history(&api, nobody).await.is_empty());
    let traced = run(&api, "WELCOME_MAIL", &runs[0]).await;
    assert_eq!(traced["trace"][0]["node"], "node 1");
    assert_eq!(traced["trace"][0]["kind"], "condition");
    assert_eq!(traced["trace"].as_array().map(Vec::len), Some(1));

    // A recipient with no FIRST_NAME, after CAMPAIGN_NAME was cleared: the mail still goes out
    // (the demo's template tests each value it prints).
    api.put("/globaldata/CAMPAIGN_NAME", json!({"VALUE": null})).await.expect(200);
    let plain = api.create_recipient(json!({"EMAIL": "plain@example.com"})).await;
    api.post_empty(&achieve(plain, "WELCOME")).await.expect(200);
    let runs = runs_over(&api, "WELCOME_MAIL", plain, 1).await;
    assert_eq!(runs[0]["outcome"], "completed", "{runs:?}");
    let content = history(&api, plain).await[0]["content"].as_str().unwrap().to_string();
    assert!(content.contains("Welcome!") && !content.contains("is on"), "{content}");
}

/// Every node kind and both branches of a condition extension: adults go through the step, a
/// `set`, a chained event (whose own flow sends) and a `send`; others take the `else` branch.
#[tokio::test]
async fn nodes_run_in_order_with_both_branches_and_chained_events() {
    let s = TestServer::start().await;
    let api = s.demo().await;
    api.upload_extension("probe.wasm", env!("GUEST_FLOW_PROBE"), "step").await;
    api.upload_extension("adult.wasm", env!("GUEST_CONDITION_ADULT"), "condition").await;
    api.commit_template(
        "adult.txt",
        "{% set subject = \"Offer for \" ~ recipient.FIRST_NAME %}Hello {{ recipient.FIRST_NAME }} from {{ recipient.CITY }}",
    )
    .await;
    api.commit_template("teen.txt", "Hi {{ recipient.FIRST_NAME }}").await;
    api.commit_template("newsletter.txt", "Newsletter for {{ recipient.EMAIL }}").await;
    let flow = json!({
        "trigger": {"event": "PURCHASE_MADE"},
        "nodes": [
            {"condition": {"extension": "adult"}, "else": [{"set": {"OPTIN": false}}, {"send": "teen"}]},
            {"step": "probe"},
            {"set": {"OPTIN": true, "SCORE": 1.5}},
            {"event": "NEWSLETTER_SIGNUP"},
            {"send": "adult"}
        ]
    });
    api.put("/flows/purchase", flow).await.expect(201);
    api.put("/flows/newsletter", json!({"trigger": {"event": "NEWSLETTER_SIGNUP"}, "nodes": [{"send": "newsletter"}]})).await.expect(201);
    let adult = api.create_recipient(json!({"EMAIL": "a@example.com", "FIRST_NAME": "Max", "AGE": 40})).await;
    let teen = api.create_recipient(json!({"EMAIL": "t@example.com", "FIRST_NAME": "Tom", "AGE": 15, "OPTIN": true})).await;
    api.post_empty(&achieve(adult, "PURCHASE_MADE")).await.expect(200);
    api.post_empty(&achieve(teen, "PURCHASE_MADE")).await.expect(200);

    let runs = runs_over(&api, "purchase", adult, 1).await;
    assert_eq!(runs[0]["outcome"], "completed", "{runs:?}");
    runs_over(&api, "newsletter", adult, 1).await;
    let person = api.get(&format!("/recipients/{adult}")).await.json()["personData"].clone();
    assert_eq!((person["OPTIN"].as_bool(), person["SCORE"].as_f64(), person["CITY"].as_str()), (Some(true), Some(1.5), Some("no context")));
    let events: Vec<String> = api
        .get(&format!("/recipients/{adult}/events"))
        .await
        .json()
        .as_array()
        .unwrap()
        .iter()
        .map(|e| e["eventId"].as_str().unwrap().to_string())
        .collect();
    assert_eq!(events, ["PURCHASE_MADE", "NEWSLETTER_SIGNUP"]);
    let sent = history(&api, adult).await;
    let templates: Vec<&str> = sent.iter().map(|c| c["template"].as_str().unwrap()).collect();
    assert_eq!(templates.len(), 2, "{sent:?}");
    assert!(templates.contains(&"newsletter.txt") && templates.contains(&"adult.txt"), "{templates:?}");
    let offer = sent.iter().find(|c| c["template"] == "adult.txt").unwrap();
    assert_eq!((offer["subject"].as_str(), offer["content"].as_str()), (Some("Offer for Max"), Some("Hello Max from no context")));
    let traced = run(&api, "purchase", &runs[0]).await;
    let nodes: Vec<(&str, &str)> =
        traced["trace"].as_array().unwrap().iter().map(|e| (e["node"].as_str().unwrap(), e["kind"].as_str().unwrap())).collect();
    assert_eq!(nodes, [("node 1", "condition"), ("node 2", "step"), ("node 3", "set"), ("node 4", "event"), ("node 5", "send")]);
    assert!(traced["trace"][1]["log"].to_string().contains("context: none"), "{}", traced["trace"][1]);

    let runs = runs_over(&api, "purchase", teen, 1).await;
    assert_eq!(runs[0]["outcome"], "completed");
    let traced = run(&api, "purchase", &runs[0]).await;
    let nodes: Vec<&str> = traced["trace"].as_array().unwrap().iter().map(|e| e["node"].as_str().unwrap()).collect();
    assert_eq!(nodes, ["node 1", "node 1 else 1", "node 1 else 2"]);
    assert_eq!(api.get(&format!("/recipients/{teen}")).await.json()["personData"]["OPTIN"], false);
    let sent = history(&api, teen).await;
    assert_eq!((sent.len(), sent[0]["content"].as_str()), (1, Some("Hi Tom")));
}

/// The contextual data of an achieveEvent call reaches the runs that call started, through the
/// step's argument and the `context` interface; not a run that a chained event starts; and it
/// is gone from the control plane when the runs end.
#[tokio::test]
async fn contextual_data_reaches_only_the_runs_the_call_started() {
    let s = TestServer::start().await;
    let api = s.demo().await;
    api.upload_extension("probe.wasm", env!("GUEST_FLOW_PROBE"), "step").await;
    let schema = br#"{"models": [{"name": "SIGNUP", "type": "person_data", "fields": [{"name": "CITY", "data_type": "string", "required": true}]}]}"#;
    let form = herald_tests::reqwest::multipart::Form::new()
        .part("file", herald_tests::reqwest::multipart::Part::bytes(schema.to_vec()).file_name("signup.json"));
    herald_tests::answer(api.request(herald_tests::reqwest::Method::POST, "/assets/contexts").multipart(form).send().await.unwrap())
        .await
        .expect(201);
    api.put("/flows/direct", json!({"trigger": {"event": "PURCHASE_MADE"}, "nodes": [{"step": "probe"}, {"event": "NEWSLETTER_SIGNUP"}]}))
        .await
        .expect(201);
    api.put("/flows/chained", json!({"trigger": {"event": "NEWSLETTER_SIGNUP"}, "nodes": [{"step": "probe"}]})).await.expect(201);
    let id = api.create_recipient(json!({"EMAIL": "ctx@example.com"})).await;
    api.post(&achieve(id, "PURCHASE_MADE"), json!({"name": "signup", "data": {"SIGNUP": {"CITY": "Lyon"}}})).await.expect(200);

    let direct = runs_over(&api, "direct", id, 1).await;
    let chained = runs_over(&api, "chained", id, 1).await;
    let direct_log = run(&api, "direct", &direct[0]).await["trace"][0]["log"].to_string();
    assert!(direct_log.contains(r#"context: {\"SIGNUP\":{\"CITY\":\"Lyon\"}}"#), "{direct_log}");
    assert!(direct_log.contains(r#"context interface: {\"SIGNUP\""#), "{direct_log}");
    let chained_log = run(&api, "chained", &chained[0]).await["trace"][0]["log"].to_string();
    assert!(chained_log.contains("context: none") && chained_log.contains("context interface: none"), "{chained_log}");
    // Never the recipient's data (the chained run, without context, wrote CITY last).
    assert_eq!(api.get(&format!("/recipients/{id}")).await.json()["personData"]["CITY"], "no context");
    let control = ControlDb::open(&s.backend()).await.unwrap();
    assert_eq!(control.flow_payloads("demo").await.unwrap(), Vec::<String>::new(), "the runs ended: nothing is kept");
}

/// A `wait` is a scheduled resumption: the run waits in the control plane, survives a restart,
/// and goes on once the server's clock passes the wait, keeping its contextual data.
#[tokio::test]
async fn a_run_waits_across_a_restart() {
    let s = TestServer::start().await;
    let api = s.demo().await;
    api.put("/flows/later", json!({"trigger": {"event": "PURCHASE_MADE"}, "nodes": [{"wait": "2h"}, {"send": "welcome"}]}))
        .await
        .expect(201);
    let id = api.create_recipient(json!({"EMAIL": "w@example.com"})).await;
    api.post_empty(&achieve(id, "PURCHASE_MADE")).await.expect(200);
    let runs = eventually(Duration::from_secs(20), "the run waits", || async {
        let runs = api.get(&format!("/flows/later/runs?recipientId={id}")).await.json();
        if runs[0]["state"] == "waiting" {
            Ok(runs)
        } else {
            Err(runs.to_string())
        }
    })
    .await;
    assert!(runs[0]["resumeAt"].is_string(), "{runs}");
    let s = s.restart().await;
    let api = s.demo().await;
    tokio::time::sleep(Duration::from_millis(500)).await;
    assert!(history(&api, id).await.is_empty(), "not before the wait is over");
    s.clock.advance_secs(2 * 3600 + 1);
    let runs = runs_over(&api, "later", id, 1).await;
    assert_eq!(runs[0]["outcome"], "completed", "{runs:?}");
    assert_eq!(history(&api, id).await.len(), 1);
    let traced = run(&api, "later", &runs[0]).await;
    assert_eq!(traced["trace"][0]["result"], "waiting 7200s");
}

/// A step that traps, runs past its deadline or declines ends its own run with the reason; the
/// same flow goes on for other recipients.
#[tokio::test]
async fn a_failing_step_ends_only_its_run() {
    let s = TestServer::start().await;
    let api = s.demo().await;
    api.upload_extension("probe.wasm", env!("GUEST_FLOW_PROBE"), "step").await;
    api.put("/flows/probe", json!({"trigger": {"event": "PURCHASE_MADE"}, "nodes": [{"step": "probe"}, {"send": "welcome"}]}))
        .await
        .expect(201);
    let mut ids = Vec::new();
    for name in ["trap", "spin", "decline", "fine"] {
        let id = api.create_recipient(json!({"EMAIL": format!("{name}@example.com"), "LAST_NAME": name})).await;
        api.post_empty(&achieve(id, "PURCHASE_MADE")).await.expect(200);
        ids.push(id);
    }
    let outcome = |runs: Vec<Value>| (runs[0]["state"].as_str().unwrap().to_string(), runs[0]["outcome"].as_str().unwrap().to_string());
    let (state, why) = outcome(runs_over(&api, "probe", ids[0], 1).await);
    // The run says how the call ended in the words of the execution logs (`trap`, `deadline`,
    // `error`).
    assert!(state == "failed" && why.starts_with("step 'probe' ended trap: ") && why.contains("asked to trap"), "{why}");
    let (state, why) = outcome(runs_over(&api, "probe", ids[1], 1).await);
    assert_eq!((state.as_str(), why.as_str()), ("failed", "step 'probe' ended deadline: the extension ran past its deadline"));
    let (state, why) = outcome(runs_over(&api, "probe", ids[2], 1).await);
    assert!(state == "failed" && why.starts_with("step 'probe' ended error: ") && why.contains("the probe declines"), "{why}");
    let (state, why) = outcome(runs_over(&api, "probe", ids[3], 1).await);
    assert_eq!((state.as_str(), why.as_str()), ("done", "completed"));
    for (i, id) in ids.iter().enumerate() {
        assert_eq!(history(&api, *id).await.len(), usize::from(i == 3), "recipient {i}");
    }
}

/// A flow whose `event` node achieves the event that triggers it, directly or through other
/// flows, is refused when it is defined: it could only repeat until the chain bound stops it.
#[tokio::test]
async fn a_cycle_of_event_nodes_is_refused_when_the_flow_is_defined() {
    let s = TestServer::start().await;
    let api = s.demo().await;
    let own = api.put("/flows/echo", json!({"trigger": {"event": "NEWSLETTER_SIGNUP"}, "nodes": [{"event": "NEWSLETTER_SIGNUP"}]})).await;
    own.expect(400);
    assert!(own.message().contains("lead back to its own trigger (flow echo -> event NEWSLETTER_SIGNUP)"), "{}", own.message());
    // Through another flow: the second one closes the cycle and is refused, naming both.
    api.put("/flows/first", json!({"trigger": {"event": "NEWSLETTER_SIGNUP"}, "nodes": [{"event": "WELCOME"}]})).await.expect(201);
    let second = api.put("/flows/second", json!({"trigger": {"event": "WELCOME"}, "nodes": [{"event": "NEWSLETTER_SIGNUP"}]})).await;
    second.expect(400);
    assert!(second.message().contains("flow second -> event NEWSLETTER_SIGNUP -> flow first -> event WELCOME"), "{}", second.message());
}

/// A step extension that achieves the event that triggers its own flow (which no definition
/// shows): each run is one event further down the chain, and the run at the bound cannot start
/// another.
#[tokio::test]
async fn a_cycle_through_a_step_stops_at_the_chain_depth() {
    let s = TestServer::start().await;
    let api = s.demo().await;
    api.upload_extension("probe.wasm", env!("GUEST_FLOW_PROBE"), "step").await;
    api.put("/flows/echo", json!({"trigger": {"event": "NEWSLETTER_SIGNUP"}, "nodes": [{"step": "probe"}]})).await.expect(201);
    let id = api.create_recipient(json!({"EMAIL": "loop@example.com", "LAST_NAME": "chain"})).await;
    api.post_empty(&achieve(id, "NEWSLETTER_SIGNUP")).await.expect(200);
    let runs = runs_over(&api, "echo", id, 9).await;
    assert_eq!(runs.len(), 9, "depths 0 to 8");
    let depths: std::collections::BTreeSet<i64> = runs.iter().map(|r| r["depth"].as_i64().unwrap()).collect();
    assert_eq!(depths, (0..=8).collect());
    tokio::time::sleep(Duration::from_millis(500)).await;
    assert_eq!(
        api.get(&format!("/flows/echo/runs?recipientId={id}&limit=100")).await.json().as_array().map(Vec::len),
        Some(9),
        "no more runs"
    );
}

/// Three flows on one event whose step achieves that event again would start 3 + 9 + 27 + ...
/// runs: the chain stops at its bound of runs (100 started by chained events, in threes), not at
/// its depth.
#[tokio::test]
async fn a_chain_that_fans_out_stops_at_its_bound_of_runs() {
    let s = TestServer::start().await;
    let api = s.demo().await;
    api.upload_extension("probe.wasm", env!("GUEST_FLOW_PROBE"), "step").await;
    for flow in ["fan-a", "fan-b", "fan-c"] {
        api.put(&format!("/flows/{flow}"), json!({"trigger": {"event": "NEWSLETTER_SIGNUP"}, "nodes": [{"step": "probe"}]}))
            .await
            .expect(201);
    }
    let id = api.create_recipient(json!({"EMAIL": "fan@example.com", "LAST_NAME": "chain"})).await;
    api.post_empty(&achieve(id, "NEWSLETTER_SIGNUP")).await.expect(200);
    // The call's own 3 runs, then 99 chained ones (33 events of 3; the 34th would pass 100).
    let total = || async {
        let mut n = 0;
        for flow in ["fan-a", "fan-b", "fan-c"] {
            n += api.get(&format!("/flows/{flow}/runs?recipientId={id}&limit=100")).await.json().as_array().map_or(0, Vec::len);
        }
        n
    };
    eventually(Duration::from_secs(60), "102 runs", || async {
        let n = total().await;
        if n >= 102 {
            Ok(())
        } else {
            Err(format!("{n} runs"))
        }
    })
    .await;
    tokio::time::sleep(Duration::from_secs(2)).await;
    assert_eq!(total().await, 102, "the chain stopped at its bound");
    let max_depth = api
        .get(&format!("/flows/fan-a/runs?recipientId={id}&limit=100"))
        .await
        .json()
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r["depth"].as_i64().unwrap())
        .max();
    assert!(max_depth < Some(8), "the bound of runs came before the depth's: {max_depth:?}");
}

/// Created recipients start `recipientCreated` flows, through the API and the Register API; one
/// instance's flows never run for another's recipients.
#[tokio::test]
async fn creations_start_flows_within_their_instance() {
    let s = TestServer::start().await;
    let (demo, staging) = (s.demo().await, s.staging().await);
    demo.put("/flows/greet", json!({"trigger": {"recipientCreated": true}, "nodes": [{"set": {"COUNTRY": "greeted"}}]})).await.expect(201);
    let id = demo.create_recipient(json!({"EMAIL": "new@example.com"})).await;
    runs_over(&demo, "greet", id, 1).await;
    assert_eq!(demo.get(&format!("/recipients/{id}")).await.json()["personData"]["COUNTRY"], "greeted");
    demo.put("/recipients/4242", json!({"personData": {"EMAIL": "put@example.com"}})).await.expect(201);
    runs_over(&demo, "greet", 4242, 1).await;

    let other = staging.create_recipient(json!({"EMAIL": "new@example.com"})).await;
    tokio::time::sleep(Duration::from_millis(500)).await;
    assert!(staging.get(&format!("/recipients/{other}")).await.json()["personData"]["COUNTRY"].is_null());
    assert_eq!(staging.get("/flows/greet/runs").await.json(), json!([]));
    staging.get("/flows/greet").await.expect(404);
    // A run id of one instance is not found through another.
    let theirs = demo.get(&format!("/flows/greet/runs?recipientId={id}")).await.json()[0]["id"].as_str().unwrap().to_string();
    staging.get(&format!("/flows/greet/runs/{theirs}")).await.expect(404);
}

/// The demo's STORE_ASSIGNMENT with the guest examples it names: a recipient with a purchase in
/// the last 30 days is assigned the store of its city; one whose purchases are older is not. The
/// same step, in a flow whose calls carry contextual data, takes the city from there.
#[tokio::test]
async fn the_demo_store_assignment_runs_the_guest_examples() {
    let s = TestServer::start().await;
    let api = s.demo().await;
    api.upload_extension("recent-buyer.wasm", env!("GUEST_RECENT_BUYER"), "condition").await;
    api.upload_extension("nearest-store.wasm", env!("GUEST_NEAREST_STORE"), "step").await;
    for (id, city) in [("S1", "Paris"), ("S2", "Lyon"), ("S3", "Nice")] {
        api.post("/globaldata/tables/STORES/record", json!({"ID": id, "NAME": format!("{city} store"), "CITY": city})).await.expect(201);
    }
    let day = chrono::Duration::days(1);
    let now = chrono::Utc::now();
    let recent = api.create_recipient(json!({"EMAIL": "r@example.com", "CITY": "Lyon"})).await;
    let old = api.create_recipient(json!({"EMAIL": "o@example.com", "CITY": "Lyon"})).await;
    let visitor = api.create_recipient(json!({"EMAIL": "v@example.com", "CITY": "Lyon"})).await;
    for (id, at) in [(recent, now - day * 2), (old, now - day * 60), (visitor, now - day)] {
        let records =
            json!([{"ID": format!("p{id}"), "PRODUCT": "tea", "AMOUNT": 4, "PURCHASED_AT": at.format("%Y-%m-%dT%H:%M:%SZ").to_string()}]);
        api.post(&format!("/recipients/{id}/oneToManyTables/PURCHASES/:batchUpdateRecords"), records).await.expect(200);
    }
    for id in [recent, old] {
        api.post_empty(&achieve(id, "PURCHASE_MADE")).await.expect(200);
    }
    let store = |id: i64| {
        let api = &api;
        async move { api.get(&format!("/recipients/{id}")).await.json()["personData"]["STORE"].clone() }
    };
    let runs = runs_over(&api, "STORE_ASSIGNMENT", recent, 1).await;
    assert_eq!(runs[0]["outcome"], "completed", "{runs:?}");
    assert_eq!(store(recent).await, "S2");
    let runs = runs_over(&api, "STORE_ASSIGNMENT", old, 1).await;
    assert_eq!(runs[0]["outcome"], "the condition is false", "{runs:?}");
    assert!(store(old).await.is_null());
    let traced = run(&api, "STORE_ASSIGNMENT", &runs[0]).await;
    assert!(traced["trace"][0]["log"].to_string().contains("purchases since"), "{traced}");

    let schema =
        br#"{"models": [{"name": "VISIT", "type": "person_data", "fields": [{"name": "CITY", "data_type": "string", "required": true}]}]}"#;
    let form = herald_tests::reqwest::multipart::Form::new()
        .part("file", herald_tests::reqwest::multipart::Part::bytes(schema.to_vec()).file_name("visit.json"));
    herald_tests::answer(api.request(herald_tests::reqwest::Method::POST, "/assets/contexts").multipart(form).send().await.unwrap())
        .await
        .expect(201);
    api.put(
        "/flows/visit",
        json!({"trigger": {"event": "NEWSLETTER_SIGNUP"}, "contextSchema": "visit", "nodes": [{"step": "nearest-store"}]}),
    )
    .await
    .expect(201);
    api.post(&achieve(visitor, "NEWSLETTER_SIGNUP"), json!({"name": "visit", "data": {"VISIT": {"CITY": "Nice"}}})).await.expect(200);
    runs_over(&api, "visit", visitor, 1).await;
    assert_eq!(store(visitor).await, "S3");
}

//! Global Data, Global Data Tables and Discovery.

use herald_tests::{json, TestServer};

#[tokio::test]
async fn global_data_lists_reads_and_updates() {
    let s = TestServer::start().await;
    let api = s.demo().await;
    let list = api.get("/globaldata/").await;
    list.expect(200);
    assert_eq!(
        list.json(),
        json!([
            {"NAME": "CAMPAIGN_NAME", "TYPE": "STRING", "DESCRIPTION": "Name of the running campaign"},
            {"NAME": "DISCOUNT_RATE", "TYPE": "NUMBER", "DESCRIPTION": "Default discount"},
            {"NAME": "SUPPORT_EMAIL", "TYPE": "STRING", "DESCRIPTION": "Reply-to address"}
        ])
    );
    assert_eq!(api.get("/globaldata").await.json(), list.json());
    let one = api.get("/globaldata/DISCOUNT_RATE").await.json();
    assert_eq!(one["VALUE"], "0.15");
    assert_eq!(one["PUBLISH"], "true");
    let created: i64 = one["CREATED"].as_str().unwrap().parse().unwrap();
    assert!(created > 1_600_000_000_000, "milliseconds since the epoch");

    let put = api.put("/globaldata/DISCOUNT_RATE", json!({"VALUE": "0.2"})).await;
    put.expect(200);
    assert_eq!(put.json()["VALUE"], "0.2");
    let modified: i64 = put.json()["MODIFIED"].as_str().unwrap().parse().unwrap();
    assert!(modified >= created);
    assert_eq!(api.get("/globaldata/DISCOUNT_RATE").await.json()["VALUE"], "0.2");

    let bad = api.put("/globaldata/DISCOUNT_RATE", json!({"VALUE": "a lot"})).await;
    bad.expect(400);
    assert!(bad.message().contains("NUMBER"));
    let extra = api.put("/globaldata/DISCOUNT_RATE", json!({"VALUE": "1", "TYPE": "STRING"})).await;
    extra.expect(400);
    let missing = api.put("/globaldata/DISCOUNT_RATE", json!({})).await;
    missing.expect(400);
    let nothing = api.get("/globaldata/NOPE").await;
    nothing.expect(404);
    assert!(nothing.text.is_empty());
    api.put("/globaldata/NOPE", json!({"VALUE": "x"})).await.expect(404);
}

#[tokio::test]
async fn global_data_tables_records() {
    let s = TestServer::start().await;
    let api = s.demo().await;
    assert_eq!(api.get("/globaldata/tables").await.json(), json!(["STORES", "PRODUCTS"]));
    let created =
        api.post("/globaldata/tables/STORES/record", json!({"ID": "S1", "NAME": "Opera", "CITY": "Paris", "OPENED": "01.06.2001"})).await;
    created.expect(201);
    assert_eq!(created.json()["OPENED"], "01.06.2001");
    let dup = api.post("/globaldata/tables/STORES/record", json!({"ID": "S1"})).await;
    dup.expect(409);
    assert!(dup.message().contains("S1"));
    api.post("/globaldata/tables/STORES/record", json!({"NAME": "no id"})).await.expect(400);
    api.post("/globaldata/tables/STORES/record", json!({"ID": "S9", "OPENED": "June"})).await.expect(400);
    api.post("/globaldata/tables/NOPE/record", json!({"ID": "x"})).await.expect(404);

    api.get("/globaldata/tables/STORES/record/S1").await.expect(200);
    api.get("/globaldata/tables/STORES/record/S2").await.expect(404);
    let put_new = api.put("/globaldata/tables/STORES/record/S%252F2", json!({"NAME": "Slash"})).await;
    put_new.expect(201);
    assert_eq!(put_new.json()["ID"], "S/2");
    let put_old = api.put("/globaldata/tables/STORES/record/S1", json!({"CITY": "Lyon"})).await;
    put_old.expect(200);
    assert_eq!(put_old.json(), json!({"ID": "S1", "NAME": "Opera", "CITY": "Lyon", "OPENED": "01.06.2001"}));
    api.put("/globaldata/tables/STORES/record/S1", json!({"ID": "S7"})).await.expect(400);

    let all = api.get("/globaldata/tables/STORES").await.json();
    assert_eq!(all.as_array().unwrap().len(), 2);
    assert_eq!(api.get("/globaldata/tables/STORES?filter=CITY==Lyon").await.json().as_array().unwrap().len(), 1);
    api.get("/globaldata/tables/STORES?filter=COLOUR==red").await.expect(422);

    let batch = api
        .post(
            "/globaldata/tables/PRODUCTS/:batchUpdateRecords",
            json!([{"ID": "P1", "PRICE": 10}, {"ID": "P2", "PRICE": "x"}, {"ID": "P3"}]),
        )
        .await;
    batch.expect(200);
    assert_eq!(batch.json()["succeeded"], 2);
    let del = api.post("/globaldata/tables/PRODUCTS/:batchDeleteRecords", json!(["P1", "P9"])).await;
    assert_eq!(del.json()["results"][1]["status"], "notFound");

    api.delete("/globaldata/tables/STORES/record/S1").await.expect(204);
    api.delete("/globaldata/tables/STORES/record/S1").await.expect(404);
    let truncated = api.post_empty("/globaldata/tables/STORES/:truncateTable").await;
    truncated.expect(200);
    assert_eq!(truncated.json()["deleted"], 1);
    assert_eq!(api.get("/globaldata/tables/STORES").await.json(), json!([]));
    api.post_empty("/globaldata/tables/STORES/:dropTable").await.expect(404);
}

#[tokio::test]
async fn discovery_describes_the_data_model() {
    let s = TestServer::start().await;
    let api = s.demo().await;
    let pd = api.get("/discovery/persondata").await.json();
    assert_eq!(pd["recipientId"], "USER_ID");
    let fields = pd["fields"].as_array().unwrap();
    assert_eq!(fields.len(), 13, "the twelve of the contract and STORE, which the demo extends it with");
    assert_eq!(fields[0], json!({"name": "USER_ID", "identifier": true, "type": "NUMBER", "description": "Recipient Id", "unique": true}));
    assert_eq!(fields[1], json!({"name": "EMAIL", "identifier": false, "type": "STRING", "unique": true}));
    let types: Vec<&str> = fields.iter().map(|f| f["type"].as_str().unwrap()).collect();
    assert!(types.contains(&"DATE") && types.contains(&"TIMESTAMP") && types.contains(&"BOOLEAN"));

    assert_eq!(api.get("/discovery/onetomany").await.json(), json!(["PURCHASES", "DEVICES"]));
    let devices = api.get("/discovery/onetomany/DEVICES").await.json();
    assert_eq!(
        devices,
        json!({"name": "DEVICES", "fields": [
            {"name": "ID", "identifier": true, "type": "STRING"},
            {"name": "PLATFORM", "identifier": false, "type": "STRING"},
            {"name": "PUSH_TOKEN", "identifier": false, "type": "STRING"}
        ]})
    );
    api.get("/discovery/onetomany/NOPE").await.expect(404);
    assert_eq!(api.get("/discovery/globaldata/").await.json(), api.get("/globaldata/").await.json());
    assert_eq!(api.get("/discovery/globaldata").await.json().as_array().unwrap().len(), 3);
    assert_eq!(api.get("/discovery/globaldata/tables").await.json(), json!(["STORES", "PRODUCTS"]));
    let products = api.get("/discovery/globaldata/tables/PRODUCTS").await.json();
    assert_eq!(products["description"], "Product catalogue");
    assert_eq!(products["fields"][2], json!({"name": "PRICE", "identifier": false, "type": "NUMBER"}));
    api.get("/discovery/globaldata/tables/NOPE").await.expect(404);

    let names =
        |list: &serde_json::Value| list.as_array().unwrap().iter().map(|e| e["name"].as_str().unwrap().to_string()).collect::<Vec<_>>();
    assert_eq!(names(&api.get("/discovery/events").await.json()), ["WELCOME", "PURCHASE_MADE", "NEWSLETTER_SIGNUP"]);
    let groups = api.get("/discovery/targetgroups").await.json();
    assert_eq!(names(&groups), ["ADULTS", "PARIS", "OPTED_IN"]);
    assert_eq!(groups[0]["filter"], "AGE>=18");
    let promotions = api.get("/discovery/promotions").await.json();
    assert_eq!(names(&promotions), ["WELCOME10", "ADULT_OFFER"]);
    assert_eq!(promotions[1]["filter"], "AGE>=18");
    // The patterns in which the API writes the demo's dates and times.
    assert_eq!(api.get("/discovery/formats").await.json(), json!({"date": "dd.MM.yyyy", "timestamp": "dd.MM.yyyy HH:mm:ss"}));
}

// On PostgreSQL writers run side by side (on SQLite one writer takes them in turn): an upsert
// must still create a record once and update it otherwise, never fail on the race.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn concurrent_puts_of_a_new_record_create_it_once() {
    let s = TestServer::start().await;
    let api = s.demo().await;
    let puts = (0..16).map(|i| {
        let api = api.clone();
        async move { api.put("/globaldata/tables/STORES/record/RACE", json!({"NAME": format!("writer {i}")})).await.status.as_u16() }
    });
    let mut statuses = futures_util::future::join_all(puts).await;
    statuses.sort_unstable();
    assert_eq!(statuses.iter().filter(|s| **s == 201).count(), 1, "{statuses:?}");
    assert!(statuses.iter().all(|s| *s == 200 || *s == 201), "{statuses:?}");
    api.get("/globaldata/tables/STORES/record/RACE").await.expect(200);
}

// A NUMBER left empty, then given, through the same statement: on PostgreSQL a connection
// prepares a statement with the parameter types of its first call, so an empty number must be
// sent as the same type as a number (it was not: every number after an empty one was a 500).
#[tokio::test]
async fn null_number_and_number_share_a_statement() {
    let s = TestServer::start().await;
    let api = s.demo().await;
    for i in 0..6 {
        for (id, price) in [(format!("EMPTY{i}"), json!(null)), (format!("PRICED{i}"), json!(1.5))] {
            // Created, then updated: the insert and the update statement each see both.
            for status in [201, 200] {
                let put = api.put(&format!("/globaldata/tables/PRODUCTS/record/{id}"), json!({"NAME": "n", "PRICE": price})).await;
                put.expect(status);
                assert_eq!(put.json()["PRICE"], price, "{id}");
            }
        }
        // One multi-row statement, the empty number in the first row, then in the second.
        let mut rows = vec![json!({"ID": format!("B{i}"), "PRICE": null}), json!({"ID": format!("C{i}"), "PRICE": 2.5})];
        if i % 2 == 1 {
            rows.reverse();
        }
        let batch = api.post("/globaldata/tables/PRODUCTS/:batchUpdateRecords", json!(rows)).await;
        batch.expect(200);
        assert_eq!(batch.json()["succeeded"], 2, "{}", batch.text);
    }
    let priced = api.get("/globaldata/tables/PRODUCTS/record/C5").await;
    priced.expect(200);
    assert_eq!(priced.json()["PRICE"], 2.5);
}

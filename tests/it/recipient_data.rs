//! One-To-Many records, events, target groups, promotions and communication history of a recipient.

use herald_tests::{json, TestServer};

#[tokio::test]
async fn batch_update_upserts_and_reports_each_entry() {
    let s = TestServer::start().await;
    let api = s.demo().await;
    let id = api.create_recipient(json!({"EMAIL": "o@example.com"})).await;
    let path = format!("/recipients/{id}/oneToManyTables/PURCHASES");
    let first = api
        .post(
            &format!("{path}/:batchUpdateRecords"),
            json!([
                {"ID": "p1", "PRODUCT": "hat", "AMOUNT": 9.5, "PURCHASED_AT": "01.03.2024 10:00:00"},
                {"PRODUCT": "no id"},
                {"ID": "p2", "AMOUNT": "lots"},
                {"ID": "p3", "COLOUR": "red"},
                {"ID": "p4", "PRODUCT": "scarf"}
            ]),
        )
        .await;
    first.expect(200);
    let report = first.json();
    let statuses: Vec<&str> = report["results"].as_array().unwrap().iter().map(|r| r["status"].as_str().unwrap()).collect();
    assert_eq!(statuses, ["created", "invalid", "invalid", "invalid", "created"]);
    assert_eq!(report["succeeded"], 2);
    assert_eq!(report["failed"], 3);
    assert!(report["results"][2]["message"].as_str().unwrap().contains("AMOUNT"));
    assert!(report["results"][3]["message"].as_str().unwrap().contains("COLOUR"));

    let second = api.post(&format!("{path}/:batchUpdateRecords"), json!([{"ID": "p1", "AMOUNT": 12}])).await;
    assert_eq!(second.json()["results"][0]["status"], "updated");
    let records = api.get(&path).await.json();
    assert_eq!(
        records,
        json!([
            {"ID": "p1", "PRODUCT": "hat", "AMOUNT": 12, "PURCHASED_AT": "01.03.2024 10:00:00"},
            {"ID": "p4", "PRODUCT": "scarf", "AMOUNT": null, "PURCHASED_AT": null}
        ])
    );
    let filtered = api.get(&format!("{path}?filter=PRODUCT==scarf")).await.json();
    assert_eq!(filtered.as_array().unwrap().len(), 1);
}

/// A batch is written with multi-row statements when it can (issue 20), entry by entry when an
/// identifier comes twice: the outcomes and the stored records are the same either way.
#[tokio::test]
async fn large_batches_of_mixed_fields_and_repeated_identifiers_keep_each_entrys_outcome() {
    let s = TestServer::start().await;
    let api = s.demo().await;
    let id = api.create_recipient(json!({"EMAIL": "many@example.com"})).await;
    let path = format!("/recipients/{id}/oneToManyTables/PURCHASES");
    api.post(&format!("{path}/:batchUpdateRecords"), json!([{"ID": "r0", "PRODUCT": "kept", "AMOUNT": 1}])).await.expect(200);
    // 1000 entries: two shapes of fields, an existing record, invalid entries between them.
    let batch: Vec<_> = (0..1000)
        .map(|i| match i % 4 {
            0 => json!({"ID": format!("r{i}"), "AMOUNT": i}),
            1 => json!({"ID": format!("r{i}"), "PRODUCT": format!("p{i}"), "AMOUNT": i}),
            2 => json!({"ID": format!("r{i}"), "PRODUCT": format!("p{i}"), "AMOUNT": i}),
            _ if i == 999 => json!({"PRODUCT": "no id"}),
            _ => json!({"ID": format!("r{i}"), "AMOUNT": "not a number"}),
        })
        .collect();
    let report = api.post(&format!("{path}/:batchUpdateRecords"), json!(batch)).await.json();
    let statuses: Vec<&str> = report["results"].as_array().unwrap().iter().map(|r| r["status"].as_str().unwrap()).collect();
    assert_eq!(statuses[0], "updated");
    assert!(statuses[1..].iter().enumerate().all(|(i, s)| *s == if (i + 1) % 4 == 3 { "invalid" } else { "created" }), "{statuses:?}");
    assert_eq!((report["succeeded"].as_u64(), report["failed"].as_u64()), (Some(750), Some(250)));
    let records = api.get(&path).await.json();
    let records = records.as_array().unwrap();
    assert_eq!(records.len(), 750);
    let r0 = records.iter().find(|r| r["ID"] == "r0").unwrap();
    assert_eq!((r0["PRODUCT"].as_str(), r0["AMOUNT"].as_f64()), (Some("kept"), Some(0.0)), "fields not sent are kept");
    let r5 = records.iter().find(|r| r["ID"] == "r5").unwrap();
    assert_eq!((r5["PRODUCT"].as_str(), r5["AMOUNT"].as_f64()), (Some("p5"), Some(5.0)));

    // The same identifier twice: the second entry updates what the first created.
    let report = api
        .post(&format!("{path}/:batchUpdateRecords"), json!([{"ID": "d", "PRODUCT": "first"}, {"ID": "e"}, {"ID": "d", "AMOUNT": 2}]))
        .await
        .json();
    let statuses: Vec<&str> = report["results"].as_array().unwrap().iter().map(|r| r["status"].as_str().unwrap()).collect();
    assert_eq!(statuses, ["created", "created", "updated"]);
    let d = api.get(&format!("{path}?filter=ID==d")).await.json();
    assert_eq!((d[0]["PRODUCT"].as_str(), d[0]["AMOUNT"].as_f64()), (Some("first"), Some(2.0)));
}

#[tokio::test]
async fn batch_delete_and_limits() {
    let s = TestServer::start().await;
    let api = s.demo().await;
    let id = api.create_recipient(json!({"EMAIL": "d@example.com"})).await;
    let path = format!("/recipients/{id}/oneToManyTables/DEVICES");
    api.post(&format!("{path}/:batchUpdateRecords"), json!([{"ID": "a"}, {"ID": "b"}, {"ID": "c"}])).await.expect(200);
    let deleted = api.post(&format!("{path}/:batchDeleteRecords"), json!(["a", "zzz", 5, "c"])).await;
    deleted.expect(200);
    let statuses: Vec<String> =
        deleted.json()["results"].as_array().unwrap().iter().map(|r| r["status"].as_str().unwrap().to_string()).collect();
    assert_eq!(statuses, ["deleted", "notFound", "invalid", "deleted"]);
    assert_eq!(api.get(&path).await.json(), json!([{"ID": "b", "PLATFORM": null, "PUSH_TOKEN": null}]));

    let too_many: Vec<_> = (0..1001).map(|i| json!({"ID": format!("x{i}")})).collect();
    let refused = api.post(&format!("{path}/:batchUpdateRecords"), json!(too_many)).await;
    refused.expect(400);
    assert!(refused.message().contains("1000"));
    assert_eq!(api.get(&path).await.json().as_array().unwrap().len(), 1, "nothing written");
    let exactly: Vec<_> = (0..1000).map(|i| json!({"ID": format!("x{i}")})).collect();
    api.post(&format!("{path}/:batchUpdateRecords"), json!(exactly)).await.expect(200);
    assert_eq!(api.get(&path).await.json().as_array().unwrap().len(), 1001);
    let not_array = api.post(&format!("{path}/:batchDeleteRecords"), json!({"ID": "a"})).await;
    not_array.expect(400);
}

#[tokio::test]
async fn records_stay_within_their_recipient() {
    let s = TestServer::start().await;
    let api = s.demo().await;
    let a = api.create_recipient(json!({"EMAIL": "a@example.com"})).await;
    let b = api.create_recipient(json!({"EMAIL": "b@example.com"})).await;
    api.post(&format!("/recipients/{a}/oneToManyTables/PURCHASES/:batchUpdateRecords"), json!([{"ID": "same", "PRODUCT": "A's"}]))
        .await
        .expect(200);
    api.post(&format!("/recipients/{b}/oneToManyTables/PURCHASES/:batchUpdateRecords"), json!([{"ID": "same", "PRODUCT": "B's"}]))
        .await
        .expect(200);
    let del = api.post(&format!("/recipients/{b}/oneToManyTables/PURCHASES/:batchDeleteRecords"), json!(["same"])).await;
    assert_eq!(del.json()["results"][0]["status"], "deleted");
    assert_eq!(api.get(&format!("/recipients/{a}/oneToManyTables/PURCHASES")).await.json()[0]["PRODUCT"], "A's");
    assert_eq!(api.get(&format!("/recipients/{b}/oneToManyTables/PURCHASES")).await.json(), json!([]));
    api.get(&format!("/recipients/{a}/oneToManyTables/NOPE")).await.expect(404);
    api.get("/recipients/999/oneToManyTables/PURCHASES").await.expect(404);
}

#[tokio::test]
async fn events_are_achieved_and_read() {
    let s = TestServer::start().await;
    let api = s.demo().await;
    let id = api.create_recipient(json!({"EMAIL": "e@example.com"})).await;
    assert_eq!(api.get(&format!("/recipients/{id}/events")).await.json(), json!([]));
    let done = api.post_empty(&format!("/recipients/{id}/events/WELCOME/:achieveEvent")).await;
    done.expect(200);
    assert_eq!(done.json()["eventId"], "WELCOME");
    api.post_empty(&format!("/recipients/{id}/events/PURCHASE_MADE/:achieveEvent")).await.expect(200);
    let events = api.get(&format!("/recipients/{id}/events")).await.json();
    let names: Vec<&str> = events.as_array().unwrap().iter().map(|e| e["eventId"].as_str().unwrap()).collect();
    assert_eq!(names, ["WELCOME", "PURCHASE_MADE"]);
    assert!(events[0]["achievedAt"].as_str().unwrap().len() == "dd.MM.yyyy HH:mm:ss".len());
    api.post_empty(&format!("/recipients/{id}/events/NO_SUCH/:achieveEvent")).await.expect(404);
    api.post_empty("/recipients/999/events/WELCOME/:achieveEvent").await.expect(404);
}

#[tokio::test]
async fn target_groups_and_promotions_follow_their_filters() {
    let s = TestServer::start().await;
    let api = s.demo().await;
    let adult = api.create_recipient(json!({"EMAIL": "adult@example.com", "AGE": 30, "CITY": "Paris", "OPTIN": true})).await;
    let child = api.create_recipient(json!({"EMAIL": "kid@example.com", "AGE": 12, "CITY": "Lyon"})).await;
    let names =
        |v: serde_json::Value| -> Vec<String> { v.as_array().unwrap().iter().map(|g| g["name"].as_str().unwrap().to_string()).collect() };
    assert_eq!(names(api.get(&format!("/recipients/{adult}/targetGroups")).await.json()), ["ADULTS", "PARIS", "OPTED_IN"]);
    assert_eq!(names(api.get(&format!("/recipients/{child}/targetGroups")).await.json()), Vec::<String>::new());
    assert_eq!(names(api.post_empty(&format!("/recipients/{adult}/:evaluatePromotion")).await.json()), ["WELCOME10", "ADULT_OFFER"]);
    assert_eq!(names(api.post_empty(&format!("/recipients/{child}/:evaluatePromotion")).await.json()), ["WELCOME10"]);
    assert_eq!(api.get(&format!("/recipients/{adult}/communicationHistory")).await.json(), json!([]));
}

/// An event is achieved at the server's clock (the domain rule every door uses), not the
/// machine's: a test clock moved 400 days ahead shows in `achievedAt`.
#[tokio::test]
async fn events_are_achieved_at_the_servers_clock() {
    let s = TestServer::start().await;
    let api = s.demo().await;
    let id = api.create_recipient(json!({})).await;
    s.clock.advance_secs(400 * 24 * 3600);
    let done = api.post_empty(&format!("/recipients/{id}/events/WELCOME/:achieveEvent")).await;
    done.expect(200);
    let year = |text: &str| text[6..10].parse::<i32>().unwrap();
    let achieved = done.json()["achievedAt"].as_str().unwrap().to_string();
    let today = chrono::Utc::now().format("%Y").to_string().parse::<i32>().unwrap();
    assert!(year(&achieved) > today, "{achieved} is the moved clock's day");
}

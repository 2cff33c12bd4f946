//! Bulk transfer of records (issue 38): a Global Data Table's records through
//! `POST /globaldata/tables/{t}/:import` and `:export`, and the One-To-Many records an NDJSON
//! recipients' import carries under each table's name.

use std::time::Duration;

use herald_tests::imports::{export_from, import_to, over, started, watch};
use herald_tests::{json, TestServer};
use serde_json::Value;

#[tokio::test]
async fn a_global_data_table_imports_and_exports_its_records() {
    let s = TestServer::start().await;
    let api = s.demo().await;
    api.post("/globaldata/tables/STORES/record", json!({"ID": "S1", "NAME": "Opera", "CITY": "Paris"})).await.expect(201);
    let csv = "text/csv; charset=utf-8";
    let file = "ID,NAME,CITY,OPENED\nS1,Opera Garnier,,\nS2,Louvre,Paris,\nS3,Bad,Paris,someday\nS2,Louvre Rivoli,Paris,\n";
    let id = started(&import_to(&api, "/globaldata/tables/STORES/:import", csv, file).await);
    let done = watch(&api, &id, Duration::from_secs(30), over).await;
    assert_eq!((done["target"].as_str(), done["key"].as_str()), (Some("globaldata/STORES"), Some("ID")), "{done}");
    let counts = ["rowsRead", "created", "updated", "rejected"].map(|k| done[k].as_i64().unwrap());
    assert_eq!(counts, [4, 1, 2, 1], "{done}");
    let errors = api.get(&format!("/imports/{id}/errors")).await.json();
    assert_eq!((errors[0]["row"].as_i64(), errors[0]["field"].as_str()), (Some(4), Some("OPENED")), "{errors}");
    let s1 = api.get("/globaldata/tables/STORES/record/S1").await.json();
    assert_eq!((s1["NAME"].as_str(), s1["CITY"].clone()), (Some("Opera Garnier"), Value::Null), "an empty cell clears: {s1}");

    // What the start of a file shows is refused before anything is stored.
    let unknown = import_to(&api, "/globaldata/tables/STORES/:import", csv, "ID,COLOR,SIZE\nS9,red,2\n").await;
    unknown.expect(400);
    assert!(unknown.message().contains("COLOR, SIZE"), "{}", unknown.message());
    let keyless = import_to(&api, "/globaldata/tables/STORES/:import", csv, "NAME,CITY\nX,Paris\n").await;
    keyless.expect(400);
    assert!(keyless.message().contains("no ID column"), "{}", keyless.message());
    import_to(&api, "/globaldata/tables/STORES/:import?key=NAME", csv, "ID\nS9\n").await.expect(400);
    import_to(&api, "/globaldata/tables/NOPE/:import", csv, "ID\nS9\n").await.expect(404);

    let line = r#"{"ID": "P1", "NAME": "Pen", "PRICE": 2.5}"#;
    let id = started(&import_to(&api, "/globaldata/tables/PRODUCTS/:import", "application/x-ndjson", line).await);
    assert_eq!(watch(&api, &id, Duration::from_secs(30), over).await["created"], 1);

    let (status, kind, body) = export_from(&api, "/globaldata/tables/STORES/:export", json!({"filter": "CITY==Paris"})).await;
    assert_eq!((status, kind.as_str()), (200, "text/csv; charset=utf-8"));
    assert_eq!(body, "ID,NAME,CITY,OPENED\r\nS2,Louvre Rivoli,Paris,\r\n");
    let (_, kind, body) =
        export_from(&api, "/globaldata/tables/PRODUCTS/:export", json!({"format": "ndjson", "fields": ["ID", "PRICE"]})).await;
    assert_eq!((kind.as_str(), body.as_str()), ("application/x-ndjson", "{\"ID\":\"P1\",\"PRICE\":2.5}\n"));
    let (status, _, body) = export_from(&api, "/globaldata/tables/PRODUCTS/:export", json!({"fields": ["COLOR"]})).await;
    assert_eq!(status, 400, "{body}");
    // Another instance's table is its own.
    let (_, _, body) = export_from(&s.staging().await, "/globaldata/tables/STORES/:export", json!({})).await;
    assert_eq!(body, "ID,NAME,CITY,OPENED\r\n");
}

#[tokio::test]
async fn an_ndjson_line_carries_its_recipients_one_to_many_records() {
    let s = TestServer::start().await;
    let api = s.demo().await;
    api.create_recipient(json!({"USER_ID": 5, "EMAIL": "five@otm.test"})).await;
    api.post("/recipients/5/oneToManyTables/PURCHASES/:batchUpdateRecords", json!([{"ID": "p1", "PRODUCT": "Pen", "AMOUNT": 3}]))
        .await
        .expect(200);
    let file = [
        r#"{"personData": {"USER_ID": 5}, "PURCHASES": [{"ID": "p1", "AMOUNT": 4}, {"ID": "p2", "PRODUCT": "Ink", "AMOUNT": 1}]}"#,
        r#"{"personData": {"USER_ID": 6, "EMAIL": "six@otm.test"}, "DEVICES": [{"ID": "d1", "PLATFORM": "ios"}], "PURCHASES": [{"ID": "p1", "AMOUNT": 9}]}"#,
        r#"{"personData": {"USER_ID": 7}, "PURCHASES": [{"AMOUNT": 1}]}"#,
        r#"{"personData": {"USER_ID": 8}, "WISHES": []}"#,
        r#"{"personData": {"USER_ID": 5}, "PURCHASES": [{"ID": "p2", "AMOUNT": 2}]}"#,
    ]
    .join("\n");
    let id = started(&import_to(&api, "/recipients/:import", "application/x-ndjson", file).await);
    let done = watch(&api, &id, Duration::from_secs(30), over).await;
    let counts = ["rowsRead", "created", "updated", "rejected"].map(|k| done[k].as_i64().unwrap());
    assert_eq!(counts, [5, 1, 2, 2], "{done}");
    let errors = api.get(&format!("/imports/{id}/errors")).await.json();
    assert_eq!((errors[0]["row"].as_i64(), errors[0]["field"].as_str()), (Some(3), Some("PURCHASES")), "{errors}");
    assert!(errors[0]["message"].as_str().unwrap().contains("record 1 of PURCHASES: the identifier field ID is required"), "{errors}");
    assert!(errors[1]["message"].as_str().unwrap().contains("unknown member 'WISHES'"), "{errors}");

    let purchases = |id: i64| {
        let api = api.clone();
        async move { api.get(&format!("/recipients/{id}/oneToManyTables/PURCHASES")).await.json() }
    };
    let five = purchases(5).await;
    let amounts: Vec<(Value, Value, Value)> =
        five.as_array().unwrap().iter().map(|r| (r["ID"].clone(), r["PRODUCT"].clone(), r["AMOUNT"].clone())).collect();
    assert_eq!(
        amounts,
        vec![(json!("p1"), json!("Pen"), json!(4)), (json!("p2"), json!("Ink"), json!(2))],
        "upserted by identifier, the fields a record leaves out kept, a later line winning: {five}"
    );
    assert_eq!(purchases(6).await[0]["AMOUNT"], 9, "another recipient's p1 is its own");
    let devices = api.get("/recipients/6/oneToManyTables/DEVICES").await.json();
    assert_eq!(devices[0]["PLATFORM"], "ios", "{devices}");
    api.get("/recipients/7").await.expect(404);

    // The records go out as they came in: an export with them, imported into another instance,
    // exports the same.
    let asked = json!({"format": "ndjson", "filter": "USER_ID=le=6", "oneToMany": ["PURCHASES", "DEVICES"]});
    let (status, kind, out) = export_from(&api, "/recipients/:export", asked.clone()).await;
    assert_eq!((status, kind.as_str()), (200, "application/x-ndjson"), "{out}");
    let lines: Vec<Value> = out.lines().map(|l| serde_json::from_str(l).unwrap()).collect();
    assert_eq!(lines.len(), 2, "{out}");
    assert_eq!((lines[0]["PURCHASES"].as_array().unwrap().len(), lines[0]["DEVICES"].clone()), (2, json!([])), "{out}");
    assert_eq!(lines[1]["DEVICES"][0]["PLATFORM"], "ios", "{out}");
    let r = api.request(herald_tests::reqwest::Method::POST, "/recipients/:export").json(&asked).send().await.unwrap();
    assert_eq!(r.headers()["content-disposition"], "attachment; filename=\"recipients.ndjson\"");
    let staging = s.staging().await;
    let id = started(&import_to(&staging, "/recipients/:import", "application/x-ndjson", out.clone()).await);
    assert_eq!(watch(&staging, &id, Duration::from_secs(30), over).await["created"], 2);
    assert_eq!(export_from(&staging, "/recipients/:export", asked).await.2, out);

    let refused = [
        (json!({"oneToMany": ["PURCHASES"]}), "NDJSON only"),
        (json!({"format": "ndjson", "oneToMany": ["WISHES", "PURCHASES", "GIFTS"]}), "does not have: WISHES, GIFTS"),
    ];
    for (body, why) in refused {
        let (status, _, message) = export_from(&api, "/recipients/:export", body).await;
        assert_eq!(status, 400, "{message}");
        assert!(message.contains(why), "{message}");
    }
}

#[tokio::test]
async fn an_export_with_records_reads_every_page() {
    // More recipients than one page of the export's reads (1,000): none lost or repeated at the
    // seams, each with its own records.
    let s = TestServer::start().await;
    let api = s.demo().await;
    let file: String = (1..=2500)
        .map(|i| format!("{{\"personData\": {{\"USER_ID\": {i}}}, \"PURCHASES\": [{{\"ID\": \"p{i}\", \"AMOUNT\": {i}}}]}}\n"))
        .collect();
    let id = started(&import_to(&api, "/recipients/:import", "application/x-ndjson", file).await);
    assert_eq!(watch(&api, &id, Duration::from_secs(60), over).await["created"], 2500);
    let asked = json!({"format": "ndjson", "fields": ["USER_ID"], "oneToMany": ["PURCHASES"]});
    let (status, _, out) = export_from(&api, "/recipients/:export", asked).await;
    assert_eq!(status, 200, "{out}");
    let lines: Vec<Value> = out.lines().map(|l| serde_json::from_str(l).unwrap()).collect();
    assert_eq!(lines.len(), 2500);
    for (n, line) in lines.iter().enumerate() {
        let user = n as i64 + 1;
        assert_eq!(line["personData"], json!({"USER_ID": user}), "{line}");
        assert_eq!(line["PURCHASES"][0]["AMOUNT"], user, "{line}");
    }
}

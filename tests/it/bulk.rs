//! Bulk transfer (issue 38): `POST /recipients/:export` streams what a filter selects as CSV or
//! NDJSON, equal to what the API reads, with its values quoted as RFC 4180 wants.
//! `POST /recipients/:import` takes a CSV or NDJSON file, answers 202, and a job writes its rows
//! as upserts by a key with the REST API's rules, recording each rejected row; `GET /imports/{id}`
//! shows the counts, `/errors` the rejected rows. What cannot be read is refused before anything
//! is stored; a killed server's import resumes where it was.

use std::time::Duration;

use herald_tests::database::TestDatabase;
use herald_tests::imports::{export_from, import_to, over, started, watch};
use herald_tests::process::ServerProcess;
use herald_tests::reqwest::{header, Method};
use herald_tests::{json, Answer, Api, Settings, TestServer};
use serde_json::Value;

/// An RFC 4180 reader, for the tests: quoted cells with doubled quotes and line breaks, CRLF rows.
fn parse_csv(text: &str) -> Vec<Vec<String>> {
    let (mut rows, mut row, mut cell) = (Vec::new(), Vec::new(), String::new());
    let (mut quoted, mut chars) = (false, text.chars().peekable());
    while let Some(c) = chars.next() {
        match (quoted, c) {
            (true, '"') if chars.peek() == Some(&'"') => {
                chars.next();
                cell.push('"');
            }
            (true, '"') => quoted = false,
            (true, c) => cell.push(c),
            (false, '"') => quoted = true,
            (false, ',') => row.push(std::mem::take(&mut cell)),
            (false, '\r') => {}
            (false, '\n') => {
                row.push(std::mem::take(&mut cell));
                rows.push(std::mem::take(&mut row));
            }
            (false, c) => cell.push(c),
        }
    }
    assert!(cell.is_empty() && row.is_empty(), "the CSV ends with a line break");
    rows
}

async fn export(api: &Api, body: Value) -> (u16, String, String) {
    export_from(api, "/recipients/:export", body).await
}

#[tokio::test]
async fn an_export_streams_what_a_filter_selects_as_csv_or_ndjson() {
    let s = TestServer::start().await;
    let api = s.demo().await;
    let names = ["Plain", "Comma, inside", "Quote \"q\"", "Line\nbreak", " spaced ", "Élodie ü"];
    for (i, name) in names.iter().enumerate() {
        api.create_recipient(json!({"EMAIL": format!("e{i}@export.test"), "FIRST_NAME": name, "AGE": 20 + i})).await;
    }
    api.create_recipient(json!({"EMAIL": "minor@export.test", "AGE": 12})).await;
    api.create_recipient(json!({"EMAIL": "unnamed@export.test", "AGE": 40})).await;

    // CSV of a filter and three fields: what GET with the same filter reads, row for row.
    let (status, kind, text) = export(&api, json!({"filter": "AGE>=18", "fields": ["EMAIL", "FIRST_NAME", "AGE"]})).await;
    assert_eq!((status, kind.as_str()), (200, "text/csv; charset=utf-8"), "{text}");
    let rows = parse_csv(&text);
    assert_eq!(rows[0], vec!["EMAIL", "FIRST_NAME", "AGE"]);
    let listed = api.get("/recipients?filter=AGE>=18").await.json();
    let listed = listed.as_array().unwrap();
    assert_eq!(rows.len() - 1, listed.len());
    assert_eq!(listed.len(), names.len() + 1);
    for (row, recipient) in rows[1..].iter().zip(listed) {
        let person = &recipient["personData"];
        assert_eq!(row[0], person["EMAIL"].as_str().unwrap());
        assert_eq!(row[1], person["FIRST_NAME"].as_str().unwrap_or(""), "an empty value is an empty cell");
        assert_eq!(row[2].parse::<f64>().unwrap(), person["AGE"].as_f64().unwrap());
    }
    assert!(text.contains("\"Quote \"\"q\"\"\"") && text.contains("\"Line\nbreak\"") && text.contains("\" spaced \""), "{text}");

    // NDJSON of everyone, every field: the API's own recipients, line for line.
    let (status, kind, text) = export(&api, json!({"format": "ndjson"})).await;
    assert_eq!((status, kind.as_str()), (200, "application/x-ndjson"));
    let lines: Vec<Value> = text.lines().map(|l| serde_json::from_str(l).unwrap()).collect();
    assert_eq!(Value::Array(lines), api.get("/recipients").await.json());
    // An empty body is everyone as CSV; a filter that selects nobody is the header alone.
    let r = api.request(Method::POST, "/recipients/:export").send().await.unwrap();
    assert_eq!(r.status(), 200);
    assert_eq!(r.headers()[header::CONTENT_DISPOSITION], "attachment; filename=\"recipients.csv\"");
    assert_eq!(parse_csv(&r.text().await.unwrap()).len(), names.len() + 3);
    let (_, _, text) = export(&api, json!({"filter": "AGE>200", "fields": ["EMAIL"]})).await;
    assert_eq!(text, "EMAIL\r\n");

    // Mistakes are the client's, and say what is wrong.
    let (status, _, text) = export(&api, json!({"fields": ["EMAIL", "SHOE_SIZE", "HAT"]})).await;
    assert_eq!(status, 400);
    assert!(text.contains("SHOE_SIZE, HAT"), "{text}");
    assert_eq!(export(&api, json!({"format": "xml"})).await.0, 400);
    let (status, _, text) = export(&api, json!({"fields": []})).await;
    assert!(status == 400 && text.contains("'fields' is empty"), "{status} {text}");
    assert_eq!(export(&api, json!({"filters": "AGE>1"})).await.0, 400);
    assert_eq!(export(&api, json!({"filter": "SHOE_SIZE==1"})).await.0, 422);
    let r = api
        .request(Method::POST, "/recipients/:export")
        .header(header::CONTENT_TYPE, "application/json")
        .body("not json")
        .send()
        .await
        .unwrap();
    assert_eq!(r.status(), 400);
    let r = api.request(Method::POST, "/recipients/:export").body("EMAIL").send().await.unwrap();
    assert_eq!(r.status(), 415, "a body that is not JSON, as everywhere in the API");
    let r = api.request(Method::POST, "/recipients/1").send().await.unwrap();
    assert_eq!(r.status(), 405);
    // A client may ask for the file it wants (the console does); a type the export cannot give is 406.
    for (accept, status) in [("text/csv", 200), ("application/x-ndjson", 200), ("text/html", 406)] {
        let r = api.request(Method::POST, "/recipients/:export").header(header::ACCEPT, accept).json(&json!({})).send().await.unwrap();
        assert_eq!(r.status(), status, "Accept: {accept}");
    }
}

/// `herald export` writes what the API's export answers, to a file or to standard output.
#[tokio::test]
async fn the_operators_export_writes_what_the_api_exports() {
    let s = TestServer::start().await;
    let api = s.demo().await;
    for i in 0..25 {
        api.create_recipient(json!({"EMAIL": format!("op{i}@export.test"), "FIRST_NAME": format!("N, {i}"), "AGE": 15 + i})).await;
    }
    let file = s.data_dir.join("adults.csv");
    let (wanted_filter, fields) = ("AGE>=18", "EMAIL,FIRST_NAME,AGE");
    s.herald(&["export", "--instance", "demo", "--filter", wanted_filter, "--fields", fields, "--output", file.to_str().unwrap()]).await;
    let (status, _, from_api) = export(&api, json!({"filter": wanted_filter, "fields": ["EMAIL", "FIRST_NAME", "AGE"]})).await;
    assert_eq!(status, 200);
    let written = std::fs::read_to_string(&file).unwrap();
    assert_eq!(written, from_api);
    assert_eq!(parse_csv(&written).len(), 1 + 22);
    let everyone = s.herald(&["export", "--instance", "demo", "--format", "ndjson"]).await;
    assert_eq!(everyone, export(&api, json!({"format": "ndjson"})).await.2);
    assert_eq!(everyone.lines().count(), 25);
}

/// `herald import`: the same import as the API's, run by the operator's process.
#[tokio::test]
async fn the_operators_import_writes_a_file_as_the_api_would() {
    let s = TestServer::start().await;
    let api = s.demo().await;
    api.create_recipient(json!({"USER_ID": 3, "EMAIL": "old@cli.test", "AGE": 50})).await;
    let file = s.data_dir.join("people.csv");
    std::fs::write(&file, "EMAIL,FIRST_NAME,AGE\nold@cli.test,Olga,51\nnew@cli.test,Nina,22\nbad@cli.test,Bo,many\n").unwrap();
    let out = s.herald(&["import", "--instance", "demo", "--key", "EMAIL", file.to_str().unwrap()]).await;
    assert!(out.contains("completed: 3 rows read, 1 created, 1 updated, 1 rejected"), "{out}");
    assert!(out.contains("row 4: Person Data field AGE expects a NUMBER, got 'many'"), "{out}");
    let olga = api.get("/recipients/3").await.json();
    assert_eq!((olga["personData"]["FIRST_NAME"].as_str(), olga["personData"]["AGE"].as_i64()), (Some("Olga"), Some(51)));
    let nina = api.get("/recipients/EMAIL=new%2540cli.test").await;
    assert_eq!(nina.expect(200).json()["personData"]["USER_ID"], 4);
    // The API lists it; resuming it finds nothing left to do.
    let listed = api.get("/imports").await.json();
    assert_eq!((listed[0]["state"].as_str(), listed[0]["created"].as_i64()), (Some("completed"), Some(1)), "{listed}");
    let id = listed[0]["importId"].as_str().unwrap();
    let again = s.herald(&["import", "--instance", "demo", "--resume", id]).await;
    assert!(again.contains(&format!("import {id} completed: 3 rows read")), "{again}");
}

async fn import(api: &Api, query: &str, content_type: &str, body: impl Into<herald_tests::reqwest::Body>) -> Answer {
    import_to(api, &format!("/recipients/:import{query}"), content_type, body).await
}

#[tokio::test]
async fn a_csv_import_upserts_by_its_key_and_keeps_the_rows_it_rejects() {
    let s = TestServer::start().await;
    let api = s.demo().await;
    api.create_recipient(json!({"USER_ID": 1, "EMAIL": "ann@import.test", "FIRST_NAME": "Old", "CITY": "Paris"})).await;
    // A BOM, CRLF line ends, quoted cells (a comma, doubled quotes, a line break), an empty cell
    // that clears, an empty Recipient Id that is numbered, a wrong type, a key twice, a unique
    // value another recipient holds, a short row.
    let file = "\u{FEFF}USER_ID,EMAIL,FIRST_NAME,CITY,AGE\r\n\
                1,ann@import.test,\"Smith, Ann\",,41\r\n\
                ,bob@import.test,\"Say \"\"hi\"\"\",Lyon,30\r\n\
                7,cy@import.test,\"Two\nlines\",Nice,old\r\n\
                8,dee@import.test,First,Paris,20\r\n\
                8,dee@import.test,Second,Paris,21\r\n\
                9,ann@import.test,Dup,Paris,1\r\n\
                10,eve@import.test,Short\r\n";
    let answer = import(&api, "", "text/csv; charset=utf-8", file).await;
    let id = started(&answer);
    let done = watch(&api, &id, Duration::from_secs(30), over).await;
    assert_eq!(done["state"], "completed", "{done}");
    let counts = ["rowsRead", "created", "updated", "rejected"].map(|k| done[k].as_i64().unwrap());
    assert_eq!(counts, [7, 2, 2, 3], "{done}");
    assert_eq!(done["bytesRead"], done["size"]);
    assert_eq!((done["format"].as_str(), done["key"].as_str(), done["triggers"].as_str()), (Some("csv"), Some("USER_ID"), Some("none")));

    let errors = api.get(&format!("/imports/{id}/errors")).await.json();
    let errors = errors.as_array().unwrap();
    let rows: Vec<(i64, Value)> = errors.iter().map(|e| (e["row"].as_i64().unwrap(), e["field"].clone())).collect();
    // The header is row 1; the quoted line break does not start a row.
    assert_eq!(rows, vec![(4, json!("AGE")), (7, json!("EMAIL")), (8, Value::Null)], "{errors:?}");
    assert!(errors[0]["message"].as_str().unwrap().contains("AGE expects a NUMBER, got 'old'"), "{errors:?}");
    assert!(errors[1]["message"].as_str().unwrap().contains("EMAIL 'ann@import.test' already exists"), "{errors:?}");
    assert!(errors[2]["message"].as_str().unwrap().contains("3 cells where the header has 5"), "{errors:?}");

    let person = |id: i64| {
        let api = api.clone();
        async move { api.get(&format!("/recipients/{id}")).await }
    };
    let ann = person(1).await.json();
    assert_eq!(ann["personData"]["FIRST_NAME"], "Smith, Ann");
    assert_eq!(ann["personData"]["CITY"], Value::Null, "an empty cell clears its field");
    assert_eq!(ann["personData"]["AGE"], 41);
    let bob = person(2).await.json();
    assert_eq!(
        (bob["personData"]["EMAIL"].as_str(), bob["personData"]["FIRST_NAME"].as_str()),
        (Some("bob@import.test"), Some("Say \"hi\""))
    );
    assert_eq!(person(8).await.json()["personData"]["FIRST_NAME"], "Second", "the later row wins");
    person(7).await.expect(404);
    person(9).await.expect(404);

    let listed = api.get("/imports").await.json();
    assert_eq!(listed[0]["importId"], id.as_str());
    // Another instance does not see it.
    let staging = s.staging().await;
    staging.get(&format!("/imports/{id}")).await.expect(404);
    staging.get(&format!("/imports/{id}/errors")).await.expect(404);
    assert_eq!(staging.get("/imports").await.json(), json!([]));
    // Over: it cannot be cancelled.
    let cancel = api.post_empty(&format!("/imports/{id}/:cancel")).await;
    cancel.expect(409);
    assert!(cancel.message().contains("already completed"), "{}", cancel.message());
}

#[tokio::test]
async fn rows_gathered_into_one_statement_end_as_row_by_row() {
    // No row conflicts, so the batch goes through on its fast path (multi-row statements): the
    // rows must still end as if written one by one, in order.
    let s = TestServer::start().await;
    let api = s.demo().await;
    api.create_recipient(json!({"USER_ID": 1, "EMAIL": "ann@fast.test", "FIRST_NAME": "Ann", "CITY": "Paris", "AGE": 40})).await;
    let file = "USER_ID,EMAIL,FIRST_NAME,CITY,AGE\n\
                1,ann@fast.test,Ann,Paris,40\n\
                20,bo@fast.test,Bo,Lyon,30\n\
                ,cy@fast.test,Cy,Nice,31\n\
                20,bo@fast.test,Bob,Lyon,30\n\
                ,di@fast.test,Di,,\n\
                1,ann@fast.test,Ann,Lille,40\n";
    let id = started(&import(&api, "", "text/csv", file).await);
    let done = watch(&api, &id, Duration::from_secs(30), over).await;
    let counts = ["rowsRead", "created", "updated", "rejected"].map(|k| done[k].as_i64().unwrap());
    assert_eq!(counts, [6, 3, 3, 0], "{done}");
    let person = |id: i64| {
        let api = api.clone();
        async move { api.get(&format!("/recipients/{id}")).await.json()["personData"].clone() }
    };
    assert_eq!(person(1).await["CITY"], "Lille", "the later update of a recipient wins");
    assert_eq!(person(20).await["FIRST_NAME"], "Bob", "a row updates what an earlier row of the file created");
    let cy = person(21).await;
    assert_eq!(cy["EMAIL"], "cy@fast.test", "numbered after the largest Recipient Id, one given in the same file: {cy}");
    let di = person(22).await;
    assert_eq!((di["EMAIL"].as_str(), di["CITY"].clone()), (Some("di@fast.test"), Value::Null), "{di}");
    assert_eq!(api.get("/recipients?filter=EMAIL==*%40fast.test").await.json().as_array().unwrap().len(), 4);
}

#[tokio::test]
async fn an_ndjson_import_keys_by_a_unique_field_and_clears_with_null() {
    let s = TestServer::start().await;
    let api = s.demo().await;
    api.create_recipient(json!({"USER_ID": 5, "EMAIL": "kim@import.test", "CITY": "Paris", "AGE": 30})).await;
    let file = [
        r#"{"personData": {"EMAIL": "kim@import.test", "CITY": null, "AGE": 31}}"#,
        "",
        r#"{"personData": {"EMAIL": "lou@import.test", "OPTIN": true, "BIRTHDATE": "1990-02-03"}}"#,
        r#"{"personData": {"EMAIL": "max@import.test", "SHOE": 44, "HAT": 2}}"#,
        r#"{"personData": {"EMAIL": "kim@import.test", "USER_ID": 6}}"#,
        "not json",
        r#"{"personData": {"EMAIL": "ned@import.test", "AGE": "forty"}}"#,
    ]
    .join("\n");
    let id = started(&import(&api, "?key=EMAIL&triggers=none", "application/x-ndjson", file).await);
    let done = watch(&api, &id, Duration::from_secs(30), over).await;
    let counts = ["rowsRead", "created", "updated", "rejected"].map(|k| done[k].as_i64().unwrap());
    assert_eq!(counts, [6, 1, 1, 4], "{done}");
    let errors = api.get(&format!("/imports/{id}/errors?limit=2")).await.json();
    assert_eq!(errors.as_array().unwrap().len(), 2, "a page of two");
    assert_eq!(errors[0]["row"], 4, "rows are lines, blank ones counted");
    assert!(errors[0]["message"].as_str().unwrap().contains("SHOE, HAT"), "{errors}");
    assert!(errors[1]["message"].as_str().unwrap().contains("cannot be changed"), "{errors}");
    let rest = api.get(&format!("/imports/{id}/errors?after=5")).await.json();
    assert_eq!(rest.as_array().unwrap().iter().map(|e| e["row"].as_i64().unwrap()).collect::<Vec<_>>(), vec![6, 7]);
    assert_eq!(rest[1]["field"], "AGE");

    let kim = api.get("/recipients/5").await.json();
    assert_eq!((kim["personData"]["CITY"].clone(), kim["personData"]["AGE"].clone()), (Value::Null, json!(31)));
    let lou = api.get("/recipients?filter=EMAIL==lou@import.test").await.json();
    assert_eq!(lou[0]["personData"]["OPTIN"], true, "{lou}");
    assert_eq!(lou[0]["personData"]["USER_ID"], 6, "numbered after the largest");
}

#[tokio::test]
async fn what_an_import_cannot_read_is_refused_before_anything_is_stored() {
    let s = TestServer::start_with(Settings { import_max_bytes: 64 * 1024, ..Settings::default() }).await;
    let api = s.demo().await;
    let csv = "text/csv";
    let unknown = import(&api, "", csv, "USER_ID,EMAIL,NICKNAME,SHOE_SIZE\n1,a@b.c,x,4\n").await;
    unknown.expect(400);
    assert!(unknown.message().contains("NICKNAME, SHOE_SIZE"), "every unknown name: {}", unknown.message());
    let twice = import(&api, "", csv, "EMAIL,EMAIL\n").await;
    assert!(twice.expect(400).message().contains("EMAIL twice"), "{}", twice.message());
    // A header alone, without a line end, is an import of no rows.
    let header_only = started(&import(&api, "?key=EMAIL", csv, "EMAIL,AGE").await);
    let done = watch(&api, &header_only, Duration::from_secs(30), over).await;
    assert_eq!((done["state"].as_str(), done["rowsRead"].as_i64()), (Some("completed"), Some(0)), "{done}");
    let keyless = import(&api, "?key=EMAIL", csv, "FIRST_NAME\nAnn\n").await;
    assert!(keyless.expect(400).message().contains("no EMAIL column"), "{}", keyless.message());
    assert!(import(&api, "", csv, "").await.expect(400).message().contains("empty"));
    let binary = import(&api, "", csv, vec![0x50u8, 0x4b, 0x03, 0x04, 0, 0, 0x14, 0]).await;
    assert!(binary.expect(400).message().contains("not text"), "{}", binary.message());
    let latin1 = import(&api, "", csv, b"FIRST_NAME\n\xe9lodie\n".to_vec()).await;
    assert!(latin1.expect(400).message().contains("not UTF-8"), "{}", latin1.message());
    let not_json = import(&api, "", "application/x-ndjson", "USER_ID,EMAIL\n1,a@b.c\n").await;
    assert!(not_json.expect(400).message().contains("not NDJSON"), "{}", not_json.message());
    import(&api, "", "application/pdf", "%PDF").await.expect(415);
    import(&api, "", "text/csv; charset=iso-8859-1", "EMAIL\n").await.expect(415);
    assert!(import(&api, "?key=FIRST_NAME", csv, "FIRST_NAME\n").await.expect(400).message().contains("not unique"));
    assert!(import(&api, "?triggers=all", csv, "EMAIL\n").await.expect(400).message().contains("'triggers'"));
    assert!(import(&api, "?keys=EMAIL", csv, "EMAIL\n").await.expect(400).message().contains("keys"));

    // Over the limit: refused when the length is declared, and when it is not (chunked).
    let big = format!("EMAIL\n{}", "x@import.test\n".repeat(6000));
    let declared = import(&api, "", csv, big.clone()).await;
    assert!(declared.expect(413).message().contains("at most 65536 bytes"), "{}", declared.message());
    let chunks: Vec<Result<String, std::io::Error>> =
        big.as_bytes().chunks(8192).map(|c| Ok(String::from_utf8(c.to_vec()).unwrap())).collect();
    let streamed = import(&api, "", csv, herald_tests::reqwest::Body::wrap_stream(futures_util::stream::iter(chunks))).await;
    streamed.expect(413);
    let kept: Vec<Value> = api.get("/imports").await.json().as_array().unwrap().clone();
    assert_eq!(kept.iter().map(|i| i["importId"].clone()).collect::<Vec<_>>(), vec![json!(header_only)], "nothing of the refused is kept");
    api.get("/imports/0123456789abcdef0123456789abcdef").await.expect(404);
}

#[tokio::test]
async fn a_cancelled_import_writes_no_more() {
    let s = TestServer::start().await;
    let api = s.demo().await;
    let mut file = String::from("EMAIL,AGE\n");
    for i in 0..60_000 {
        file.push_str(&format!("c{i}@cancel.test,{}\n", i % 90));
    }
    let id = started(&import(&api, "?key=EMAIL", "text/csv", file).await);
    let cancelled = api.post_empty(&format!("/imports/{id}/:cancel")).await;
    cancelled.expect(200);
    assert_eq!(cancelled.json()["state"], "cancelled");
    let first = watch(&api, &id, Duration::from_secs(10), over).await;
    tokio::time::sleep(Duration::from_millis(2500)).await;
    let later = api.get(&format!("/imports/{id}")).await.json();
    assert_eq!(later, first, "nothing moves once cancelled");
    assert!(later["finishedAt"].is_string());
    let exported =
        api.request(Method::POST, "/recipients/:export").json(&json!({"filter": "EMAIL=like=*@cancel.test", "fields": ["EMAIL"]}));
    let written = exported.send().await.unwrap().text().await.unwrap().lines().count() as i64 - 1;
    assert_eq!(written, later["created"].as_i64().unwrap(), "what it counts is what it wrote");
    assert!(written < 60_000, "cancelled before its end");
}

/// A server killed in the middle of an import of 200,000 rows: restarted, it goes on from the
/// batch it had reached, and every row is applied once (a row applied twice would count as an
/// update).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_killed_server_resumes_an_import_and_applies_every_row_once() {
    let dir = tempfile::tempdir().unwrap();
    let database = TestDatabase::create().await;
    let url = database.as_ref().map(|d| d.url.as_str());
    let server = ServerProcess::start(dir.path(), url, &herald_tests::process::UNLIMITED_RATE).await;
    let api = Api::login(&server.base, "demo-public-key", "demo-public-secret").await;
    let mut file = String::from("USER_ID,EMAIL,FIRST_NAME,AGE\n");
    for i in 1..=200_000 {
        file.push_str(&format!("{i},p{i}@resume.test,Name {i},{}\n", i % 100));
    }
    let id = started(&import(&api, "", "text/csv", file).await);
    let before = watch(&api, &id, Duration::from_secs(120), |i| i["rowsRead"].as_i64().unwrap() >= 10_000 || over(i)).await;
    assert_eq!(before["state"], "running", "killed in the middle: {before}");
    server.kill();

    let server = ServerProcess::start(dir.path(), url, &herald_tests::process::UNLIMITED_RATE).await;
    let api = Api::login(&server.base, "demo-public-key", "demo-public-secret").await;
    let done = watch(&api, &id, Duration::from_secs(300), over).await;
    let counts = ["rowsRead", "created", "updated", "rejected"].map(|k| done[k].as_i64().unwrap());
    assert_eq!((done["state"].as_str(), counts), (Some("completed"), [200_000, 200_000, 0, 0]), "{done}");
    let exported = api.request(Method::POST, "/recipients/:export").json(&json!({"fields": ["USER_ID"]})).send().await.unwrap();
    let ids: Vec<String> = exported.text().await.unwrap().lines().skip(1).map(String::from).collect();
    assert_eq!(ids.len(), 200_000);
    assert_eq!(ids.last().map(String::as_str), Some("200000"));
}

/// The docs' import example, run as written against a server (with its `B` and `TOKEN`).
#[tokio::test]
async fn the_docs_import_example_works_as_written() {
    let s = TestServer::start().await;
    let api = s.demo().await;
    let docs = std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/../docs/api.md")).unwrap();
    let section = &docs[docs.find("## Bulk import").expect("the section")..];
    let block = &section[section.find("```sh\n").unwrap() + 6..];
    let block = &block[..block.find("```").unwrap()];
    let dir = tempfile::tempdir().unwrap();
    let token = api.auth.strip_prefix("Bearer ").unwrap();
    let mut command = std::process::Command::new("bash");
    command.arg("-ec").arg(block).current_dir(dir.path()).env("B", &api.base).env("TOKEN", token);
    // Off the runtime's thread: the server answering the script runs on it.
    let output = tokio::task::spawn_blocking(move || command.output().unwrap()).await.unwrap();
    let stdout = String::from_utf8_lossy(&output.stdout);
    assert!(output.status.success(), "{stdout}{}", String::from_utf8_lossy(&output.stderr));
    assert!(stdout.contains("\"importId\""), "{stdout}");
    assert!(stdout.contains("\"state\":\"completed\""), "{stdout}");
    let zoe = api.get("/recipients/EMAIL=zoe%2540example.com").await;
    assert_eq!(zoe.expect(200).json()["personData"]["AGE"], 28);
}

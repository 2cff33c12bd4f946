//! Bulk transfer (issue 38): `POST /recipients/:export` streams what a filter selects as CSV or
//! NDJSON, equal to what the API reads, with its values quoted as RFC 4180 wants.

use herald_tests::reqwest::{header, Method};
use herald_tests::{json, Api, TestServer};
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
    let r = api.request(Method::POST, "/recipients/:export").json(&body).send().await.unwrap();
    let status = r.status().as_u16();
    let kind = r.headers().get(header::CONTENT_TYPE).map(|v| v.to_str().unwrap().to_string()).unwrap_or_default();
    (status, kind, r.text().await.unwrap())
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
    assert_eq!(export(&api, json!({"fields": []})).await.0, 400);
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

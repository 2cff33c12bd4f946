//! The API's OpenAPI documents as a client meets them: the platform's at `/openapi.json` without
//! credentials, the instance's at `/discovery/openapi.json` with its data model written in, and
//! both answering every operation with what a call of it answers. (The documents' validity and
//! the server's conformance to them are checked by `scripts/contract.sh`: openapi-spec-validator
//! and schemathesis, in the test command.)

use herald_tests::{json, TestServer};
use serde_json::Value;

async fn platform(s: &TestServer) -> Value {
    let r = s.client.get(format!("{}/openapi.json", s.base)).send().await.unwrap();
    assert_eq!(r.status(), 200, "the platform's document needs no credentials");
    assert_eq!(r.headers()["content-type"], "application/json; charset=utf-8");
    r.json().await.unwrap()
}

fn references<'a>(value: &'a Value, out: &mut Vec<&'a str>) {
    match value {
        Value::Object(map) => map.iter().for_each(|(k, v)| match (k.as_str(), v.as_str()) {
            ("$ref", Some(target)) => out.push(target),
            _ => references(v, out),
        }),
        Value::Array(items) => items.iter().for_each(|v| references(v, out)),
        _ => {}
    }
}

#[tokio::test]
async fn the_platform_document_describes_every_part_with_its_security() {
    let s = TestServer::start().await;
    let doc = platform(&s).await;
    assert_eq!(doc["openapi"], "3.1.0");
    let paths = doc["paths"].as_object().unwrap();
    for (method, path) in [
        ("post", "/oauth2/token"),
        ("get", "/recipients"),
        ("put", "/recipients/{recipientId}"),
        ("post", "/recipients/{recipientId}/events/{eventId}/:achieveEvent"),
        ("post", "/globaldata/tables/{tableName}/:truncateTable"),
        ("put", "/assets/extensions"),
        ("get", "/extensions/open/{customerId}/{extensionId}/{path}"),
        ("put", "/flows/{name}"),
        ("get", "/discovery/openapi.json"),
    ] {
        assert!(paths.get(path).and_then(|p| p.get(method)).is_some(), "{method} {path} is described");
    }
    let security = |method: &str, path: &str| doc["paths"][path][method]["security"].clone();
    assert_eq!(security("get", "/recipients"), json!([{"oauth2": []}, {"basic": []}]));
    assert_eq!(security("post", "/oauth2/token"), json!([]));
    assert_eq!(security("post", "/extensions/open/{customerId}/{extensionId}"), json!([]));
    assert_eq!(doc["components"]["securitySchemes"]["oauth2"]["flows"]["clientCredentials"]["tokenUrl"], "/oauth2/token");
    // The layers' answers are on every guarded operation, with Retry-After where it is sent.
    let responses = &doc["paths"]["/recipients/{recipientId}"]["get"]["responses"];
    for status in ["200", "400", "401", "403", "404", "406", "413", "429", "503"] {
        assert!(responses.get(status).is_some(), "GET /recipients/{{recipientId}} lists {status}");
    }
    assert!(responses["429"]["headers"]["Retry-After"].is_object());
    assert_eq!(responses["400"]["content"]["application/json"]["schema"]["$ref"], "#/components/schemas/Message");
    // Operation ids are unique, and every reference resolves.
    let mut ids: Vec<&str> =
        paths.values().flat_map(|p| p.as_object().unwrap().values()).map(|o| o["operationId"].as_str().unwrap()).collect();
    let count = ids.len();
    ids.sort();
    ids.dedup();
    assert_eq!(ids.len(), count, "operation ids are unique");
    let mut refs = Vec::new();
    references(&doc, &mut refs);
    for r in refs {
        assert!(doc.pointer(&r.replacen('#', "", 1)).is_some(), "{r} resolves");
    }
}

#[tokio::test]
async fn the_instance_document_carries_the_instances_fields_and_tables() {
    let s = TestServer::start().await;
    let demo = s.demo().await;
    let doc = demo.get("/discovery/openapi.json").await.expect(200).json();
    // Person Data: every field of the instance's definition, typed, and no other.
    let fields = demo.get("/discovery/persondata").await.expect(200).json();
    let person = &doc["components"]["schemas"]["PersonData"];
    assert_eq!(person["additionalProperties"], false);
    let properties = person["properties"].as_object().unwrap();
    assert_eq!(properties.len(), fields["fields"].as_array().unwrap().len());
    for field in fields["fields"].as_array().unwrap() {
        let name = field["name"].as_str().unwrap();
        let expected = match field["type"].as_str().unwrap() {
            // A numeric Recipient Id is a whole number (the server assigns the next free one).
            "NUMBER" if name == fields["recipientId"] => "integer",
            "NUMBER" => "number",
            "BOOLEAN" => "boolean",
            _ => "string",
        };
        assert_eq!(properties[name]["type"], json!([expected, "null"]), "{name}");
    }
    // A path per One-To-Many table, its records typed by the table's schema.
    for table in demo.get("/discovery/onetomany").await.expect(200).json().as_array().unwrap() {
        let table = table.as_str().unwrap();
        let path = format!("/recipients/{{recipientId}}/oneToManyTables/{table}");
        let items = &doc["paths"][&path]["get"]["responses"]["200"]["content"]["application/json"]["schema"]["items"]["$ref"];
        assert_eq!(items, &json!(format!("#/components/schemas/OneToMany_{table}")), "{path}");
        let definition = demo.get(&format!("/discovery/onetomany/{table}")).await.expect(200).json();
        let schema = &doc["components"]["schemas"][format!("OneToMany_{table}")]["properties"];
        for field in definition["fields"].as_array().unwrap() {
            assert!(schema.get(field["name"].as_str().unwrap()).is_some(), "{table}.{} is described", field["name"]);
        }
    }
    assert!(doc["paths"].get("/recipients/{recipientId}/oneToManyTables/{tableName}").is_none(), "no untyped table path");
    // The names the instance defines are the enums of their parameters.
    let achieve = &doc["paths"]["/recipients/{recipientId}/events/{eventId}/:achieveEvent"]["post"]["parameters"];
    let event = achieve.as_array().unwrap().iter().find(|p| p["name"] == "eventId").unwrap();
    assert!(!event["schema"]["enum"].as_array().unwrap().is_empty());
    let mut refs = Vec::new();
    references(&doc, &mut refs);
    for r in refs {
        assert!(doc.pointer(&r.replacen('#', "", 1)).is_some(), "{r} resolves");
    }
    // A created recipient links to the calls on it, each an operation of the document.
    let ids: Vec<&str> = doc["paths"]
        .as_object()
        .unwrap()
        .values()
        .flat_map(|p| p.as_object().unwrap().values())
        .map(|o| o["operationId"].as_str().unwrap())
        .collect();
    let links = doc["paths"]["/recipients"]["post"]["responses"]["201"]["links"].as_object().unwrap();
    assert!(links.len() > 10, "{} links", links.len());
    for link in links.values() {
        assert!(ids.contains(&link["operationId"].as_str().unwrap()), "{link} names an operation");
        assert_eq!(link["parameters"]["recipientId"], "$response.body#/personData/USER_ID");
    }
    // The platform's document is the same frame without the instance's model.
    let platform = platform(&s).await;
    assert!(platform["paths"].get("/recipients/{recipientId}/oneToManyTables/{tableName}").is_some());
    assert!(platform["components"]["schemas"]["PersonData"].get("properties").is_none());
}

#[tokio::test]
async fn the_instance_document_needs_the_instances_public_credential() {
    let s = TestServer::start().await;
    let anonymous = s.client.get(format!("{}/discovery/openapi.json", s.base)).send().await.unwrap();
    assert_eq!(anonymous.status(), 401);
    let app = s.api("demo-app-key", "demo-app-secret").await;
    app.get("/discovery/openapi.json").await.expect(403);
    let staging = s.staging().await.get("/discovery/openapi.json").await.expect(200).json();
    assert!(staging["info"]["description"].as_str().unwrap().contains("for one instance"));
}

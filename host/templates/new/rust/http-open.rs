//! {{name}}: an open http extension (a webhook: called without credentials, so it may write but
//! not read recipients). `POST /` with `{"email": "...", "first_name": "...", "purchases": [{"id":
//! "...", "product": "...", "amount": 12.5, "at": "2026-11-27T10:00:00.000Z"}]}` upserts the
//! recipient with that EMAIL and its PURCHASES records (by their ID: a call delivered twice
//! leaves the same data), and answers its USER_ID.

use herald_sdk::http::{Handler, Request, Response};
use herald_sdk::{log, recipients, Record, Value};

herald_sdk::config!(open: true, timeout_ms: 5000);

struct Extension;

impl Handler for Extension {
    fn handle(request: Request) -> Response {
        if request.method != "POST" {
            return Response::json(405, &serde_json::json!({"message": "POST a contact"}));
        }
        let payload = match request.json() {
            Ok(payload) => payload,
            Err(e) => return Response::json(400, &serde_json::json!({"message": e})),
        };
        let Some(email) = payload["email"].as_str() else {
            return Response::json(400, &serde_json::json!({"message": "email is required"}));
        };
        let mut person = Record::new().with("EMAIL", email);
        if let Some(name) = payload["first_name"].as_str() {
            person = person.with("FIRST_NAME", name);
        }
        let stored = match recipients::upsert(person) {
            Ok(stored) => stored,
            Err(e) => return Response::json(400, &serde_json::json!({"message": e.to_string()})),
        };
        let purchases: Vec<Record> = payload["purchases"]
            .as_array()
            .into_iter()
            .flatten()
            .map(|p| {
                let id = p["id"].as_str().map(str::to_string).unwrap_or_else(|| p["id"].to_string());
                Record::new()
                    .with("ID", id.as_str())
                    .with("PRODUCT", Value::from_json(&p["product"]).unwrap_or(Value::Null))
                    .with("AMOUNT", Value::from_json(&p["amount"]).unwrap_or(Value::Null))
                    .with("PURCHASED_AT", Value::from_json(&p["at"]).unwrap_or(Value::Null))
            })
            .collect();
        let user_id = stored.get("USER_ID").cloned().unwrap_or(Value::Null);
        let written = if purchases.is_empty() {
            0
        } else {
            match recipients::upsert_records("USER_ID", user_id, "PURCHASES", purchases) {
                Ok(written) => written,
                Err(e) => return Response::json(400, &serde_json::json!({"message": e.to_string()})),
            }
        };
        log::info(&format!("contact {email} stored with {written} purchases"));
        Response::json(200, &serde_json::json!({"recipient": stored.to_json()["USER_ID"], "purchases": written}))
    }
}

herald_sdk::http_extension!(Extension);

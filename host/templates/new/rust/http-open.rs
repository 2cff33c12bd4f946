//! {{name}}: an open http extension (a webhook: called without credentials, so it may write but
//! not read recipients). `POST /` with `{"email": "...", "first_name": "..."}` upserts the
//! recipient with that EMAIL and answers its USER_ID.

use herald_sdk::http::{Handler, Request, Response};
use herald_sdk::{log, recipients, Record};

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
        match recipients::upsert(person) {
            Ok(stored) => {
                log::info(&format!("contact {email} stored"));
                Response::json(200, &serde_json::json!({"recipient": stored.to_json()["USER_ID"]}))
            }
            Err(e) => Response::json(400, &serde_json::json!({"message": e.to_string()})),
        }
    }
}

herald_sdk::http_extension!(Extension);

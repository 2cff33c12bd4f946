//! {{name}}: a secure http extension (called with the instance's credentials). `GET /?email=...`
//! answers the recipient with that EMAIL as JSON, 404 when there is none.

use herald_sdk::http::{Handler, Request, Response};
use herald_sdk::recipients;

herald_sdk::config!(timeout_ms: 5000);

struct Extension;

impl Handler for Extension {
    fn handle(request: Request) -> Response {
        let Some(email) = request.query("email") else {
            return Response::json(400, &serde_json::json!({"message": "give ?email="}));
        };
        match recipients::get("EMAIL", email.as_str()) {
            Ok(Some(recipient)) => Response::json(200, &recipient.to_json()),
            Ok(None) => Response::json(404, &serde_json::json!({"message": format!("no recipient {email}")})),
            Err(e) => Response::json(500, &serde_json::json!({"message": e.to_string()})),
        }
    }
}

herald_sdk::http_extension!(Extension);

//! An http extension (written with herald-sdk) that calls the URL it is given (`?url=`,
//! percent-encoded) and answers `{"status", "body"}` or `{"error"}`. Whatever authheader
//! extension is bound to the URL's host adds its headers on the way out; this extension never
//! sees them.

use herald_sdk::client;
use herald_sdk::http::{Handler, Request, Response};

herald_sdk::config!(allowed_hosts: ["127.0.0.1", "localhost"]);

struct CrmCall;

impl Handler for CrmCall {
    fn handle(request: Request) -> Response {
        let Some(url) = request.query("url") else { return Response::text(400, "?url= is missing") };
        match client::get(&url) {
            Ok(answer) => Response::json(200, &serde_json::json!({"status": answer.status, "body": answer.text()})),
            Err(e) => Response::json(200, &serde_json::json!({"error": e})),
        }
    }
}

herald_sdk::http_extension!(CrmCall);

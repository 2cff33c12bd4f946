//! A secure http extension written with herald-sdk: a small recipient API of its own.
//!
//! - `GET /{email}`: the recipient, 404 when there is none;
//! - `POST /` with `{"personData": {...}}`: creates it (201), 409 when it exists;
//! - `PUT /{email}` with `{"personData": {...}}`: updates it (200), 404 when there is none.

use herald_sdk::http::{Handler, Request, Response};
use herald_sdk::{recipients, Error, Record};

herald_sdk::config!(timeout_ms: 5000);

struct Admin;

impl Handler for Admin {
    fn handle(request: Request) -> Response {
        let email = request.path().trim_start_matches('/').to_string();
        let outcome = match (request.method.as_str(), email.is_empty()) {
            ("GET", false) => recipients::get("EMAIL", email.as_str()).map(|found| match found {
                Some(r) => Response::json(200, &r.to_json()),
                None => Response::empty(404),
            }),
            ("POST", true) => match person_data(&request) {
                Ok(data) => recipients::create(data).map(|r| Response::json(201, &r.to_json())),
                Err(bad) => return bad,
            },
            ("PUT", false) => match person_data(&request) {
                Ok(data) => recipients::update("EMAIL", email.as_str(), data).map(|r| Response::json(200, &r.to_json())),
                Err(bad) => return bad,
            },
            _ => return Response::empty(405),
        };
        outcome.unwrap_or_else(|e| match e {
            Error::NotFound => Response::empty(404),
            Error::Conflict(m) => Response::json(409, &serde_json::json!({ "message": m })),
            Error::Invalid(m) => Response::json(400, &serde_json::json!({ "message": m })),
            other => Response::json(500, &serde_json::json!({ "message": other.to_string() })),
        })
    }
}

fn person_data(request: &Request) -> Result<Record, Response> {
    let body = request.json().map_err(|m| Response::json(400, &serde_json::json!({ "message": m })))?;
    Ok(Record::from_json(&body["personData"]))
}

herald_sdk::http_extension!(Admin);

//! An open webhook for a third-party shop: it parses the shop's JSON payload
//! (`{"email", "firstName", "purchases": [{"id", "product", "amount"}]}`), upserts the recipient
//! by e-mail and its PURCHASES records, and answers `{"userId", "purchases"}`. It writes only: it
//! does not import the read interface, as an open extension must not.

include!("../../common.rs");

use herald::platform::types::{Field, Value};
use herald::platform::{log, recipients_write};
use wasip2::http::types::{IncomingRequest, ResponseOutparam};

#[used]
#[link_section = "herald:config"]
static HERALD_CONFIG: [u8; 14] = *br#"{"open": true}"#;

wasip2::http::proxy::export!(Webhook);

struct Webhook;

fn text(v: &serde_json::Value) -> Value {
    v.as_str().map(|s| Value::Text(s.to_string())).unwrap_or(Value::Null)
}

fn handle(payload: &serde_json::Value) -> Result<serde_json::Value, String> {
    let email = payload["email"].as_str().ok_or("the payload needs an email")?;
    let stored = recipients_write::upsert(&[
        Field { name: "EMAIL".into(), value: Value::Text(email.into()) },
        Field { name: "FIRST_NAME".into(), value: text(&payload["firstName"]) },
    ])
    .map_err(|e| format!("{e:?}"))?;
    let user_id = stored.iter().find(|f| f.name == "USER_ID").and_then(|f| match f.value {
        Value::Number(n) => Some(n),
        _ => None,
    });
    let records: Vec<Vec<Field>> = payload["purchases"]
        .as_array()
        .map(|items| {
            items
                .iter()
                .map(|p| {
                    vec![
                        Field { name: "ID".into(), value: text(&p["id"]) },
                        Field { name: "PRODUCT".into(), value: text(&p["product"]) },
                        // Passed on as given: the instance's data model decides what fits.
                        Field {
                            name: "AMOUNT".into(),
                            value: p["amount"].as_f64().map(Value::Number).unwrap_or_else(|| text(&p["amount"])),
                        },
                    ]
                })
                .collect()
        })
        .unwrap_or_default();
    let count =
        recipients_write::upsert_records("EMAIL", &Value::Text(email.into()), "PURCHASES", &records).map_err(|e| format!("{e:?}"))?;
    log::log(log::Level::Info, &format!("upserted {email} with {count} purchases"));
    Ok(serde_json::json!({ "userId": user_id, "purchases": count }))
}

impl wasip2::exports::http::incoming_handler::Guest for Webhook {
    fn handle(request: IncomingRequest, out: ResponseOutparam) {
        let body = read_body(&request);
        match serde_json::from_slice::<serde_json::Value>(&body).map_err(|e| e.to_string()).and_then(|p| handle(&p)) {
            Ok(done) => answer(out, 200, &done),
            Err(message) => answer(out, 400, &serde_json::json!({ "message": message })),
        }
    }
}

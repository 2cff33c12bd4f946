//! A secure extension over the STORES Global Data Table: `POST {"id", "name", "city"}` upserts a
//! store; `GET ?city=Paris` answers `{"stores": [names], "context": null}` (http calls carry no
//! contextual data).

include!("../../common.rs");
include!("../../query.rs");

use herald::platform::types::{Field, Value};
use herald::platform::{context, tables};
use wasip2::http::types::{IncomingRequest, Method, ResponseOutparam};

wasip2::http::proxy::export!(Locator);

struct Locator;

fn text(v: &serde_json::Value) -> Value {
    v.as_str().map(|s| Value::Text(s.to_string())).unwrap_or(Value::Null)
}

impl wasip2::exports::http::incoming_handler::Guest for Locator {
    fn handle(request: IncomingRequest, out: ResponseOutparam) {
        if matches!(request.method(), Method::Post) {
            let body: serde_json::Value = serde_json::from_slice(&read_body(&request)).unwrap_or_default();
            let store = [
                Field { name: "ID".into(), value: text(&body["id"]) },
                Field { name: "NAME".into(), value: text(&body["name"]) },
                Field { name: "CITY".into(), value: text(&body["city"]) },
            ];
            return match tables::upsert("STORES", &store) {
                Ok(()) => answer(out, 200, &serde_json::json!({ "stored": body["id"] })),
                Err(e) => answer(out, 400, &serde_json::json!({ "message": format!("{e:?}") })),
            };
        }
        let city = query_param(&request.path_with_query().unwrap_or_default(), "city").unwrap_or_default();
        match tables::find("STORES", &format!("CITY==\"{city}\""), 100) {
            Ok(found) => {
                let names: Vec<String> = found
                    .iter()
                    .filter_map(|r| r.iter().find(|f| f.name == "NAME"))
                    .filter_map(|f| match &f.value {
                        Value::Text(t) => Some(t.clone()),
                        _ => None,
                    })
                    .collect();
                answer(out, 200, &serde_json::json!({ "stores": names, "context": context::data() }));
            }
            Err(e) => answer(out, 400, &serde_json::json!({ "message": format!("{e:?}") })),
        }
    }
}

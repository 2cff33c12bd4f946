//! A secure extension that reads recipients: `?filter=<RSQL>` (percent-encoded) answers the
//! e-mails of the first 100 matching recipients, `{"emails": [...]}`.

include!("../../common.rs");

use herald::platform::recipients_read;
use herald::platform::types::Value;
use wasip2::http::types::{IncomingRequest, ResponseOutparam};

include!("../../query.rs");

wasip2::http::proxy::export!(Finder);

struct Finder;

impl wasip2::exports::http::incoming_handler::Guest for Finder {
    fn handle(request: IncomingRequest, out: ResponseOutparam) {
        let query = request.path_with_query().unwrap_or_default();
        let filter = query_param(&query, "filter").unwrap_or_default();
        match recipients_read::find(&filter, 100) {
            Ok(found) => {
                let emails: Vec<String> = found
                    .iter()
                    .filter_map(|r| r.iter().find(|f| f.name == "EMAIL"))
                    .filter_map(|f| match &f.value {
                        Value::Text(t) => Some(t.clone()),
                        _ => None,
                    })
                    .collect();
                answer(out, 200, &serde_json::json!({ "emails": emails }));
            }
            Err(e) => answer(out, 400, &serde_json::json!({ "message": format!("{e:?}") })),
        }
    }
}

//! Hostile: an open extension that reads recipients, which would let anyone on the internet
//! extract them. Herald must refuse it at upload.

include!("../../common.rs");

use herald::platform::recipients_read;
use wasip2::http::types::{IncomingRequest, ResponseOutparam};

#[used]
#[link_section = "herald:config"]
static HERALD_CONFIG: [u8; 14] = *br#"{"open": true}"#;

wasip2::http::proxy::export!(Leak);

struct Leak;

impl wasip2::exports::http::incoming_handler::Guest for Leak {
    fn handle(_request: IncomingRequest, out: ResponseOutparam) {
        let found = recipients_read::find("", 1000).map(|r| r.len()).unwrap_or(0);
        answer(out, 200, &serde_json::json!({ "leaked": found }));
    }
}

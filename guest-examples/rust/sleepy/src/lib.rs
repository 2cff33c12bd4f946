//! An open extension that waits `?ms=` milliseconds (on the host's clock, without using the CPU)
//! and answers 200: a slow call, for the tests of limits.

use std::io::Write as _;

use wasip2::http::types::{Fields, IncomingRequest, OutgoingBody, OutgoingResponse, ResponseOutparam};

#[used]
#[link_section = "herald:config"]
static HERALD_CONFIG: [u8; 14] = *br#"{"open": true}"#;

include!("../../query.rs");

wasip2::http::proxy::export!(Sleepy);

struct Sleepy;

impl wasip2::exports::http::incoming_handler::Guest for Sleepy {
    fn handle(request: IncomingRequest, response_out: ResponseOutparam) {
        let query = request.path_with_query().unwrap_or_default();
        let ms: u64 = query_param(&query, "ms").and_then(|v| v.parse().ok()).unwrap_or(0);
        std::thread::sleep(std::time::Duration::from_millis(ms));
        let response = OutgoingResponse::new(Fields::new());
        let out = response.body().expect("body");
        ResponseOutparam::set(response_out, Ok(response));
        let mut stream = out.write().expect("stream");
        stream.write_all(b"slept").expect("write");
        stream.flush().expect("flush");
        drop(stream);
        OutgoingBody::finish(out, None).expect("finish");
    }
}

//! Calls the URL given as `?url=` (percent-encoded) with wasi:http/outgoing-handler and answers
//! with what happened: `status <code>` or `error <code>`. It declares one host, 127.0.0.1, so
//! calls anywhere else must be refused by Herald.

use std::io::Write as _;

use wasip2::http::outgoing_handler;
use wasip2::http::types::{Fields, IncomingRequest, OutgoingBody, OutgoingRequest, OutgoingResponse, ResponseOutparam, Scheme};

#[used]
#[link_section = "herald:config"]
static HERALD_CONFIG: [u8; 32] = *br#"{"allowed_hosts": ["127.0.0.1"]}"#;

include!("../../query.rs");

wasip2::http::proxy::export!(Fetch);

struct Fetch;

fn fetch(url: &str) -> String {
    let rest = url.strip_prefix("http://").unwrap_or(url);
    let (authority, path) = match rest.find('/') {
        Some(i) => (&rest[..i], &rest[i..]),
        None => (rest, "/"),
    };
    let request = OutgoingRequest::new(Fields::new());
    let _ = request.set_scheme(Some(&Scheme::Http));
    let _ = request.set_authority(Some(authority));
    let _ = request.set_path_with_query(Some(path));
    match outgoing_handler::handle(request, None) {
        Err(code) => format!("error {code:?}"),
        Ok(future) => {
            future.subscribe().block();
            match future.get() {
                Some(Ok(Ok(response))) => format!("status {}", response.status()),
                Some(Ok(Err(code))) => format!("error {code:?}"),
                other => format!("error {other:?}"),
            }
        }
    }
}

impl wasip2::exports::http::incoming_handler::Guest for Fetch {
    fn handle(request: IncomingRequest, response_out: ResponseOutparam) {
        let query = request.path_with_query().unwrap_or_default();
        let url = query_param(&query, "url").unwrap_or_default();
        let outcome = fetch(&url);
        let response = OutgoingResponse::new(Fields::new());
        let out = response.body().expect("body");
        ResponseOutparam::set(response_out, Ok(response));
        let mut stream = out.write().expect("stream");
        stream.write_all(outcome.as_bytes()).expect("write");
        stream.flush().expect("flush");
        drop(stream);
        OutgoingBody::finish(out, None).expect("finish");
    }
}

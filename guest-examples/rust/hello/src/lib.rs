//! The benchmark's trivial extension: a plain wasi:http component (it runs unchanged under
//! `wasmtime serve`) that answers 200 `hello`. Open, so Herald serves it without credentials.

use std::io::Write as _;

use wasip2::http::types::{Fields, IncomingRequest, OutgoingBody, OutgoingResponse, ResponseOutparam};

#[cfg(not(feature = "reuse"))]
#[used]
#[link_section = "herald:config"]
static HERALD_CONFIG: [u8; 14] = *br#"{"open": true}"#;

/// The benchmark's reused variant (`--features reuse`): one instance serves up to 1000 calls.
#[cfg(feature = "reuse")]
#[used]
#[link_section = "herald:config"]
static HERALD_CONFIG: [u8; 35] = *br#"{"open": true, "reuse_calls": 1000}"#;

wasip2::http::proxy::export!(Hello);

struct Hello;

impl wasip2::exports::http::incoming_handler::Guest for Hello {
    fn handle(_request: IncomingRequest, response_out: ResponseOutparam) {
        let headers = Fields::from_list(&[("content-type".to_string(), b"text/plain".to_vec())]).expect("headers");
        let response = OutgoingResponse::new(headers);
        let body = response.body().expect("body");
        ResponseOutparam::set(response_out, Ok(response));
        let mut stream = body.write().expect("stream");
        stream.write_all(b"hello").expect("write");
        stream.flush().expect("flush");
        drop(stream);
        OutgoingBody::finish(body, None).expect("finish");
    }
}

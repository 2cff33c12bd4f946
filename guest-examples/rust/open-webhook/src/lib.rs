//! An open extension: third-party systems call it without credentials. It answers 202 with the
//! size of the payload it received.

use std::io::{Read as _, Write as _};

use wasip2::http::types::{Fields, IncomingRequest, OutgoingBody, OutgoingResponse, ResponseOutparam};

/// Herald reads the extension's configuration from this custom section.
#[used]
#[link_section = "herald:config"]
static HERALD_CONFIG: [u8; 14] = *br#"{"open": true}"#;

wasip2::http::proxy::export!(Webhook);

struct Webhook;

impl wasip2::exports::http::incoming_handler::Guest for Webhook {
    fn handle(request: IncomingRequest, response_out: ResponseOutparam) {
        let mut body = Vec::new();
        if let Ok(incoming) = request.consume() {
            if let Ok(mut stream) = incoming.stream() {
                let _ = stream.read_to_end(&mut body);
            }
        }
        let response = OutgoingResponse::new(Fields::new());
        response.set_status_code(202).expect("valid status");
        let out = response.body().expect("body");
        ResponseOutparam::set(response_out, Ok(response));
        let mut stream = out.write().expect("stream");
        stream.write_all(format!("{{\"received\":{}}}", body.len()).as_bytes()).expect("write");
        stream.flush().expect("flush");
        drop(stream);
        OutgoingBody::finish(out, None).expect("finish");
    }
}

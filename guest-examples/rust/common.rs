// Shared by the guests that use herald:platform (included with `include!`): the bindings and a
// helper to answer an http call.

wit_bindgen::generate!({
    path: "../../../wit",
    world: "herald:platform/imports",
    generate_all,
});

use std::io::Write as _;

use wasip2::http::types::{Fields, OutgoingBody, OutgoingResponse};

/// Answers with `status` and a JSON body.
fn answer(out: wasip2::http::types::ResponseOutparam, status: u16, body: &serde_json::Value) {
    let headers = Fields::from_list(&[("content-type".to_string(), b"application/json".to_vec())]).expect("valid headers");
    let response = OutgoingResponse::new(headers);
    response.set_status_code(status).expect("valid status");
    let stream_body = response.body().expect("body");
    wasip2::http::types::ResponseOutparam::set(out, Ok(response));
    let mut stream = stream_body.write().expect("stream");
    stream.write_all(body.to_string().as_bytes()).expect("write");
    stream.flush().expect("flush");
    drop(stream);
    OutgoingBody::finish(stream_body, None).expect("finish");
}

/// The request's body, read whole.
#[allow(dead_code)]
fn read_body(request: &wasip2::http::types::IncomingRequest) -> Vec<u8> {
    use std::io::Read as _;
    let mut body = Vec::new();
    if let Ok(incoming) = request.consume() {
        if let Ok(mut stream) = incoming.stream() {
            let _ = stream.read_to_end(&mut body);
        }
    }
    body
}

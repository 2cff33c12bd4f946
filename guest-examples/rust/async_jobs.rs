// Shared by the asynchronous test guests (included with `include!`): `?ms=N` waits N milliseconds
// (without using the CPU) and answers 201 with `x-job: done` and `{"slept": N, "method", "path",
// "body"}`; `?fail=1` panics; `?spin=1` never returns.

use std::io::Write as _;

use wasip2::http::types::{Fields, IncomingRequest, OutgoingBody, OutgoingResponse, ResponseOutparam};

include!("query.rs");

wasip2::http::proxy::export!(AsyncJob);

struct AsyncJob;

impl wasip2::exports::http::incoming_handler::Guest for AsyncJob {
    fn handle(request: IncomingRequest, response_out: ResponseOutparam) {
        let path = request.path_with_query().unwrap_or_default();
        if query_param(&path, "fail").is_some() {
            panic!("this execution was asked to fail");
        }
        if query_param(&path, "spin").is_some() {
            let mut n: u64 = 0;
            loop {
                n = std::hint::black_box(n.wrapping_add(1));
            }
        }
        let ms: u64 = query_param(&path, "ms").and_then(|v| v.parse().ok()).unwrap_or(0);
        let method = format!("{:?}", request.method()).trim_start_matches("Method::").to_uppercase();
        let body = read_body(&request);
        std::thread::sleep(std::time::Duration::from_millis(ms));
        let answer =
            format!("{{\"slept\":{ms},\"method\":{:?},\"path\":{:?},\"body\":{:?}}}", method, path, String::from_utf8_lossy(&body));
        let headers =
            Fields::from_list(&[("content-type".to_string(), b"application/json".to_vec()), ("x-job".to_string(), b"done".to_vec())])
                .expect("headers");
        let response = OutgoingResponse::new(headers);
        response.set_status_code(201).expect("status");
        let out = response.body().expect("body");
        ResponseOutparam::set(response_out, Ok(response));
        let mut stream = out.write().expect("stream");
        stream.write_all(answer.as_bytes()).expect("write");
        stream.flush().expect("flush");
        drop(stream);
        OutgoingBody::finish(out, None).expect("finish");
    }
}

fn read_body(request: &IncomingRequest) -> Vec<u8> {
    use std::io::Read as _;
    let mut body = Vec::new();
    if let Ok(incoming) = request.consume() {
        if let Ok(mut stream) = incoming.stream() {
            let _ = stream.read_to_end(&mut body);
        }
    }
    body
}

//! Answers every call with JSON describing it: method, path with query, the `x-echo` header and
//! the body. Sets a header of its own. No configuration section: the defaults (secure,
//! synchronous) apply.

use std::io::{Read as _, Write as _};

use wasip2::http::types::{Fields, IncomingRequest, Method, OutgoingBody, OutgoingResponse, ResponseOutparam};

wasip2::http::proxy::export!(Echo);

struct Echo;

fn json_string(s: &str) -> String {
    let mut out = String::from("\"");
    for c in s.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            c if (c as u32) < 0x20 => out.push_str(&format!("\\u{:04x}", c as u32)),
            c => out.push(c),
        }
    }
    out.push('"');
    out
}

impl wasip2::exports::http::incoming_handler::Guest for Echo {
    fn handle(request: IncomingRequest, response_out: ResponseOutparam) {
        let method = match request.method() {
            Method::Get => "GET".to_string(),
            Method::Post => "POST".to_string(),
            Method::Put => "PUT".to_string(),
            Method::Delete => "DELETE".to_string(),
            Method::Other(m) => m,
            _ => "OTHER".to_string(),
        };
        let path = request.path_with_query().unwrap_or_default();
        let echo_header = request.headers().get("x-echo").first().map(|v| String::from_utf8_lossy(v).into_owned()).unwrap_or_default();
        let mut body = Vec::new();
        if let Ok(incoming) = request.consume() {
            if let Ok(mut stream) = incoming.stream() {
                let _ = stream.read_to_end(&mut body);
            }
        }
        let text = format!(
            "{{\"method\":{},\"path\":{},\"echo\":{},\"body\":{}}}",
            json_string(&method),
            json_string(&path),
            json_string(&echo_header),
            json_string(&String::from_utf8_lossy(&body))
        );
        let headers =
            Fields::from_list(&[("content-type".to_string(), b"application/json".to_vec()), ("x-made-by".to_string(), b"echo".to_vec())])
                .expect("valid headers");
        let response = OutgoingResponse::new(headers);
        response.set_status_code(200).expect("valid status");
        let out = response.body().expect("body");
        ResponseOutparam::set(response_out, Ok(response));
        let mut stream = out.write().expect("stream");
        stream.write_all(text.as_bytes()).expect("write");
        stream.flush().expect("flush");
        drop(stream);
        OutgoingBody::finish(out, None).expect("finish");
    }
}

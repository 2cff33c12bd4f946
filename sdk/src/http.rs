//! Http extensions: a handler from a [`Request`] to a [`Response`], exported as the standard
//! `wasi:http/incoming-handler` by [`http_extension!`](crate::http_extension).
//!
//! ```no_run
//! use herald_sdk::http::{Handler, Request, Response};
//!
//! struct Hello;
//!
//! impl Handler for Hello {
//!     fn handle(request: Request) -> Response {
//!         let name = request.query("name").unwrap_or_else(|| "world".into());
//!         Response::json(200, &serde_json::json!({ "hello": name }))
//!     }
//! }
//!
//! herald_sdk::http_extension!(Hello);
//! ```

use std::io::{Read as _, Write as _};

use wasip2::http::types::{Fields, IncomingRequest, Method, OutgoingBody, OutgoingResponse, ResponseOutparam};

/// A call as the extension receives it: `path` is `/{path}` after the extension id, with the query.
#[derive(Debug, Clone)]
pub struct Request {
    /// `GET`, `PUT`, `POST`, `DELETE`...
    pub method: String,
    /// `/{path}?{query}`.
    pub path_with_query: String,
    /// The headers (Herald removes `Authorization`).
    pub headers: Vec<(String, Vec<u8>)>,
    /// The body, whole.
    pub body: Vec<u8>,
}

impl Request {
    /// The path without the query.
    pub fn path(&self) -> &str {
        self.path_with_query.split('?').next().unwrap_or("/")
    }

    /// The percent-decoded value of query parameter `name`.
    pub fn query(&self, name: &str) -> Option<String> {
        let query = self.path_with_query.split_once('?')?.1;
        query.split('&').find_map(|pair| {
            let (key, value) = pair.split_once('=').unwrap_or((pair, ""));
            (percent_decode(key) == name).then(|| percent_decode(value))
        })
    }

    /// The first value of header `name` (case-insensitive), as text.
    pub fn header(&self, name: &str) -> Option<String> {
        self.headers.iter().find(|(n, _)| n.eq_ignore_ascii_case(name)).map(|(_, v)| String::from_utf8_lossy(v).into_owned())
    }

    /// The body as JSON; the error says why it is not.
    pub fn json(&self) -> Result<serde_json::Value, String> {
        serde_json::from_slice(&self.body).map_err(|e| format!("the body is not JSON: {e}"))
    }
}

/// What the extension answers.
#[derive(Debug, Clone)]
pub struct Response {
    /// The status code.
    pub status: u16,
    /// The headers.
    pub headers: Vec<(String, Vec<u8>)>,
    /// The body.
    pub body: Vec<u8>,
}

impl Response {
    /// A response with an empty body.
    pub fn empty(status: u16) -> Response {
        Response { status, headers: Vec::new(), body: Vec::new() }
    }

    /// A JSON response.
    pub fn json(status: u16, body: &serde_json::Value) -> Response {
        Response::empty(status).header("content-type", "application/json").body(body.to_string().into_bytes())
    }

    /// A plain text response.
    pub fn text(status: u16, body: &str) -> Response {
        Response::empty(status).header("content-type", "text/plain; charset=utf-8").body(body.as_bytes().to_vec())
    }

    /// The response with a header added.
    pub fn header(mut self, name: &str, value: &str) -> Response {
        self.headers.push((name.to_string(), value.as_bytes().to_vec()));
        self
    }

    /// The response with this body.
    pub fn body(mut self, body: Vec<u8>) -> Response {
        self.body = body;
        self
    }
}

/// An http extension.
pub trait Handler {
    /// Answers one call.
    fn handle(request: Request) -> Response;
}

/// Reads the incoming call, runs `H`, and writes its response (used by
/// [`http_extension!`](crate::http_extension)).
#[doc(hidden)]
pub fn serve<H: Handler>(incoming: IncomingRequest, out: ResponseOutparam) {
    let request = read(&incoming);
    drop(incoming);
    write(H::handle(request), out);
}

fn read(incoming: &IncomingRequest) -> Request {
    let method = match incoming.method() {
        Method::Get => "GET".to_string(),
        Method::Head => "HEAD".to_string(),
        Method::Post => "POST".to_string(),
        Method::Put => "PUT".to_string(),
        Method::Delete => "DELETE".to_string(),
        Method::Connect => "CONNECT".to_string(),
        Method::Options => "OPTIONS".to_string(),
        Method::Trace => "TRACE".to_string(),
        Method::Patch => "PATCH".to_string(),
        Method::Other(m) => m,
    };
    let mut body = Vec::new();
    if let Ok(consumed) = incoming.consume() {
        if let Ok(mut stream) = consumed.stream() {
            let _ = stream.read_to_end(&mut body);
        }
    }
    Request {
        method,
        path_with_query: incoming.path_with_query().unwrap_or_else(|| "/".into()),
        headers: incoming.headers().entries(),
        body,
    }
}

fn write(response: Response, out: ResponseOutparam) {
    let headers = Fields::from_list(&response.headers).unwrap_or_else(|_| Fields::new());
    let outgoing = OutgoingResponse::new(headers);
    let _ = outgoing.set_status_code(response.status);
    let Ok(body) = outgoing.body() else { return };
    ResponseOutparam::set(out, Ok(outgoing));
    if let Ok(mut stream) = body.write() {
        // The host takes the body in chunks of at most 4096 bytes per blocking write.
        for chunk in response.body.chunks(4096) {
            if stream.write_all(chunk).is_err() {
                break;
            }
        }
        let _ = stream.flush();
    }
    let _ = OutgoingBody::finish(body, None);
}

fn percent_decode(s: &str) -> String {
    let bytes = s.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        match bytes[i] {
            b'%' if i + 2 < bytes.len() => match (hex(bytes[i + 1]), hex(bytes[i + 2])) {
                (Some(high), Some(low)) => {
                    out.push(high * 16 + low);
                    i += 3;
                    continue;
                }
                _ => out.push(b'%'),
            },
            b'+' => out.push(b' '),
            b => out.push(b),
        }
        i += 1;
    }
    String::from_utf8_lossy(&out).into_owned()
}

fn hex(b: u8) -> Option<u8> {
    (b as char).to_digit(16).map(|d| d as u8)
}

/// Exports a [`Handler`] as the component's `wasi:http/incoming-handler`.
#[macro_export]
macro_rules! http_extension {
    ($handler:ty) => {
        struct __HeraldHttpExtension;

        impl $crate::wasip2::exports::http::incoming_handler::Guest for __HeraldHttpExtension {
            fn handle(request: $crate::wasip2::http::types::IncomingRequest, out: $crate::wasip2::http::types::ResponseOutparam) {
                $crate::http::serve::<$handler>(request, out)
            }
        }

        $crate::wasip2::http::proxy::export!(__HeraldHttpExtension);
    };
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn query_parameters_are_decoded() {
        let r =
            Request { method: "GET".into(), path_with_query: "/a/b?x=1&name=Ann%20Lee&flag&q=a+b".into(), headers: vec![], body: vec![] };
        assert_eq!(r.path(), "/a/b");
        assert_eq!(r.query("name").as_deref(), Some("Ann Lee"));
        assert_eq!(r.query("flag").as_deref(), Some(""));
        assert_eq!(r.query("q").as_deref(), Some("a b"));
        assert_eq!(r.query("nope"), None);
    }
}

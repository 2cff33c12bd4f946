//! Outbound HTTP calls from any extension, over `wasi:http/outgoing-handler`. A host must be
//! declared in the extension's `allowed_hosts` (and allowed by the operator); when one of the
//! instance's authheader extensions is bound to it, Herald adds its headers after the request
//! leaves the extension, which never sees them.
//!
//! ```no_run
//! let answer = herald_sdk::client::get("https://api.example.com/v1/status").unwrap();
//! if answer.status == 200 {
//!     let status: serde_json::Value = answer.json().unwrap();
//! }
//! ```

use std::io::{Read as _, Write as _};

use wasip2::http::outgoing_handler;
use wasip2::http::types::{Fields, Method, OutgoingBody, OutgoingRequest, Scheme};

/// An answer, whole.
#[derive(Debug, Clone)]
pub struct Answer {
    /// The status code.
    pub status: u16,
    /// The headers, as sent.
    pub headers: Vec<(String, Vec<u8>)>,
    /// The body.
    pub body: Vec<u8>,
}

impl Answer {
    /// The body as text (invalid UTF-8 replaced).
    pub fn text(&self) -> String {
        String::from_utf8_lossy(&self.body).into_owned()
    }

    /// The body as JSON.
    pub fn json<T: serde::de::DeserializeOwned>(&self) -> Result<T, String> {
        serde_json::from_slice(&self.body).map_err(|e| format!("the answer is not the JSON expected: {e}"))
    }
}

/// `GET url`.
pub fn get(url: &str) -> Result<Answer, String> {
    send("GET", url, &[], &[])
}

/// `POST url` with a body of `content_type`.
pub fn post(url: &str, content_type: &str, body: &[u8]) -> Result<Answer, String> {
    send("POST", url, &[("content-type", content_type)], body)
}

/// Sends a request and waits for its whole answer. The error says what failed (a host that is
/// not allowed: `HttpRequestDenied`; an authheader extension that failed: `InternalError` with
/// its reason).
pub fn send(method: &str, url: &str, headers: &[(&str, &str)], body: &[u8]) -> Result<Answer, String> {
    let (scheme, rest) = match url.split_once("://") {
        Some(("http", rest)) => (Scheme::Http, rest),
        Some(("https", rest)) => (Scheme::Https, rest),
        _ => return Err(format!("'{url}' is not an http:// or https:// URL")),
    };
    let (authority, path) = rest.find('/').map_or((rest, "/"), |i| (&rest[..i], &rest[i..]));
    let list: Vec<(String, Vec<u8>)> = headers.iter().map(|(n, v)| (n.to_string(), v.as_bytes().to_vec())).collect();
    let fields = Fields::from_list(&list).map_err(|e| format!("the headers are not valid: {e:?}"))?;
    let request = OutgoingRequest::new(fields);
    let method = match method {
        "GET" => Method::Get,
        "POST" => Method::Post,
        "PUT" => Method::Put,
        "DELETE" => Method::Delete,
        "PATCH" => Method::Patch,
        "HEAD" => Method::Head,
        other => Method::Other(other.to_string()),
    };
    let refused = |what: &str| format!("the request's {what} is not valid");
    request.set_method(&method).map_err(|()| refused("method"))?;
    request.set_scheme(Some(&scheme)).map_err(|()| refused("scheme"))?;
    request.set_authority(Some(authority)).map_err(|()| refused("host"))?;
    request.set_path_with_query(Some(path)).map_err(|()| refused("path"))?;
    let outgoing = request.body().map_err(|()| refused("body"))?;
    let future = outgoing_handler::handle(request, None).map_err(|code| format!("{code:?}"))?;
    {
        let mut stream = outgoing.write().map_err(|()| refused("body"))?;
        for chunk in body.chunks(4096) {
            stream.write_all(chunk).map_err(|e| format!("the body could not be sent: {e}"))?;
        }
        stream.flush().map_err(|e| format!("the body could not be sent: {e}"))?;
    }
    OutgoingBody::finish(outgoing, None).map_err(|code| format!("{code:?}"))?;
    future.subscribe().block();
    let response = match future.get() {
        Some(Ok(Ok(response))) => response,
        Some(Ok(Err(code))) => return Err(format!("{code:?}")),
        other => return Err(format!("the request failed: {other:?}")),
    };
    let status = response.status();
    let headers = response.headers().entries();
    let mut body = Vec::new();
    let incoming = response.consume().map_err(|()| "the answer's body could not be read".to_string())?;
    {
        let mut stream = incoming.stream().map_err(|()| "the answer's body could not be read".to_string())?;
        stream.read_to_end(&mut body).map_err(|e| format!("the answer's body could not be read: {e}"))?;
    }
    Ok(Answer { status, headers, body })
}

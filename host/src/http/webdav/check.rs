//! What a WebDAV request may do, decided before the library sees it: the path and `Destination`
//! are valid media paths of this server, writes stay inside the folders of items, and the methods
//! Herald does not serve are refused with the reason.

use axum::extract::Request;
use axum::http::{header, HeaderMap, Method, StatusCode};
use percent_encoding::percent_decode_str;

use crate::assets::RelPath;
use crate::http::error::ApiError;

/// The folders whose contents a client may write over WebDAV (`contexts/` is read-only here).
const WRITABLE: [&str; 3] = ["resources", "templates", "webapps"];

/// A request that passed the checks.
pub(super) struct Checked {
    pub path: RelPath,
    pub destination: Option<RelPath>,
}

/// The first folder of a media path (`resources`, ...), or "" for the root.
pub(super) fn top(path: &RelPath) -> String {
    path.as_text().split('/').next().unwrap_or("").to_string()
}

/// The media path a DAV URL names, if it is a valid one.
fn media_path(uri_path: &str) -> Option<RelPath> {
    let rest = uri_path.strip_prefix("/dav")?;
    if !(rest.is_empty() || rest.starts_with('/')) {
        return None;
    }
    let decoded = percent_decode_str(rest).decode_utf8().ok()?;
    RelPath::parse("path", &decoded).ok()
}

pub(super) fn is_write(method: &Method) -> bool {
    !matches!(method.as_str(), "GET" | "HEAD" | "OPTIONS" | "PROPFIND")
}

/// Whether `path` lies inside a folder of items: writing the root, a top folder itself or
/// anything beside them would remove or replace what the API relies on.
fn check_writable(path: &RelPath, what: &str) -> Result<(), ApiError> {
    let top = top(path);
    if top == "contexts" {
        return Err(ApiError::forbidden_because(
            "Context Parameter Schemas are read-only over WebDAV: use the Assets API, which checks that a schema only grows",
        ));
    }
    if !WRITABLE.contains(&top.as_str()) || path.as_text() == top {
        return Err(ApiError::forbidden_because(format!(
            "{what} must lie inside resources/, templates/ or webapps/ (the folders themselves and the root cannot be changed)"
        )));
    }
    Ok(())
}

/// The `Destination` of a COPY or MOVE: a path under `/dav/` of this server.
fn destination(headers: &HeaderMap) -> Result<RelPath, ApiError> {
    let value = headers
        .get("destination")
        .ok_or_else(|| ApiError::bad("COPY and MOVE need a Destination header"))?
        .to_str()
        .map_err(|_| ApiError::bad("the Destination header is not text"))?;
    let path = match value.split_once("://") {
        Some((_, rest)) => {
            let (authority, path) = rest.split_at(rest.find('/').unwrap_or(rest.len()));
            let host = headers.get(header::HOST).and_then(|h| h.to_str().ok()).unwrap_or("");
            if !authority.eq_ignore_ascii_case(host) {
                return Err(ApiError::bad(format!("the Destination names another server ({authority}): COPY and MOVE stay on this one")));
            }
            path
        }
        None => value,
    };
    media_path(path).ok_or_else(|| ApiError::bad("the Destination must be a valid path under /dav/"))
}

pub(super) fn request(request: &Request) -> Result<Checked, ApiError> {
    let method = request.method();
    let headers = request.headers();
    let path = media_path(request.uri().path()).ok_or(ApiError::NotFound)?;
    match method.as_str() {
        "PROPFIND" if headers.get("depth").is_some_and(|d| d.as_bytes().eq_ignore_ascii_case(b"infinity")) => {
            return Err(ApiError::forbidden_because("PROPFIND with Depth: infinity is not served: list one level at a time (Depth: 1)"));
        }
        "PROPPATCH" => {
            return Err(ApiError::forbidden_because("the properties of media files are not stored: PROPPATCH cannot set them"));
        }
        "GET" | "HEAD" | "OPTIONS" | "PROPFIND" | "PUT" | "DELETE" | "MKCOL" | "COPY" | "MOVE" | "LOCK" | "UNLOCK" => {}
        other => {
            return Err(ApiError::Explained(StatusCode::METHOD_NOT_ALLOWED, format!("WebDAV method {other} is not served here")));
        }
    }
    let destination = match method.as_str() {
        "COPY" | "MOVE" => Some(destination(headers)?),
        _ => None,
    };
    if is_write(method) && method.as_str() != "COPY" {
        check_writable(&path, "what is written")?;
    }
    if let Some(dest) = &destination {
        check_writable(dest, "the Destination")?;
    }
    Ok(Checked { path, destination })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn req(method: &str, uri: &str, headers: &[(&str, &str)]) -> Request {
        let mut b = axum::http::Request::builder().method(method).uri(uri).header("host", "herald.test");
        for (k, v) in headers {
            b = b.header(*k, *v);
        }
        b.body(axum::body::Body::empty()).unwrap()
    }

    fn status(r: Result<Checked, ApiError>) -> u16 {
        match r {
            Ok(_) => 200,
            Err(e) => axum::response::IntoResponse::into_response(e).status().as_u16(),
        }
    }

    #[test]
    fn destinations_are_this_servers_item_paths() {
        let copy = |dest: &str| status(request(&req("COPY", "/dav/resources/a.txt", &[("destination", dest)])));
        assert_eq!(copy("/dav/resources/b.txt"), 200);
        assert_eq!(copy("http://herald.test/dav/resources/b.txt"), 200);
        assert_eq!(copy("/dav"), 403, "the root");
        assert_eq!(copy("/dav/"), 403, "the root");
        assert_eq!(copy("/dav/resources"), 403, "a top folder");
        assert_eq!(copy("/dav/contexts/x.json"), 403);
        assert_eq!(copy("http://evil.example/dav/resources/b.txt"), 400);
        assert_eq!(copy("/elsewhere/b.txt"), 400);
        assert_eq!(copy("/davx/b.txt"), 400);
        assert_eq!(copy("/dav/resources/../../etc"), 400);
        assert_eq!(status(request(&req("MOVE", "/dav/resources/a.txt", &[]))), 400, "no Destination");
    }

    #[test]
    fn writes_stay_inside_the_item_folders_and_unserved_methods_say_so() {
        assert_eq!(status(request(&req("PUT", "/dav/resources/a.txt", &[]))), 200);
        assert_eq!(status(request(&req("PUT", "/dav/a.txt", &[]))), 403);
        assert_eq!(status(request(&req("DELETE", "/dav/templates", &[]))), 403);
        assert_eq!(status(request(&req("MKCOL", "/dav/webapps/app", &[]))), 200);
        assert_eq!(status(request(&req("PROPFIND", "/dav/", &[("depth", "infinity")]))), 403);
        assert_eq!(status(request(&req("PROPFIND", "/dav/", &[("depth", "1")]))), 200);
        assert_eq!(status(request(&req("PROPPATCH", "/dav/resources/a.txt", &[]))), 403);
        assert_eq!(status(request(&req("REPORT", "/dav/resources/a.txt", &[]))), 405);
    }
}

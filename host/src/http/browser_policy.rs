//! What every answer of a public listener tells a browser, so that no content an instance
//! uploads (a webapp, an extension's answer, a file read back through WebDAV) can run script in
//! the origin of the console, the reference page or the API.
//!
//! - `X-Content-Type-Options: nosniff` on every answer: a browser takes the media type as given.
//! - Herald's own pages (the console, the reference page: `HeraldPage` on the response) keep the
//!   content security policy they set. Every other answer gets
//!   `Content-Security-Policy: sandbox ...` without `allow-same-origin`: a page it holds runs in
//!   an opaque origin of its own, so it cannot read the console's `sessionStorage` (where the
//!   console keeps its token), cookies, or any answer of this server. The policy is *appended*:
//!   a guest's own `Content-Security-Policy` header stays, and a browser enforces both, so a
//!   guest can only add restrictions, never lift the sandbox.
//! - Framing: nothing but a webapp (`Frameable`) may be framed by any page
//!   (`frame-ancestors 'none'`, and `X-Frame-Options: DENY` for older browsers). A webapp is a
//!   customer's public page, which their own sites may embed; it runs sandboxed either way.

use axum::http::{header, HeaderValue};
use axum::response::Response;

/// Marks a page of Herald's own (embedded in the binary), which sets its own policy.
#[derive(Clone, Copy, Debug)]
pub struct HeraldPage;

/// Marks an answer that other sites may frame (a webapp's files).
#[derive(Clone, Copy, Debug)]
pub struct Frameable;

/// Scripts may run, forms be sent and popups open, but in an origin of their own (no
/// `allow-same-origin`): what a customer's page may do without reaching Herald's origin.
/// Header values made at compile time: `from_static` checks every byte, which at run time cost
/// a thousand instructions a call (issue 41, `bench/instructions.sh`); a clone of one is a copy
/// of two pointers.
static SANDBOX: HeaderValue = HeaderValue::from_static("sandbox allow-scripts allow-forms allow-popups allow-modals allow-downloads");
static SANDBOX_UNFRAMED: HeaderValue =
    HeaderValue::from_static("sandbox allow-scripts allow-forms allow-popups allow-modals allow-downloads; frame-ancestors 'none'");
static NOSNIFF: HeaderValue = HeaderValue::from_static("nosniff");
static DENY: HeaderValue = HeaderValue::from_static("DENY");

/// Adds the headers above to `response` (`front.rs`, on every answer of a public listener).
pub fn apply(response: &mut Response) {
    let own_page = response.extensions().get::<HeraldPage>().is_some();
    let frameable = response.extensions().get::<Frameable>().is_some();
    let headers = response.headers_mut();
    // Room for these and the request id at once, rather than a growth per header.
    headers.reserve(4);
    headers.insert(header::X_CONTENT_TYPE_OPTIONS, NOSNIFF.clone());
    if !own_page {
        headers.append(header::CONTENT_SECURITY_POLICY, if frameable { &SANDBOX } else { &SANDBOX_UNFRAMED }.clone());
    }
    if !frameable {
        headers.insert(header::X_FRAME_OPTIONS, DENY.clone());
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use axum::response::IntoResponse;

    fn applied(mut response: Response) -> Response {
        apply(&mut response);
        response
    }

    #[test]
    fn a_guest_cannot_lift_the_sandbox_with_a_policy_of_its_own() {
        let mut guest = ([(header::CONTENT_SECURITY_POLICY, "default-src *")], "<script>sessionStorage</script>").into_response();
        guest.extensions_mut().insert(crate::http::negotiate::GuestAnswer);
        let answered = applied(guest);
        let policies: Vec<_> = answered.headers().get_all(header::CONTENT_SECURITY_POLICY).iter().collect();
        assert_eq!(policies.len(), 2, "{policies:?}");
        assert!(policies.iter().any(|p| p.to_str().unwrap().starts_with("sandbox allow-scripts")), "{policies:?}");
        assert!(!policies.iter().any(|p| p.to_str().unwrap().contains("allow-same-origin")));
        assert_eq!(answered.headers()[header::X_FRAME_OPTIONS], "DENY");
        assert_eq!(answered.headers()[header::X_CONTENT_TYPE_OPTIONS], "nosniff");
    }

    #[test]
    fn herald_pages_keep_their_policy_and_webapps_may_be_framed() {
        let mut page = ([(header::CONTENT_SECURITY_POLICY, "default-src 'self'")], "console").into_response();
        page.extensions_mut().insert(HeraldPage);
        let page = applied(page);
        assert_eq!(page.headers().get_all(header::CONTENT_SECURITY_POLICY).iter().count(), 1);
        let mut webapp = "<html>".into_response();
        webapp.extensions_mut().insert(Frameable);
        let webapp = applied(webapp);
        assert_eq!(webapp.headers()[header::CONTENT_SECURITY_POLICY], SANDBOX);
        assert!(webapp.headers().get(header::X_FRAME_OPTIONS).is_none());
    }
}

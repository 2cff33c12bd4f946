//! Extension calls (`/extensions/secure/...`, `/extensions/open/...`): matched by their paths
//! before the router (`Dispatch`), and served by one hand-written service instead of axum's
//! middleware stack. An extension call is the platform's hottest path (issue 41): the stack (the
//! credential, the smoothing, the instance's limits, each a `middleware::from_fn` or a tower
//! layer, then the handler's extractors) cost a cloned inner service and a boxed future per step
//! at every call, and the router's match a lookup in its tree, the matched route's template, the
//! original URI and every parameter copied into the request's extensions, then decoded again
//! into a `Vec<String>`: 8,000 of a reused call's 88,000 instructions (`bench/instructions.sh`).
//! Here the path is split by hand as the routes' templates (`SECURE_ROUTES`, `OPEN_ROUTES`)
//! would split it, and each segment decoded once, borrowed where it holds no `%`. `front.rs`
//! and the payload limit wrap these calls like every other, and where metrics are shown each
//! call is counted by its route template, as the router's calls are.
//!
//! The steps, their order and their answers are those of every other route:
//! - secure: the credential (401), its smoothing when the operator turned it on (429, one
//!   allowance shared with the JSON API's routes), the instance's limits (429), then the
//!   extension (403 for an App Api credential; 400 for a path segment that holds `%00` or is not
//!   UTF-8 once decoded; then `extensions::call_secure`);
//! - open: smoothing per client address (429, shared with the other open routes), the route's
//!   instance (400 for a path segment that is not UTF-8 once decoded, 404 for no such
//!   instance), its limits (429), then the extension (400 for `%00`, then `extensions::call_open`).
//!
//! The instance's limits and the standing against the daily cap on every answer past them are
//! `guard::within_limits`, the open route's instance `guard::instance_named`, as for the other
//! routes.

use std::borrow::Cow;
use std::convert::Infallible;
use std::future::Future;
use std::net::SocketAddr;
use std::pin::Pin;
use std::task::{Context, Poll};

use axum::extract::{ConnectInfo, Request};
use axum::response::{IntoResponse, Response};
use axum::Router;

use super::error::ApiError;
use super::extract::{decode_once, refuse_encoded_nul, Caller};
use super::guard::rate::{AddressKey, CredentialKey, Smoothing};
use super::guard::{instance_named, within_limits};
use super::{extensions, ApiContext};
use crate::auth::Scope;

/// The secure endpoint's route templates: bare, with a trailing `/`, and with a path of the
/// extension's own (`openapi/drift.rs` checks them against the document).
pub(super) const SECURE_ROUTES: [&str; 3] =
    ["/extensions/secure/{extension_id}", "/extensions/secure/{extension_id}/", "/extensions/secure/{extension_id}/{*path}"];
/// The open endpoint's, the same three under the instance's id.
pub(super) const OPEN_ROUTES: [&str; 3] = [
    "/extensions/open/{customer_id}/{extension_id}",
    "/extensions/open/{customer_id}/{extension_id}/",
    "/extensions/open/{customer_id}/{extension_id}/{*path}",
];

/// A public listener's service: an extension call of a door this listener has goes straight to
/// `ExtensionCalls`, every other call to the router.
#[derive(Clone)]
pub struct Dispatch {
    secure: Option<ExtensionCalls>,
    open: Option<ExtensionCalls>,
    router: Router,
}

impl Dispatch {
    /// `router` without the extension calls' routes; `secure` and `open` the doors this
    /// listener serves (the open one with the other open routes' smoothing).
    pub(super) fn new(
        ctx: &ApiContext,
        router: Router,
        secure: Option<Option<Smoothing<CredentialKey>>>,
        open: Option<Smoothing<AddressKey>>,
    ) -> Dispatch {
        let calls = |door| ExtensionCalls { ctx: ctx.clone(), door };
        Dispatch { secure: secure.map(|s| calls(Door::Secure(s))), open: open.map(|s| calls(Door::Open(s))), router }
    }
}

impl tower::Service<Request> for Dispatch {
    type Response = Response;
    type Error = Infallible;
    type Future = futures_util::future::Either<BoxedAnswer, axum::routing::future::RouteFuture<Infallible>>;

    fn poll_ready(&mut self, _: &mut Context<'_>) -> Poll<Result<(), Infallible>> {
        // The router is always ready, and so are the extension calls.
        Poll::Ready(Ok(()))
    }

    fn call(&mut self, request: Request) -> Self::Future {
        use futures_util::future::Either;
        let path = request.uri().path();
        for calls in [&self.secure, &self.open].into_iter().flatten() {
            if let Some(split) = calls.door.split(path) {
                return Either::Left(calls.answer(split.route, request));
            }
        }
        Either::Right(self.router.call(request))
    }
}

type BoxedAnswer = Pin<Box<dyn Future<Output = Result<Response, Infallible>> + Send>>;

#[derive(Clone)]
enum Door {
    Secure(Option<Smoothing<CredentialKey>>),
    Open(Smoothing<AddressKey>),
}

impl Door {
    /// `path` split as this door's routes split it, or `None` when none of them matches.
    fn split<'a>(&self, path: &'a str) -> Option<CallPath<'a>> {
        match self {
            Door::Secure(_) => split_secure(path),
            Door::Open(_) => split_open(path),
        }
    }
}

/// An extension call's path as its route splits it, each segment still percent-encoded.
#[derive(Debug, PartialEq)]
struct CallPath<'a> {
    route: &'static str,
    customer: Option<&'a str>,
    extension: &'a str,
    /// The rest of the path after the extension's segment and its `/` (empty when none).
    rest: &'a str,
}

fn split_secure(path: &str) -> Option<CallPath<'_>> {
    let after = path.strip_prefix("/extensions/secure/")?;
    let (extension, rest, route) = extension_and_rest(after, &SECURE_ROUTES)?;
    Some(CallPath { route, customer: None, extension, rest })
}

fn split_open(path: &str) -> Option<CallPath<'_>> {
    let after = path.strip_prefix("/extensions/open/")?;
    // As the router's matcher reads a segment: empty when a `/` follows it (the instance's
    // lookup refuses it), never at the path's end.
    let (customer, after) = after.split_once('/')?;
    let (extension, rest, route) = extension_and_rest(after, &OPEN_ROUTES)?;
    Some(CallPath { route, customer: Some(customer), extension, rest })
}

/// `{extension_id}`, then nothing, a `/`, or a `/` and `{*path}`: which of `routes` it is. As
/// for `{customer_id}`, the id may be empty when a `/` follows it (the extension's lookup then
/// answers 404).
fn extension_and_rest<'a>(after: &'a str, routes: &[&'static str; 3]) -> Option<(&'a str, &'a str, &'static str)> {
    match after.split_once('/') {
        None if after.is_empty() => None,
        None => Some((after, "", routes[0])),
        Some((extension, "")) => Some((extension, "", routes[1])),
        Some((extension, rest)) => Some((extension, rest, routes[2])),
    }
}

#[derive(Clone)]
struct ExtensionCalls {
    ctx: ApiContext,
    door: Door,
}

impl ExtensionCalls {
    /// The call's answer, boxed: the box is made by moving the whole future into it, so the
    /// future made here holds the answer's once (one built and then awaited, or handed to
    /// `timed`, was held three times, all copied into the box at every call; now each branch's
    /// is about 3.5 KB, by `size_of_val`: BENCHMARKS.md, "The answer's future held once").
    fn answer(&self, route: &'static str, request: Request) -> BoxedAnswer {
        let this = self.clone();
        if crate::ops::metrics::recording() {
            Box::pin(async move { Ok(crate::ops::metrics::timed(route.to_string(), this.respond(request)).await) })
        } else {
            Box::pin(async move { Ok(this.respond(request).await) })
        }
    }

    async fn respond(&self, request: Request) -> Response {
        match &self.door {
            Door::Secure(smoothing) => secure(&self.ctx, smoothing.as_ref(), request).await,
            Door::Open(smoothing) => open(&self.ctx, smoothing, request).await,
        }
    }
}

async fn secure(ctx: &ApiContext, smoothing: Option<&Smoothing<CredentialKey>>, request: Request) -> Response {
    let caller = match Caller::authenticate(request.headers(), ctx).await {
        Ok(caller) => caller,
        Err(refused) => return refused.into_response(),
    };
    if let Some(refused) = smoothing.and_then(|s| s.refusal(&caller.principal.client_id)) {
        return refused;
    }
    let (tenant, scope) = (&caller.tenant, caller.principal.scope);
    let answer = move || async move {
        // As `PublicCaller` does for every other public operation, before the path is read.
        if scope != Scope::Public {
            return ApiError::Forbidden.into_response();
        }
        // The path is the request's, which the call takes: read from a copy (a shared buffer).
        let uri = request.uri().clone();
        match secure_segments(&uri) {
            Ok((id, path)) => extensions::call_secure(ctx, tenant, &id, &path, request).await,
            Err(refused) => refused.into_response(),
        }
    };
    within_limits(ctx, tenant, answer).await
}

async fn open(ctx: &ApiContext, smoothing: &Smoothing<AddressKey>, request: Request) -> Response {
    // The peer's address, as the per-address layer keys it (missing only outside `connections`).
    let Some(address) = request.extensions().get::<ConnectInfo<SocketAddr>>().map(|c| c.0.ip()) else {
        return ApiError::Unauthorized.into_response();
    };
    if let Some(refused) = smoothing.refusal(&address) {
        return refused;
    }
    let uri = request.uri().clone();
    let Some(split) = split_open(uri.path()) else {
        return ApiError::NotFound.into_response();
    };
    // Every segment is decoded before the instance is looked up, as the router's parameters are.
    let decoded = (|| {
        Ok::<_, ApiError>((decode_once(split.customer.unwrap_or_default())?, decode_once(split.extension)?, decode_once(split.rest)?))
    })();
    let (customer, id, path) = match decoded {
        Ok(decoded) => decoded,
        Err(refused) => return refused.into_response(),
    };
    let tenant = match instance_named(ctx, &customer).await {
        Ok(tenant) => tenant,
        Err(refused) => return refused,
    };
    let tenant = &tenant;
    // Checked here, answered once admitted (as `AppPath`'s check was, in the handler).
    let nul = refuse_encoded_nul(uri.path());
    let answer = move || async move {
        if let Err(refused) = nul {
            return refused.into_response();
        }
        extensions::call_open(ctx, tenant, &id, &path, request).await
    };
    within_limits(ctx, tenant, answer).await
}

/// A secure call's extension id and the rest of its path, each decoded once, as `AppPath` reads a
/// route's parameters: 400 for a `%00` anywhere in the path, then for a segment not UTF-8 once
/// decoded.
fn secure_segments(uri: &axum::http::Uri) -> Result<(Cow<'_, str>, Cow<'_, str>), ApiError> {
    refuse_encoded_nul(uri.path())?;
    // Dispatch matched this path before it came here.
    let split = split_secure(uri.path()).ok_or(ApiError::NotFound)?;
    Ok((decode_once(split.extension)?, decode_once(split.rest)?))
}

#[cfg(test)]
mod tests {
    use super::*;
    use axum::body::Body;
    use axum::extract::{MatchedPath, RawPathParams};
    use tower::ServiceExt;

    /// What the router makes of `path` with the extension calls' routes: the matched template
    /// and its raw parameters, or nothing.
    async fn routed(path: &str) -> Option<String> {
        async fn echo(matched: MatchedPath, params: RawPathParams) -> String {
            let params: Vec<String> = params.iter().map(|(name, value)| format!("{name}={value}")).collect();
            format!("{} {}", matched.as_str(), params.join(" "))
        }
        let mut router = Router::new();
        for route in SECURE_ROUTES.iter().chain(OPEN_ROUTES.iter()) {
            router = router.route(route, axum::routing::any(echo));
        }
        let response = router.oneshot(Request::builder().uri(path).body(Body::empty()).unwrap()).await.unwrap();
        if response.status() != axum::http::StatusCode::OK {
            return None;
        }
        let body = axum::body::to_bytes(response.into_body(), 1 << 16).await.unwrap();
        Some(String::from_utf8(body.to_vec()).unwrap())
    }

    /// The same, from the hand-written split (its segments decoded as the router decodes them).
    fn split(path: &str) -> Option<String> {
        let split = split_secure(path).or_else(|| split_open(path))?;
        let decode = |s: &str| percent_encoding::percent_decode_str(s).decode_utf8_lossy().into_owned();
        let mut params = Vec::new();
        if let Some(customer) = split.customer {
            params.push(format!("customer_id={}", decode(customer)));
        }
        params.push(format!("extension_id={}", decode(split.extension)));
        if split.route.ends_with("{*path}") {
            params.push(format!("path={}", decode(split.rest)));
        }
        Some(format!("{} {}", split.route, params.join(" ")))
    }

    #[tokio::test]
    async fn paths_split_by_hand_as_the_router_splits_them() {
        let paths = [
            "/extensions/secure/hello",
            "/extensions/secure/hello/",
            "/extensions/secure/hello/a/b/c",
            "/extensions/secure/hello//",
            "/extensions/secure/hello//a",
            "/extensions/secure/shop%252Fhook/x%20y",
            "/extensions/secure/",
            "/extensions/secure",
            "/extensions/secure//",
            "/extensions/secure//x",
            "/extensions/securex/hello",
            "/extensions/open/c1/hello",
            "/extensions/open/c1/hello/",
            "/extensions/open/c1/hello/p/q",
            "/extensions/open/c1/",
            "/extensions/open/c1",
            "/extensions/open//hello",
            "/extensions/open/c1//p",
            "/extensions/open/c1//",
            "/extensions/open///",
            "/extensions/secure///",
            "/extensions/open/c%201/h%2Fx/rest",
            "/extensions/opened/c1/hello",
            "/extensions/status/secure/q1",
            "/recipients/1",
        ];
        let mut differ = Vec::new();
        for path in paths {
            let (by_hand, by_router) = (split(path), routed(path).await);
            if by_hand != by_router {
                differ.push(format!("{path}: by hand {by_hand:?}, by the router {by_router:?}"));
            }
        }
        assert!(differ.is_empty(), "{differ:#?}");
    }
}

//! The routes of extension calls (`/extensions/secure/...`, `/extensions/open/...`), each served
//! by one hand-written service instead of axum's middleware stack. That stack (the credential,
//! the smoothing, the instance's limits, each a `middleware::from_fn` or a tower layer, then the
//! handler's extractors) cost a cloned inner service and a boxed future per step at every call,
//! and an extension call is the platform's hottest path (issue 41). The router still matches
//! these routes, and `front.rs` and the request metrics still wrap them like every other route.
//!
//! The steps, their order and their answers are those of every other route:
//! - secure: the credential (401), its smoothing when the operator turned it on (429, one
//!   allowance shared with the JSON API's routes), the instance's limits (429), then the
//!   extension (403 for an App Api credential, then `extensions::call_secure`);
//! - open: smoothing per client address (429, shared with the other open routes), the route's
//!   instance (400 for a path segment that is not UTF-8 once decoded, 404 for no such
//!   instance), its limits (429), then the extension (`extensions::call_open`).
//!
//! The instance's limits and the standing against the daily cap on every answer past them are
//! `guard::within_limits`, the open route's instance `guard::route_instance`, as for the other
//! routes.

use std::convert::Infallible;
use std::future::Future;
use std::net::SocketAddr;
use std::pin::Pin;
use std::task::{Context, Poll};

use axum::extract::{ConnectInfo, FromRequestParts, RawPathParams, Request};
use axum::response::{IntoResponse, Response};
use axum::Router;

use super::error::ApiError;
use super::extract::{AppPath, Caller};
use super::guard::rate::{AddressKey, CredentialKey, Smoothing};
use super::guard::{route_instance, within_limits};
use super::{extensions, ApiContext};
use crate::auth::Scope;

/// The secure endpoint's routes; `smoothing` is the JSON API's per-credential smoothing, when on.
pub(super) fn secure_routes(ctx: &ApiContext, smoothing: Option<Smoothing<CredentialKey>>) -> Router<ApiContext> {
    let service = ExtensionCalls { ctx: ctx.clone(), door: Door::Secure(smoothing) };
    // Bare, with a trailing `/`, and with a path of the extension's own.
    Router::new()
        .route_service("/extensions/secure/{extension_id}", service.clone())
        .route_service("/extensions/secure/{extension_id}/", service.clone())
        .route_service("/extensions/secure/{extension_id}/{*path}", service)
}

/// The open endpoint's routes, smoothed with the other open routes' `smoothing`.
pub(super) fn open_routes(ctx: &ApiContext, smoothing: Smoothing<AddressKey>) -> Router<ApiContext> {
    let service = ExtensionCalls { ctx: ctx.clone(), door: Door::Open(smoothing) };
    Router::new()
        .route_service("/extensions/open/{customer_id}/{extension_id}", service.clone())
        .route_service("/extensions/open/{customer_id}/{extension_id}/", service.clone())
        .route_service("/extensions/open/{customer_id}/{extension_id}/{*path}", service)
}

#[derive(Clone)]
enum Door {
    Secure(Option<Smoothing<CredentialKey>>),
    Open(Smoothing<AddressKey>),
}

#[derive(Clone)]
struct ExtensionCalls {
    ctx: ApiContext,
    door: Door,
}

impl tower::Service<Request> for ExtensionCalls {
    type Response = Response;
    type Error = Infallible;
    type Future = Pin<Box<dyn Future<Output = Result<Response, Infallible>> + Send>>;

    fn poll_ready(&mut self, _: &mut Context<'_>) -> Poll<Result<(), Infallible>> {
        Poll::Ready(Ok(()))
    }

    fn call(&mut self, request: Request) -> Self::Future {
        let this = self.clone();
        Box::pin(async move {
            Ok(match &this.door {
                Door::Secure(smoothing) => secure(&this.ctx, smoothing.as_ref(), request).await,
                Door::Open(smoothing) => open(&this.ctx, smoothing, request).await,
            })
        })
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
        match params(request).await {
            Ok((params, request)) => extensions::call_secure(ctx, tenant, params, request).await,
            Err(refused) => refused,
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
    let (mut parts, body) = request.into_parts();
    let tenant = match route_instance(ctx, RawPathParams::from_request_parts(&mut parts, &()).await).await {
        Ok(tenant) => tenant,
        Err(refused) => return refused,
    };
    let request = Request::from_parts(parts, body);
    let tenant = &tenant;
    let answer = move || async move {
        match params(request).await {
            Ok((params, request)) => extensions::call_open(ctx, tenant, params, request).await,
            Err(refused) => refused,
        }
    };
    within_limits(ctx, tenant, answer).await
}

/// The route's parameters, read as every other route reads its path (`AppPath`).
async fn params(request: Request) -> Result<(Vec<String>, Request), Response> {
    let (mut parts, body) = request.into_parts();
    match AppPath::<Vec<String>>::from_request_parts(&mut parts, &()).await {
        Ok(AppPath(params)) => Ok((params, Request::from_parts(parts, body))),
        Err(refused) => Err(refused.into_response()),
    }
}

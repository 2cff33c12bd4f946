//! The middleware every call of the JSON API passes, in this order: authenticate (once; the
//! caller is kept in the request's extensions for the handlers' extractors), rate smoothing per
//! credential (`limits::rate`), then the instance's limits: a slot among its 20 concurrent calls
//! and a call of its daily cap. Every answer carries the caller's standing against the cap:
//!
//! - `X-RateLimit-Limit`: the instance's daily cap;
//! - `X-RateLimit-Remaining`: calls left today (UTC);
//! - `X-RateLimit-Reset`: seconds until the count starts again (next UTC midnight).
//!
//! Refusals are 429 with `Retry-After` (seconds) and an empty body: 1 second for a full set of
//! concurrent slots, the time to midnight for an exhausted cap.
//!
//! The open routes (no credential) pass `open_instance_limits` instead of the first and last
//! steps: the instance is the route's, smoothing is per client address, and the limits are the
//! same.

use std::future::Future;
use std::sync::Arc;

use axum::extract::rejection::RawPathParamsRejection;
use axum::extract::{FromRequestParts, RawPathParams, Request, State};
use axum::http::request::Parts;
use axum::http::{HeaderName, HeaderValue};
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};

use super::error::ApiError;
use super::extract::Caller;
use super::ApiContext;

use crate::limits::{CallSlot, Usage};
use crate::tenants::Tenant;

pub async fn authenticate(State(ctx): State<ApiContext>, mut request: Request, next: Next) -> Response {
    match Caller::authenticate(request.headers(), &ctx).await {
        Ok(caller) => {
            request.extensions_mut().insert(caller);
            next.run(request).await
        }
        Err(e) => e.into_response(),
    }
}

pub async fn instance_limits(State(ctx): State<ApiContext>, request: Request, next: Next) -> Response {
    let Some(caller) = request.extensions().get::<Caller>().cloned() else {
        return ApiError::Unauthorized.into_response();
    };
    within_limits(&ctx, &caller.tenant, || next.run(request)).await
}

/// The open routes' admission (the open extensions endpoint, its execution status, the testing
/// hello): no credential, so the instance is the route's `{customer_id}` (404 when there is no
/// such instance), then the same limits as an authenticated call. The handler gets the instance
/// with the `OpenInstance` extractor.
pub async fn open_instance_limits(
    State(ctx): State<ApiContext>,
    params: Result<RawPathParams, RawPathParamsRejection>,
    mut request: Request,
    next: Next,
) -> Response {
    let tenant = match route_instance(&ctx, params).await {
        Ok(tenant) => tenant,
        Err(refused) => return refused,
    };
    request.extensions_mut().insert(OpenInstance(Arc::clone(&tenant)));
    within_limits(&ctx, &tenant, || next.run(request)).await
}

/// The instance an open route's `{customer_id}` names, opened if it sleeps; or the refusal: 400
/// for a path segment that is not UTF-8 once decoded, 404 for no such instance.
pub(super) async fn route_instance(
    ctx: &ApiContext,
    params: Result<RawPathParams, RawPathParamsRejection>,
) -> Result<Arc<Tenant>, Response> {
    let params = match params {
        Ok(params) => params,
        // The only rejection in a route's layer: a segment that is not UTF-8 once decoded.
        Err(_) => return Err(ApiError::bad(format!("invalid path: {}", super::extract::SEGMENT_NOT_UTF8)).into_response()),
    };
    let Some((_, customer_id)) = params.iter().find(|(name, _)| *name == "customer_id") else {
        return Err(ApiError::NotFound.into_response());
    };
    instance_named(ctx, customer_id).await
}

/// The instance `customer_id` (decoded) names, opened if it sleeps; 404 for no such instance.
pub(super) async fn instance_named(ctx: &ApiContext, customer_id: &str) -> Result<Arc<Tenant>, Response> {
    ctx.tenants.activate(customer_id).await.map_err(|e| ApiError::inactive(e, ApiError::NotFound).into_response())
}

/// The answer `answer` makes within the instance's limits: a slot among its concurrent calls and
/// a call of its daily cap taken first (or the refusal answered instead), the standing against
/// the cap added to the answer. `answer` is called once the call is admitted: its future, made
/// here, is held once in this one's (an `async fn` keeps a future it is given twice, as given
/// and as awaited, and an extension call's is kilobytes: `crate::cold`).
pub(super) async fn within_limits<F: Future<Output = Response>>(ctx: &ApiContext, tenant: &Tenant, answer: impl FnOnce() -> F) -> Response {
    // The slot is held until the answer's head is ready (a streamed body may outlive it).
    let (_slot, usage) = match admit(ctx, tenant).await {
        Ok(admitted) => admitted,
        Err(refused) => return refused,
    };
    let mut response = answer().await;
    usage_headers(&mut response, usage);
    label(&mut response, tenant);
    response
}

/// The instance an open route names, admitted by `open_instance_limits`.
#[derive(Clone)]
pub struct OpenInstance(pub Arc<Tenant>);

impl<S: Send + Sync> FromRequestParts<S> for OpenInstance {
    type Rejection = ApiError;

    async fn from_request_parts(parts: &mut Parts, _: &S) -> Result<OpenInstance, ApiError> {
        // Only missing on a route outside the open routers' layer: a fault in the router.
        parts.extensions.get::<OpenInstance>().cloned().ok_or(ApiError::NotFound)
    }
}

/// Tells the request metrics which instance a response was for.
fn label(response: &mut Response, tenant: &Tenant) {
    // Only where metrics are recorded: three allocations a call otherwise.
    if !crate::ops::metrics::recording() {
        return;
    }
    response.extensions_mut().insert(crate::ops::metrics::InstanceLabel(tenant.customer_id().to_string()));
}

/// Takes one of the instance's concurrent slots and counts the call against its daily cap, or
/// answers the refusal.
async fn admit<'a>(ctx: &ApiContext, tenant: &'a Tenant) -> Result<(CallSlot<'a>, Usage), Response> {
    let slot = match ctx.limits.concurrency.admit(tenant.customer_id(), &tenant.counts).await {
        Ok(Some(slot)) => slot,
        Ok(None) => return Err(ApiError::TooManyRequests { retry_after: 1 }.into_response()),
        Err(e) => return Err(ApiError::from(e).into_response()),
    };
    let cap = tenant.settings.effective_daily_cap();
    match ctx.limits.daily.admit(tenant.customer_id(), &tenant.counts, cap, ctx.clock.now_millis()).await {
        Ok(Ok(usage)) => Ok((slot, usage)),
        Ok(Err(usage)) => {
            let mut refused = ApiError::TooManyRequests { retry_after: usage.reset_secs }.into_response();
            usage_headers(&mut refused, usage);
            Err(refused)
        }
        Err(e) => Err(ApiError::from(e).into_response()),
    }
}

/// Names made at compile time: `from_static` at every answer checked each name's bytes anew.
static LIMIT: HeaderName = HeaderName::from_static("x-ratelimit-limit");
static REMAINING: HeaderName = HeaderName::from_static("x-ratelimit-remaining");
static RESET: HeaderName = HeaderName::from_static("x-ratelimit-reset");

fn usage_headers(response: &mut Response, usage: Usage) {
    let headers = response.headers_mut();
    // Room for these and for what `front::finish` adds to every answer after them (the browser
    // policy's three, the request id): one growth of the map, not two.
    headers.reserve(3 + 4);
    headers.insert(&LIMIT, LAST_LIMIT.with(|last| last.value_of(usage.limit)));
    headers.insert(&REMAINING, HeaderValue::from(usage.remaining));
    headers.insert(&RESET, LAST_RESET.with(|last| last.value_of(usage.reset_secs)));
}

thread_local! {
    /// The cap and the seconds to midnight change rarely between two calls on one thread (the
    /// cap is the instance's, the reset a second's): their last values are kept with the header
    /// value made of them, which a call then shares instead of formatting and allocating anew.
    static LAST_LIMIT: LastValue = const { LastValue(std::cell::RefCell::new(None)) };
    static LAST_RESET: LastValue = const { LastValue(std::cell::RefCell::new(None)) };
}

/// A number's header value, kept for the next call that sends the same number.
struct LastValue(std::cell::RefCell<Option<(u64, HeaderValue)>>);

impl LastValue {
    fn value_of(&self, number: u64) -> HeaderValue {
        let mut last = self.0.borrow_mut();
        match &*last {
            Some((kept, value)) if *kept == number => value.clone(),
            _ => {
                let value = HeaderValue::from(number);
                *last = Some((number, value.clone()));
                value
            }
        }
    }
}

pub mod rate;

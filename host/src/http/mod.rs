//! The REST API (axum). One module per resource, each with its own `router()`; this module
//! merges them, owns the shared state and the cross-cutting layers (content negotiation, body
//! limit, tracing), and runs the listeners.

mod assets;
mod batch;
mod browser_policy;
mod console;
mod discovery;
mod embedded;
pub(crate) mod error;
mod extension_calls;
mod extension_status;
mod extensions;
pub(crate) mod extract;
mod flow_runs;
mod flow_stats;
mod flows;
mod front;
mod global_data;
mod guard;
mod imports;
mod monitors;
mod negotiate;
mod oauth;
pub(crate) mod openapi;
mod recipients;
mod register;
mod secrets;
mod serde_terms;
mod tables;
#[cfg(feature = "testing")]
mod testing;
mod usage;
mod webapps;
mod webdav;
mod wire;

use std::sync::Arc;

use axum::extract::DefaultBodyLimit;
use axum::middleware;
use axum::Router;

pub use error::{ApiError, ApiResult};
// For the fuzz tests of path identifiers.
#[cfg(test)]
pub(crate) use recipients::parse_ref;

use crate::auth::Authenticator;
use crate::clock::Clock;
use crate::limits::Limits;
use crate::queue::Queue;
use crate::rsql::{Condition, Selectors};
use crate::runtime::Runtime;
use crate::tenants::{Tenant, Tenants};

pub use crate::limits::MAX_PAYLOAD_BYTES;

/// State shared by every handler. Cloned for every request (axum's `State`, the middleware), so
/// it is one `Arc`: a clone is one reference count, not one per service, and those counters are
/// written from every core.
#[derive(Clone)]
pub struct ApiContext(Arc<ApiServices>);

impl ApiContext {
    pub fn new(services: ApiServices) -> ApiContext {
        ApiContext(Arc::new(services))
    }
}

impl std::ops::Deref for ApiContext {
    type Target = ApiServices;

    fn deref(&self) -> &ApiServices {
        &self.0
    }
}

/// What the handlers reach through `ApiContext`.
pub struct ApiServices {
    pub data_dir: Arc<std::path::Path>,
    pub tenants: Arc<Tenants>,
    pub auth: Arc<Authenticator>,
    pub clock: Arc<dyn Clock>,
    pub limits: Arc<Limits>,
    pub runtime: Arc<Runtime>,
    pub queue: Arc<Queue>,
    pub flows: Arc<crate::flows::FlowEngine>,
    /// Whether the open extensions endpoint is on this API listener (no second listener).
    pub open_on_api: bool,
    /// Bytes each instance's media area may take (`assets::quota`).
    pub media_quota: u64,
    /// The largest body of an import (`imports`).
    pub import_max_bytes: u64,
}

/// The description of every operation, one part per resource module; `openapi::document`
/// finishes it. (The testing routes are no part of the platform.)
fn described() -> Vec<utoipa::openapi::OpenApi> {
    use utoipa::OpenApi;
    let mut parts = vec![
        oauth::Doc::openapi(),
        global_data::Doc::openapi(),
        tables::Doc::openapi(),
        discovery::Doc::openapi(),
        flows::Doc::openapi(),
        flow_runs::Doc::openapi(),
        flow_stats::Doc::openapi(),
        usage::Doc::openapi(),
        register::Doc::openapi(),
        secrets::Doc::openapi(),
        monitors::Doc::openapi(),
        imports::Doc::openapi(),
        webdav::Doc::openapi(),
        extensions::Doc::openapi(),
        extension_status::Doc::openapi(),
        webapps::Doc::openapi(),
        console::Doc::openapi(),
        openapi::Doc::openapi(),
    ];
    parts.extend(recipients::described());
    parts.extend(assets::described());
    parts
}

/// The REST API under `{base_url}`.
///
/// Layers run from the last added inward: content negotiation, authentication, rate smoothing per
/// credential (when the operator turned it on), the instance's limits (concurrency, daily cap), then the handler.
pub fn api_router(ctx: ApiContext) -> PublicApp {
    let rate = ctx.limits.rate;
    let json_api = Router::new()
        .merge(recipients::router())
        .merge(global_data::router())
        .merge(tables::router())
        .merge(discovery::router())
        .merge(flows::router())
        .merge(flow_runs::router())
        .merge(flow_stats::router())
        .merge(usage::router())
        .merge(register::router())
        .merge(secrets::router())
        .merge(monitors::router())
        .merge(imports::router())
        .merge(openapi::instance::router());
    #[cfg(feature = "testing")]
    let json_api = json_api.merge(testing::router());
    let json_api = json_api.layer(middleware::from_fn(negotiate::json_only));
    let uploads = assets::router().layer(middleware::from_fn(negotiate::answers_json));
    // Unknown paths answer 404 only to authenticated callers, and count like any call.
    let guarded = json_api
        .merge(uploads)
        .merge(webdav::router())
        .merge(extensions::logs_router())
        .merge(extension_status::secure_router())
        .fallback(|| async { ApiError::NotFound })
        .layer(middleware::from_fn_with_state(ctx.clone(), guard::instance_limits));
    let credentials = rate
        .smooths_credentials()
        .then(|| guard::rate::Smoothing::new(guard::rate::CredentialKey, rate.per_credential_per_second, rate.per_credential_burst));
    let guarded = match &credentials {
        Some(smoothing) => guarded.layer(smoothing.layer()),
        None => guarded,
    };
    let guarded = guarded.layer(middleware::from_fn_with_state(ctx.clone(), guard::authenticate));
    let token = oauth::router().layer(guard::rate::layer(guard::rate::AddressKey, rate.per_address_per_second, rate.per_address_burst));
    let (open, open_calls) = match ctx.open_on_api {
        true => {
            let (router, smoothing) = open_extensions(&ctx);
            (router, Some(smoothing))
        }
        false => (Router::new(), None),
    };
    let app =
        Router::new().merge(guarded).merge(token).merge(open).merge(webapps::router()).merge(openapi::router()).merge(console::router());
    // Extension calls take the same steps in a service of their own, matched before the router
    // (`extension_calls.rs`).
    public(app, ctx, Some(credentials), open_calls)
}

/// A public listener's service: its router and extension calls inside one payload limit and
/// `front.rs`.
pub type PublicApp = front::Front<<DefaultBodyLimit as tower::Layer<extension_calls::Dispatch>>::Service>;

/// What every public listener does around its routes: one payload limit, and `front.rs` (the
/// request id and the call's span, a declared length over the limit refused before anything is
/// read, JSON answers labelled, the browser policy); and, where an operator listener shows the
/// figures, each call's count and duration (by route template, never the raw path).
///
/// The limit and `front.rs` wrap the router, not each route: `Router::layer` wraps every route
/// in a boxed service of its own, cloned and called at every call (issue 41: a tenth of an
/// extension call's instructions went to the router's boxes, `bench/instructions.sh`).
///
/// `secure` and `open` are the extension calls' doors this listener has (with the smoothing of
/// their callers, shared with the router's routes), matched before the router.
fn public(
    router: Router<ApiContext>,
    ctx: ApiContext,
    secure: Option<Option<guard::rate::Smoothing<guard::rate::CredentialKey>>>,
    open: Option<guard::rate::Smoothing<guard::rate::AddressKey>>,
) -> PublicApp {
    // Only where shown: the middleware costs a few percent of the fastest calls (a cloned route
    // and two boxed futures per call). Per route, since it labels a call by its route template.
    let router = if crate::ops::metrics::recording() { router.layer(middleware::from_fn(crate::ops::metrics::track)) } else { router };
    let dispatch = extension_calls::Dispatch::new(&ctx, router.with_state(ctx.clone()), secure, open);
    let limited = tower::Layer::layer(&DefaultBodyLimit::max(MAX_PAYLOAD_BYTES), dispatch);
    tower::Layer::layer(&front::FrontLayer, limited)
}

/// The open routes other than extension calls (an asynchronous call's status, the testing
/// hello), smoothed per client address (no credentials to key on), and that smoothing, which
/// the open extension calls (`extension_calls.rs`) share: one allowance for both.
fn open_extensions(ctx: &ApiContext) -> (Router<ApiContext>, guard::rate::Smoothing<guard::rate::AddressKey>) {
    let rate = ctx.limits.rate;
    let smoothing = guard::rate::Smoothing::new(guard::rate::AddressKey, rate.per_address_per_second, rate.per_address_burst);
    let open = extension_status::open_router();
    #[cfg(feature = "testing")]
    let open = open.merge(testing::open_router());
    let router = open.route_layer(middleware::from_fn_with_state(ctx.clone(), guard::open_instance_limits)).layer(smoothing.layer());
    (router, smoothing)
}

/// The second listener (`{extensions_base_url}`), when configured: the open endpoint only.
pub fn extensions_router(ctx: ApiContext) -> PublicApp {
    let (open, smoothing) = open_extensions(&ctx);
    let app = open.fallback(|| async { ApiError::NotFound });
    public(app, ctx, None, Some(smoothing))
}

/// Parses and compiles an optional `filter` query parameter against `selectors`.
pub(crate) fn filter_condition(filter: Option<&str>, selectors: &dyn Selectors, tenant: &Tenant) -> ApiResult<Option<Condition>> {
    Ok(crate::domain::filter(filter, selectors, tenant)?)
}

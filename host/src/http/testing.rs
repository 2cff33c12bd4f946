//! Endpoints compiled only with the `testing` feature (the test crate and the benchmarks turn it
//! on): `GET /testing/sleep?ms=N` answers 200 after N milliseconds (at most 10 s), inside every
//! limit like any other call; `GET /testing/open/{customerId}/hello` answers `hello` natively
//! through the same admission as the open extensions endpoint (the benchmark's baseline).

use std::time::Duration;

use axum::routing::get;
use axum::Router;
use serde::Deserialize;

use axum::extract::{Path, State};
use axum::http::header;
use axum::response::{IntoResponse, Response};

use super::error::ApiError;
use super::extract::{AppQuery, PublicCaller};
use super::{guard, ApiContext};

pub(super) fn router() -> Router<ApiContext> {
    Router::new().route("/testing/sleep", get(sleep))
}

/// Served beside the open extensions endpoint, with its rate smoothing.
pub(super) fn open_router() -> Router<ApiContext> {
    Router::new().route("/testing/open/{customer_id}/hello", get(hello))
}

async fn hello(State(ctx): State<ApiContext>, Path(customer_id): Path<String>) -> Response {
    let Some(tenant) = ctx.tenants.get(&customer_id) else { return ApiError::NotFound.into_response() };
    let (_slot, usage) = match guard::admit(&ctx, &tenant).await {
        Ok(admitted) => admitted,
        Err(refused) => return refused,
    };
    let mut response = ([(header::CONTENT_TYPE, "text/plain")], "hello").into_response();
    guard::usage_headers(&mut response, usage);
    response
}

#[derive(Deserialize)]
struct Sleep {
    ms: u64,
}

async fn sleep(_caller: PublicCaller, AppQuery(q): AppQuery<Sleep>) -> &'static str {
    tokio::time::sleep(Duration::from_millis(q.ms.min(10_000))).await;
    "slept"
}

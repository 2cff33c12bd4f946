//! A deliberately slow endpoint for the limit tests, compiled only with the `testing` feature
//! (which the test crate turns on): `GET /testing/sleep?ms=N` answers 200 after N milliseconds
//! (at most 10 s), inside every limit like any other call.

use std::time::Duration;

use axum::routing::get;
use axum::Router;
use serde::Deserialize;

use super::extract::{AppQuery, PublicCaller};
use super::ApiContext;

pub(super) fn router() -> Router<ApiContext> {
    Router::new().route("/testing/sleep", get(sleep))
}

#[derive(Deserialize)]
struct Sleep {
    ms: u64,
}

async fn sleep(_caller: PublicCaller, AppQuery(q): AppQuery<Sleep>) -> &'static str {
    tokio::time::sleep(Duration::from_millis(q.ms.min(10_000))).await;
    "slept"
}

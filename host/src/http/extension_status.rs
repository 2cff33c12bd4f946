//! The status of asynchronous executions (spec: States and transitions):
//! `GET /extensions/status/secure/{queueId}` (authenticated; the caller's instance only) and
//! `GET /extensions/status/open/{customerId}/{queueId}` (the customerId of the original call).
//!
//! - queued or running: 202 `{"queueId"}`;
//! - queued or running for longer than the report threshold (1 minute by default, measured from
//!   the 202): 400 with a message; the execution goes on and a later call returns its result;
//! - complete: the extension's own status, headers and body (again on every call until the
//!   retention ends);
//! - ended at its execution limit: 504; failed (trap, panic, memory cap, no answer): 502; both
//!   with empty bodies, like a synchronous call, and the reason in the extension's log;
//! - an unknown queueId, one of another instance, a customerId that does not match, a call made
//!   through the other endpoint (a secure call's status is never answered on the open path, which
//!   needs no credentials), or a result past its retention: 404.

use axum::extract::State;
use axum::http::{HeaderName, HeaderValue, StatusCode};
use axum::response::{IntoResponse, Response};
use axum::routing::get;
use axum::Router;

use super::error::ApiError;
use super::extract::{AppPath, PublicCaller};
use super::guard::OpenInstance;
use super::openapi::schemas as s;
use super::ApiContext;
use crate::queue::Status;
use crate::store::jobs::Door;

#[derive(utoipa::OpenApi)]
#[openapi(paths(secure, open))]
pub(super) struct Doc;

pub(super) fn secure_router() -> Router<ApiContext> {
    Router::new().route("/extensions/status/secure/{queue_id}", get(secure))
}

pub(super) fn open_router() -> Router<ApiContext> {
    Router::new().route("/extensions/status/open/{customer_id}/{queue_id}", get(open))
}

#[utoipa::path(get, path = "/extensions/status/secure/{queueId}", tag = "Extensions", summary = "The status of an asynchronous secure call", responses((status = 200, description = "The execution completed: the extension's own answer."),
        (status = 202, description = "Still queued or running.", body = s::QueueHandle),
        (status = 400, description = "The execution has run longer than a minute (a later call may still give its answer).", body = s::Message),
        (status = 502, description = "The execution failed."),
        (status = 504, description = "The execution ran past its deadline.")))]
async fn secure(State(ctx): State<ApiContext>, caller: PublicCaller, AppPath(queue_id): AppPath<String>) -> Response {
    answer(&ctx, caller.tenant.customer_id(), Door::Secure, &queue_id).await
}

#[utoipa::path(get, path = "/extensions/status/open/{customerId}/{queueId}", tag = "Extensions", summary = "The status of an asynchronous open call", responses((status = 200, description = "The execution completed: the extension's own answer."),
        (status = 202, description = "Still queued or running.", body = s::QueueHandle),
        (status = 400, description = "The execution has run longer than a minute (a later call may still give its answer).", body = s::Message),
        (status = 502, description = "The execution failed."),
        (status = 504, description = "The execution ran past its deadline.")))]
async fn open(
    State(ctx): State<ApiContext>,
    OpenInstance(tenant): OpenInstance,
    AppPath((_, queue_id)): AppPath<(String, String)>,
) -> Response {
    answer(&ctx, tenant.customer_id(), Door::Open, &queue_id).await
}

async fn answer(ctx: &ApiContext, customer_id: &str, door: Door, queue_id: &str) -> Response {
    let status = match ctx.queue.status(customer_id, door, queue_id).await {
        Ok(Some(status)) => status,
        Ok(None) => return ApiError::NotFound.into_response(),
        Err(e) => return ApiError::from(e).into_response(),
    };
    match status {
        Status::Pending => (StatusCode::ACCEPTED, axum::Json(s::QueueHandle { queue_id: queue_id.into() })).into_response(),
        Status::Overdue => ApiError::bad(format!(
            "the execution has run longer than {} seconds and is not complete; it goes on, ask again later for its result",
            ctx.queue.settings().report_after.as_secs_f64()
        ))
        .into_response(),
        Status::Done(stored) => {
            let mut response = Response::new(axum::body::Body::from(stored.body));
            *response.status_mut() = StatusCode::from_u16(stored.status).unwrap_or(StatusCode::OK);
            for (name, value) in stored.headers {
                if let (Ok(name), Ok(value)) = (HeaderName::try_from(name), HeaderValue::try_from(value)) {
                    response.headers_mut().append(name, value);
                }
            }
            super::extensions::guest_answer(response)
        }
        Status::Deadline => StatusCode::GATEWAY_TIMEOUT.into_response(),
        Status::Failed => StatusCode::BAD_GATEWAY.into_response(),
    }
}

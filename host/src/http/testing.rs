//! Endpoints compiled only with the `testing` feature (the test crate and the benchmarks turn it
//! on): `GET /testing/sleep?ms=N` answers 200 after N milliseconds (at most 10 s), inside every
//! limit like any other call; `GET /testing/open/{customerId}/hello` answers `hello` natively
//! through the same admission as the open extensions endpoint (the benchmark's baseline);
//! `POST /testing/extensions/{extensionId}/:run` calls a step, condition, monitor or authheader
//! extension through the runtime's call path, as flows, schedules and outbound calls do, for
//! tests that look at one call alone: body `{"recipient": <Recipient Id>, "context": {...},
//! "host", "method", "path"}` as the kind needs, answer `{"outcome": "ok"|"declined"|"deadline"|
//! "failed", "value"?, "reason"?}`.

use std::time::Duration;

use axum::routing::{get, post};
use axum::Router;
use serde::Deserialize;

use axum::extract::State;
use axum::http::header;
use axum::response::{IntoResponse, Response};

use super::error::ApiError;
use super::extract::{AppJson, AppPath, AppQuery, PublicCaller};
use super::guard::OpenInstance;
use super::ApiContext;

pub(super) fn router() -> Router<ApiContext> {
    Router::new().route("/testing/sleep", get(sleep)).route("/testing/extensions/{extension_id}/{method}", post(run_extension))
}

#[derive(Deserialize, Default)]
#[serde(default)]
struct RunBody {
    recipient: Option<f64>,
    context: Option<serde_json::Value>,
    host: String,
    method: String,
    path: String,
}

async fn run_extension(
    State(ctx): State<ApiContext>,
    caller: PublicCaller,
    AppPath((id, method)): AppPath<(String, String)>,
    AppJson(body): AppJson<RunBody>,
) -> Result<axum::Json<serde_json::Value>, ApiError> {
    use crate::runtime::{Call, ExtensionKind, RecordedInput};
    if method != ":run" {
        return Err(ApiError::NotFound);
    }
    let tenant = caller.tenant.clone();
    let rel = crate::assets::RelPath::parse("extension", &format!("{id}.wasm")).map_err(ApiError::BadRequest)?;
    let record = tenant.db.extension(&rel.as_text()).await?.ok_or(ApiError::NotFound)?;
    let kind = record.kind().ok_or(ApiError::NotFound)?;
    let extension = ctx.runtime.extension(&tenant, &id, kind).await?.ok_or(ApiError::NotFound)?;
    let recipient = match body.recipient {
        Some(n) => {
            let id_field = tenant.model.def.recipient_id_index();
            let r = crate::domain::recipients::find(&tenant, id_field, &crate::model::Value::Number(n)).await?.ok_or(ApiError::NotFound)?;
            crate::runtime::input::fields_to_json(&crate::runtime::person_fields(&tenant.model, &r.values))
        }
        None => serde_json::Map::new(),
    };
    let input = match kind {
        ExtensionKind::Step => RecordedInput::Step { recipient, context: body.context },
        ExtensionKind::Condition => RecordedInput::Condition { recipient, context: body.context },
        ExtensionKind::Monitor => RecordedInput::Monitor {},
        ExtensionKind::Authheader => RecordedInput::Authheader { host: body.host, method: body.method, path: body.path },
        ExtensionKind::Http => return Err(ApiError::bad("http extensions are called through their endpoints")),
    };
    let call = Call {
        deadline: ctx.runtime.deadline(&extension.config),
        extension,
        id: id.clone(),
        tenant: tenant.clone(),
        context: None,
        lineage: Default::default(),
        journal: None,
    };
    let ran = ctx.runtime.run_input(call, kind, input).await.map_err(ApiError::BadRequest)?;
    Ok(axum::Json(ran.to_json()))
}

/// Served beside the open extensions endpoint, with its rate smoothing.
pub(super) fn open_router() -> Router<ApiContext> {
    Router::new().route("/testing/open/{customer_id}/hello", get(hello))
}

async fn hello(_: OpenInstance) -> Response {
    ([(header::CONTENT_TYPE, "text/plain")], "hello").into_response()
}

#[derive(Deserialize)]
struct Sleep {
    ms: u64,
}

async fn sleep(_caller: PublicCaller, AppQuery(q): AppQuery<Sleep>) -> &'static str {
    tokio::time::sleep(Duration::from_millis(q.ms.min(10_000))).await;
    "slept"
}

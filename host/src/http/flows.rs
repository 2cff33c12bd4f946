//! Flows through the API (Public Api credential of the instance):
//!
//! - `GET /flows`: every flow of the instance, the operator's (`"source": "definition"`, from the
//!   instance definition) and its own (`"source": "api"`), each with its `name`, `version` and
//!   definition;
//! - `GET /flows/{name}`: one; a scheduled flow also has `scheduled`: `nextAt` and `lastFiring`
//!   (`at`, `recipients` its sweep has started runs for so far, `done`);
//! - `PUT /flows/{name}` with a flow (`model::flow` has the format): **201** created / **200**
//!   replaced, with the stored flow; **400** with every problem in `message` (one per line);
//!   **409** for a flow the instance definition ships (the operator's to change);
//! - `DELETE /flows/{name}`: **204**; **404**; **409** for the operator's.

use axum::extract::State;
use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};
use axum::routing::get;
use axum::{Json, Router};
use serde_json::Value as Json_;

use super::assets::media;
use super::error::{ApiError, ApiResult};
use super::extract::{json_body, AppBytes, AppPath, PublicCaller};
use super::openapi::schemas as s;
use super::ApiContext;
use crate::flows::{self, InstanceFlow, Source};
use crate::model::flow::Flow;

#[derive(utoipa::OpenApi)]
#[openapi(paths(list, one, put, remove))]
pub(super) struct Doc;

pub(super) fn router() -> Router<ApiContext> {
    Router::new().route("/flows", get(list)).route("/flows/{name}", get(one).put(put).delete(remove))
}

fn flow_json(f: &InstanceFlow) -> Json_ {
    let mut out = serde_json::to_value(&f.flow).expect("a flow serialises");
    let object = out.as_object_mut().expect("an object");
    object.insert("name".into(), f.flow.name.clone().into());
    object.insert("source".into(), f.source.name().into());
    object.insert("version".into(), f.version.into());
    out
}

#[utoipa::path(get, path = "/flows", tag = "Flows", summary = "The instance's flows", responses((status = 200, description = "Every flow, the operator's and the instance's own.", body = Vec<s::Flow>)))]
async fn list(caller: PublicCaller) -> ApiResult<Json<Vec<Json_>>> {
    Ok(Json(flows::all(&caller.tenant).await?.iter().map(flow_json).collect()))
}

#[utoipa::path(get, path = "/flows/{name}", tag = "Flows", summary = "One flow (a scheduled flow with its next and last firing)", responses((status = 200, description = "The flow.", body = s::Flow)))]
async fn one(State(ctx): State<ApiContext>, caller: PublicCaller, AppPath(name): AppPath<String>) -> ApiResult<Json<Json_>> {
    let t = &caller.tenant;
    let found = flows::find(t, &name).await?.ok_or(ApiError::NotFound)?;
    let mut out = flow_json(&found);
    if found.flow.trigger.schedule.is_some() {
        out["scheduled"] = match ctx.flows.control.flow_schedule(t.customer_id(), &name).await? {
            Some(found) => {
                let last_firing =
                    found.fired_at.map(|at| s::FlowFiring { at: time(t, at), recipients: found.swept, done: found.sweep_done });
                serde_json::to_value(s::FlowSchedule { next_at: time(t, found.next_at), last_firing }).expect("a schedule serialises")
            }
            // Not seen by a scheduler yet (it looks every few seconds).
            None => Json_::Null,
        };
    }
    Ok(Json(out))
}

pub(super) fn time(t: &crate::tenants::Tenant, millis: i64) -> String {
    t.model.formats.timestamp.format_timestamp(crate::clock::utc_at(millis))
}

fn operators(name: &str) -> ApiError {
    ApiError::Conflict(format!("flow {name} is defined by the operator's instance definition: change it there"))
}

#[utoipa::path(put, path = "/flows/{name}", tag = "Flows", summary = "Create or replace a flow", request_body = s::Flow,
    responses((status = 201, description = "Created.", body = s::Flow), (status = 200, description = "Replaced (runs under way finish on the version they started with).", body = s::Flow),
        (status = 400, description = "Every problem of the flow, one per line.", body = s::Message),
        (status = 409, description = "The operator's instance definition ships this flow.", body = s::Message)))]
async fn put(
    State(ctx): State<ApiContext>,
    caller: PublicCaller,
    AppPath(name): AppPath<String>,
    AppBytes(body): AppBytes,
) -> ApiResult<Response> {
    let tenant = &caller.tenant;
    let mut flow: Flow = json_body(&body).map_err(|e| match e {
        ApiError::BadRequest(m) => ApiError::bad(format!("the flow does not read: {m}")),
        other => other,
    })?;
    if !flow.name.is_empty() && flow.name != name {
        return Err(ApiError::bad(format!("the body names flow '{}', the path '{name}'", flow.name)));
    }
    flow.name = name.clone();
    let mut problems = Vec::new();
    let valid_name = name.len() <= 63
        && name.chars().next().is_some_and(|c| c.is_ascii_alphabetic())
        && name.chars().all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-');
    if !valid_name {
        problems.push(format!("the flow name '{name}' must start with a letter and hold only letters, digits, '_' and '-' (at most 63)"));
    }
    if tenant.model.def.flows.iter().any(|f| f.name.eq_ignore_ascii_case(&name)) {
        return Err(operators(&name));
    }
    problems.extend(flows::check(&flow, tenant, &media(&ctx, tenant)).await?);
    if !problems.is_empty() {
        return Err(ApiError::BadRequest(problems.join("\n")));
    }
    let definition = serde_json::to_string(&Flow { name: String::new(), ..flow.clone() }).expect("a flow serialises");
    let (stored, created) = tenant.db.put_flow(&name, &definition).await?;
    if created {
        // A schedule row left by a deleted flow of this name would fire this one at once.
        ctx.flows.control.forget_flow_schedule(tenant.customer_id(), &name).await?;
    }
    // The scheduler registers a schedule it had not seen (or forgets one now gone).
    ctx.tenants.touch(tenant.customer_id());
    let answer = flow_json(&InstanceFlow { flow, source: Source::Api, version: stored.version, updated_at: Some(stored.updated_at) });
    Ok((if created { StatusCode::CREATED } else { StatusCode::OK }, Json(answer)).into_response())
}

#[utoipa::path(delete, path = "/flows/{name}", tag = "Flows", summary = "Delete a flow",
    responses((status = 204, description = "Deleted."), (status = 409, description = "The operator's instance definition ships this flow.", body = s::Message)))]
async fn remove(State(ctx): State<ApiContext>, caller: PublicCaller, AppPath(name): AppPath<String>) -> ApiResult<StatusCode> {
    let tenant = &caller.tenant;
    if tenant.model.def.flows.iter().any(|f| f.name == name) {
        return Err(operators(&name));
    }
    if tenant.db.delete_flow(&name).await? {
        ctx.flows.control.forget_flow_schedule(tenant.customer_id(), &name).await?;
        Ok(StatusCode::NO_CONTENT)
    } else {
        Err(ApiError::NotFound)
    }
}

#[cfg(test)]
mod tests {
    #[test]
    fn the_json_form_names_the_flow_and_its_source() {
        let flow: super::Flow =
            serde_json::from_value(serde_json::json!({"trigger": {"event": "WELCOME"}, "nodes": [{"send": "welcome"}]})).unwrap();
        let json = super::flow_json(&super::InstanceFlow { flow, source: super::Source::Api, version: 3, updated_at: None });
        assert_eq!(json["source"], "api");
        assert_eq!(json["version"], 3);
        assert_eq!(json["nodes"][0]["send"], "welcome");
    }
}

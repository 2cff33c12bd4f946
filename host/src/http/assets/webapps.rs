//! Webapps: a `.zip` whose single top-level folder names the webapp, expanded into
//! `media/webapps/<name>/` and served at `/webapps/{customerId}/{name}/` (see `http::webapps`).

use axum::extract::State;
use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};
use axum::routing::{get, post};
use axum::{Json, Router};

use super::upload::{self, Form};
use super::{io_fault, media, ListQuery};
use crate::assets::quota::{full_message, Budget};
use crate::assets::webapps::{self, Refusal};
use crate::assets::{Kind, MediaArea, RelPath};
use crate::http::error::{ApiError, ApiResult};
use crate::http::extract::{AppQuery, PublicCaller};
use crate::http::openapi::schemas as s;
use crate::http::ApiContext;

#[derive(utoipa::OpenApi)]
#[openapi(paths(list_webapps, create, put))]
pub(super) struct Doc;

pub(super) fn router() -> Router<ApiContext> {
    Router::new().route("/assets/webapps", post(create).put(put)).route("/assets/webapps/list", get(list_webapps))
}

#[utoipa::path(get, path = "/assets/webapps/list", tag = "Assets", summary = "The webapps", params(("folder" = Option<String>, Query, description = "A folder path; the top when absent.")), responses((status = 404, description = "The folder or item is not there."), (status = 200, description = "The webapps.", body = Vec<s::AssetListItem>)))]
async fn list_webapps(
    State(ctx): State<ApiContext>,
    caller: PublicCaller,
    AppQuery(q): AppQuery<ListQuery>,
) -> ApiResult<Json<Vec<s::AssetListItem>>> {
    let media = media(&ctx, &caller.tenant);
    let (_, entries) = q.entries(&media, Kind::Webapps).await?;
    Ok(Json(entries.iter().map(|e| s::AssetListItem::new(&e.name, e.is_folder)).collect()))
}

async fn save(ctx: &ApiContext, caller: &PublicCaller, form: Form, replace: bool) -> ApiResult<Response> {
    let media = media(ctx, &caller.tenant);
    let mut fields = upload::read(&media, form).await?;
    let file = fields.take_file()?;
    if !file.name.to_ascii_lowercase().ends_with(".zip") {
        return Err(ApiError::bad("a webapp is uploaded as a .zip archive"));
    }
    let expanded = media.temp_path().await.map_err(io_fault)?;
    let budget = Budget::within(media.room().await?, webapps::MAX_EXPANDED_BYTES);
    let (archive, dest) = (file.temp.path().to_path_buf(), expanded.path().to_path_buf());
    let name = tokio::task::spawn_blocking(move || webapps::extract(&archive, &dest, budget.bytes))
        .await
        .map_err(|e| ApiError::Internal(e.into()))?
        .map_err(|r| match r {
            Refusal::Invalid(m) => ApiError::BadRequest(m),
            Refusal::TooLarge if budget.by_quota => ApiError::quota_exceeded(full_message(&media)),
            Refusal::TooLarge => ApiError::bad(format!("the archive expands to more than {} bytes", webapps::MAX_EXPANDED_BYTES)),
            Refusal::Io(e) => io_fault(e),
        })?;
    let item = RelPath::root().join(&name);
    let target = media.path(Kind::Webapps, &item);
    let writing = media.writing().await?;
    tokio::fs::create_dir_all(target.parent().expect("webapps folder")).await.map_err(io_fault)?;
    let exists = tokio::fs::try_exists(&target).await.map_err(io_fault)?;
    if exists && !replace {
        return Err(ApiError::Conflict(format!("webapp {name} exists; PUT replaces it")));
    }
    // The old version moves aside (and is removed with its temporary name) before the new one
    // moves in: each step is a rename, so the webapp is never half-written.
    let old = media.temp_path().await.map_err(io_fault)?;
    if exists {
        tokio::fs::rename(&target, old.path()).await.map_err(io_fault)?;
    }
    tokio::fs::rename(expanded.path().join(&name), &target).await.map_err(io_fault)?;
    writing.publish(&[MediaArea::store_path(Kind::Webapps, &item)]).await?;
    let status = if exists { StatusCode::OK } else { StatusCode::CREATED };
    let url = format!("/webapps/{}/{name}/", caller.tenant.customer_id());
    Ok((status, Json(s::StoredWebapp { name: name.to_string(), url })).into_response())
}

#[utoipa::path(post, path = "/assets/webapps", tag = "Assets", summary = "Upload a webapp (a .zip archive holding one folder)",
    request_body(content = s::AssetForm, content_type = "multipart/form-data"),
    responses((status = 404, description = "The folder or item is not there."), (status = 201, description = "Stored and served.", body = s::StoredWebapp), (status = 409, description = "The webapp exists.", body = s::Message)))]
async fn create(State(ctx): State<ApiContext>, caller: PublicCaller, form: Form) -> ApiResult<Response> {
    save(&ctx, &caller, form, false).await
}

#[utoipa::path(put, path = "/assets/webapps", tag = "Assets", summary = "Create or replace a webapp",
    request_body(content = s::AssetForm, content_type = "multipart/form-data"),
    responses((status = 404, description = "The folder or item is not there."), (status = 201, description = "Created.", body = s::StoredWebapp), (status = 200, description = "Replaced.", body = s::StoredWebapp)))]
async fn put(State(ctx): State<ApiContext>, caller: PublicCaller, form: Form) -> ApiResult<Response> {
    save(&ctx, &caller, form, true).await
}

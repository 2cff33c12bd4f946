//! Context Parameter Schemas (`media/contexts/<name>.json`): POST creates, PUT creates or adds to
//! an existing schema (its models and fields cannot change). The format is in `assets::contexts`.

use axum::extract::State;
use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};
use axum::routing::{get, post};
use axum::{Json, Router};

use super::upload::{self, Form};
use super::{io_fault, media, stored, ListQuery};
use crate::assets::{contexts, Kind, MediaArea, RelPath};
use crate::http::error::{ApiError, ApiResult};
use crate::http::extract::{AppQuery, PublicCaller};
use crate::http::openapi::schemas as s;
use crate::http::ApiContext;

#[derive(utoipa::OpenApi)]
#[openapi(paths(list_schemas, create, put))]
pub(super) struct Doc;

pub(super) fn router() -> Router<ApiContext> {
    Router::new().route("/assets/contexts", post(create).put(put)).route("/assets/contexts/list", get(list_schemas))
}

#[utoipa::path(get, path = "/assets/contexts/list", tag = "Assets", summary = "The Context Parameter Schemas", params(("folder" = Option<String>, Query, description = "A folder path; the top when absent.")), responses((status = 404, description = "The folder or item is not there."), (status = 200, description = "The schemas.", body = Vec<s::AssetListItem>)))]
async fn list_schemas(
    State(ctx): State<ApiContext>,
    caller: PublicCaller,
    AppQuery(q): AppQuery<ListQuery>,
) -> ApiResult<Json<Vec<s::AssetListItem>>> {
    let media = media(&ctx, &caller.tenant);
    let (_, entries) = q.entries(&media, Kind::Contexts).await?;
    Ok(Json(entries.iter().map(|e| s::AssetListItem::new(&e.name, e.is_folder)).collect()))
}

async fn save(ctx: &ApiContext, caller: &PublicCaller, form: Form, replace: bool) -> ApiResult<Response> {
    let media = media(ctx, &caller.tenant);
    let mut fields = upload::read(&media, form).await?;
    let file = fields.take_file()?;
    if !file.name.ends_with(".json") || file.name.len() == ".json".len() {
        return Err(ApiError::bad("a Context Parameter Schema is a .json file; its name without .json names the schema"));
    }
    let path = RelPath::root().join(&file.name);
    let bytes = tokio::fs::read(file.temp.path()).await.map_err(io_fault)?;
    let schema = contexts::parse(&bytes).map_err(ApiError::BadRequest)?;
    let target = media.path(Kind::Contexts, &path);
    let stored_at = MediaArea::store_path(Kind::Contexts, &path);
    let size = file.size;
    let exists = || ApiError::Conflict(format!("contexts/{} exists; PUT adds to it", file.name));
    // The store's copy is the one every node reads (`flows::context`).
    let tenant = &caller.tenant;
    let name = file.name.trim_end_matches(".json");
    let writing = media.writing().await?;
    let old = crate::flows::context::schema_bytes(tenant, &media, name).await;
    if !replace {
        if old.is_some() {
            return Err(exists());
        }
        file.temp.replace(&target).await.map_err(io_fault)?;
        if !writing.publish_new(&stored_at).await? {
            return Err(exists());
        }
        return Ok((StatusCode::CREATED, Json(stored("contexts", &path, size))).into_response());
    }
    if let Some(old) = &old {
        // A stored schema that no longer parses is replaced rather than blocking the fix.
        if let Ok(old) = contexts::parse(old) {
            contexts::check_evolution(&old, &schema).map_err(ApiError::Conflict)?;
        }
    }
    file.temp.replace(&target).await.map_err(io_fault)?;
    writing.publish(&[stored_at]).await?;
    let status = if old.is_some() { StatusCode::OK } else { StatusCode::CREATED };
    Ok((status, Json(stored("contexts", &path, size))).into_response())
}

#[utoipa::path(post, path = "/assets/contexts", tag = "Assets", summary = "Upload a Context Parameter Schema",
    request_body(content = s::AssetForm, content_type = "multipart/form-data"),
    responses((status = 404, description = "The folder or item is not there."), (status = 201, description = "Stored.", body = s::StoredAsset), (status = 409, description = "The schema exists.", body = s::Message)))]
async fn create(State(ctx): State<ApiContext>, caller: PublicCaller, form: Form) -> ApiResult<Response> {
    save(&ctx, &caller, form, false).await
}

#[utoipa::path(put, path = "/assets/contexts", tag = "Assets", summary = "Create or change a Context Parameter Schema",
    request_body(content = s::AssetForm, content_type = "multipart/form-data"),
    responses((status = 404, description = "The folder or item is not there."), (status = 201, description = "Created.", body = s::StoredAsset), (status = 200, description = "Changed.", body = s::StoredAsset), (status = 409, description = "The change alters a field or model of the schema.", body = s::Message)))]
async fn put(State(ctx): State<ApiContext>, caller: PublicCaller, form: Form) -> ApiResult<Response> {
    save(&ctx, &caller, form, true).await
}

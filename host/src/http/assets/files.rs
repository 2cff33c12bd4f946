//! Resources and templates: list, upload (POST creates, PUT creates or replaces), delete
//! resources unless referenced, commit templates.

use axum::extract::State;
use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};
use axum::routing::{get, post};
use axum::{Json, Router};

use super::upload::{self, Form};
use super::{io_fault, media, stored, ListQuery};
use crate::assets::{references, Kind, MediaArea, RelPath};
use crate::http::error::{ApiError, ApiResult};
use crate::http::extract::{AppQuery, PublicCaller};
use crate::http::openapi::schemas as s;
use crate::http::ApiContext;

#[derive(utoipa::OpenApi)]
#[openapi(paths(
    list_resources,
    create_resource,
    put_resource,
    delete_resource,
    list_templates,
    create_template,
    put_template,
    template_method
))]
pub(super) struct Doc;

pub(super) fn router() -> Router<ApiContext> {
    Router::new()
        .route("/assets/resources/list", get(list_resources))
        .route("/assets/resources", post(create_resource).put(put_resource).delete(delete_resource))
        .route("/assets/templates/list", get(list_templates))
        .route("/assets/templates", post(create_template).put(put_template))
        .route("/assets/templates/{method}", post(template_method))
}

async fn listing(ctx: &ApiContext, caller: &PublicCaller, kind: Kind, q: &ListQuery) -> ApiResult<Json<Vec<s::AssetListItem>>> {
    let media = media(ctx, &caller.tenant);
    let (folder, entries) = q.entries(&media, kind).await?;
    let media = MediaArea::clone(&media);
    let needles: Vec<(String, Option<String>)> = entries
        .iter()
        .map(|e| {
            let path = folder.join(&e.name).as_text();
            let own = (kind == Kind::Templates).then(|| path.clone());
            (format!("{}/{path}", kind.dir()), own)
        })
        .collect();
    let flags =
        tokio::task::spawn_blocking(move || references::referenced(&media, &needles)).await.map_err(|e| ApiError::Internal(e.into()))?;
    Ok(Json(
        entries
            .iter()
            .zip(flags)
            .map(|(e, referenced)| {
                let item = s::AssetListItem::new(&e.name, e.is_folder);
                if e.is_folder {
                    item
                } else {
                    s::AssetListItem { referenced: Some(referenced), ..item }
                }
            })
            .collect(),
    ))
}

#[utoipa::path(get, path = "/assets/resources/list", tag = "Assets", summary = "The resources of a folder", params(("folder" = Option<String>, Query, description = "A folder path; the top when absent.")), responses((status = 404, description = "The folder or item is not there."), (status = 200, description = "The items and folders.", body = Vec<s::AssetListItem>)))]
async fn list_resources(
    State(ctx): State<ApiContext>,
    caller: PublicCaller,
    AppQuery(q): AppQuery<ListQuery>,
) -> ApiResult<Json<Vec<s::AssetListItem>>> {
    listing(&ctx, &caller, Kind::Resources, &q).await
}

#[utoipa::path(get, path = "/assets/templates/list", tag = "Assets", summary = "The templates of a folder", params(("folder" = Option<String>, Query, description = "A folder path; the top when absent.")), responses((status = 404, description = "The folder or item is not there."), (status = 200, description = "The items and folders.", body = Vec<s::AssetListItem>)))]
async fn list_templates(
    State(ctx): State<ApiContext>,
    caller: PublicCaller,
    AppQuery(q): AppQuery<ListQuery>,
) -> ApiResult<Json<Vec<s::AssetListItem>>> {
    listing(&ctx, &caller, Kind::Templates, &q).await
}

/// POST (`replace` false: fails if the item exists) or PUT (creates or replaces).
async fn upload(ctx: &ApiContext, caller: &PublicCaller, kind: Kind, form: Form, replace: bool) -> ApiResult<Response> {
    let media = media(ctx, &caller.tenant);
    let mut fields = upload::read(&media, form).await?;
    let file = fields.take_file()?;
    let path = fields.folder()?.join(&file.name);
    let writing = media.writing().await?;
    let target = media.path(kind, &path);
    if tokio::fs::metadata(&target).await.is_ok_and(|m| m.is_dir()) {
        return Err(ApiError::Conflict(format!("{}/{} is a folder", kind.dir(), path.as_text())));
    }
    let size = file.size;
    let exists = || ApiError::Conflict(format!("{}/{} exists; PUT replaces it", kind.dir(), path.as_text()));
    let stored_at = MediaArea::store_path(kind, &path);
    let status = if replace {
        let existed = file.temp.replace(&target).await.map_err(io_fault)?;
        writing.publish(&[stored_at]).await?;
        if existed {
            StatusCode::OK
        } else {
            StatusCode::CREATED
        }
    } else if file.temp.create(&target).await.map_err(io_fault)? {
        // Another node may have created it since this one looked.
        if !writing.publish_new(&stored_at).await? {
            return Err(exists());
        }
        StatusCode::CREATED
    } else {
        return Err(exists());
    };
    Ok((status, Json(stored(kind.dir(), &path, size))).into_response())
}

#[utoipa::path(post, path = "/assets/resources", tag = "Assets", summary = "Upload a resource",
    request_body(content = s::AssetForm, content_type = "multipart/form-data"),
    responses((status = 404, description = "The folder or item is not there."), (status = 201, description = "Stored.", body = s::StoredAsset), (status = 409, description = "The item exists.", body = s::Message)))]
async fn create_resource(State(ctx): State<ApiContext>, caller: PublicCaller, form: Form) -> ApiResult<Response> {
    upload(&ctx, &caller, Kind::Resources, form, false).await
}

#[utoipa::path(put, path = "/assets/resources", tag = "Assets", summary = "Create or replace a resource",
    request_body(content = s::AssetForm, content_type = "multipart/form-data"),
    responses((status = 404, description = "The folder or item is not there."), (status = 201, description = "Created.", body = s::StoredAsset), (status = 200, description = "Replaced.", body = s::StoredAsset), (status = 409, description = "A folder of that name exists.", body = s::Message)))]
async fn put_resource(State(ctx): State<ApiContext>, caller: PublicCaller, form: Form) -> ApiResult<Response> {
    upload(&ctx, &caller, Kind::Resources, form, true).await
}

#[utoipa::path(post, path = "/assets/templates", tag = "Assets", summary = "Upload a template",
    request_body(content = s::AssetForm, content_type = "multipart/form-data"),
    responses((status = 404, description = "The folder or item is not there."), (status = 201, description = "Stored.", body = s::StoredAsset), (status = 409, description = "The item exists.", body = s::Message)))]
async fn create_template(State(ctx): State<ApiContext>, caller: PublicCaller, form: Form) -> ApiResult<Response> {
    upload(&ctx, &caller, Kind::Templates, form, false).await
}

#[utoipa::path(put, path = "/assets/templates", tag = "Assets", summary = "Create or replace a template",
    request_body(content = s::AssetForm, content_type = "multipart/form-data"),
    responses((status = 404, description = "The folder or item is not there."), (status = 201, description = "Created.", body = s::StoredAsset), (status = 200, description = "Replaced.", body = s::StoredAsset), (status = 409, description = "A folder of that name exists.", body = s::Message)))]
async fn put_template(State(ctx): State<ApiContext>, caller: PublicCaller, form: Form) -> ApiResult<Response> {
    upload(&ctx, &caller, Kind::Templates, form, true).await
}

/// The templates that reference a resource, or an empty list.
/// 409 naming the templates that reference `resources/<path>`, if any do (a referenced resource
/// cannot be deleted or moved away, through the API or WebDAV).
pub(crate) async fn refuse_if_referenced(media: MediaArea, path: &RelPath) -> ApiResult<()> {
    let needle = format!("resources/{}", path.as_text());
    let referrers = tokio::task::spawn_blocking(move || references::referrers(&media, &needle, None))
        .await
        .map_err(|e| ApiError::Internal(e.into()))?;
    if referrers.is_empty() {
        return Ok(());
    }
    Err(ApiError::Conflict(format!("resources/{} is referenced by templates/{}", path.as_text(), referrers.join(", templates/"))))
}

#[utoipa::path(delete, path = "/assets/resources", tag = "Assets", summary = "Delete a resource",
    request_body(content = s::AssetPathForm, content_type = "multipart/form-data"),
    responses((status = 404, description = "The folder or item is not there."), (status = 204, description = "Deleted."), (status = 409, description = "Templates reference the resource: the message names them.", body = s::Message)))]
async fn delete_resource(State(ctx): State<ApiContext>, caller: PublicCaller, form: Form) -> ApiResult<StatusCode> {
    let media = media(&ctx, &caller.tenant);
    let fields = upload::read(&media, form).await?;
    let path = fields.item()?;
    let writing = media.writing().await?;
    let target = media.path(Kind::Resources, &path);
    match tokio::fs::metadata(&target).await {
        Ok(m) if m.is_dir() => return Err(ApiError::bad(format!("resources/{} is a folder", path.as_text()))),
        Ok(_) => {}
        Err(_) => return Err(ApiError::NotFound),
    }
    refuse_if_referenced(MediaArea::clone(&media), &path).await?;
    tokio::fs::remove_file(&target).await.map_err(io_fault)?;
    writing.publish(&[MediaArea::store_path(Kind::Resources, &path)]).await?;
    Ok(StatusCode::NO_CONTENT)
}

#[utoipa::path(post, path = "/assets/templates/:commit", tag = "Assets", summary = "Commit a template's working copy",
    request_body(content = s::AssetPathForm, content_type = "multipart/form-data"),
    responses((status = 404, description = "The folder or item is not there."), (status = 200, description = "Committed.", body = s::CommittedTemplate)))]
/// POST `/assets/templates/:commit` (form: `file`, `folder`): the working copy becomes the
/// committed version.
async fn template_method(
    State(ctx): State<ApiContext>,
    caller: PublicCaller,
    crate::http::extract::AppPath(method): crate::http::extract::AppPath<String>,
    form: Form,
) -> ApiResult<Json<s::CommittedTemplate>> {
    if method != ":commit" {
        return Err(ApiError::NotFound);
    }
    let media = media(&ctx, &caller.tenant);
    let fields = upload::read(&media, form).await?;
    let path = fields.item()?;
    let writing = media.writing().await?;
    let working = media.path(Kind::Templates, &path);
    if !tokio::fs::metadata(&working).await.is_ok_and(|m| m.is_file()) {
        return Err(ApiError::NotFound);
    }
    // The store's copy is the one flow runs render, on whichever node (`flows::send`).
    let bytes = tokio::fs::read(&working).await.map_err(io_fault)?;
    let temp = media.temp_path().await.map_err(io_fault)?;
    tokio::fs::write(temp.path(), &bytes).await.map_err(io_fault)?;
    temp.replace(&media.committed_template(&path)).await.map_err(io_fault)?;
    writing.publish(&[MediaArea::committed_store_path(&path)]).await?;
    Ok(Json(s::CommittedTemplate { path: format!("templates/{}", path.as_text()), committed: true }))
}

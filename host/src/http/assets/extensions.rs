//! Extension files: POST (`file`, `type`, optional `folder`) stores a new extension, PUT replaces
//! an existing one, DELETE removes one, `GET /assets/extensions/list` lists them with their type.
//! Each upload is validated by the extension runtime (a component, that compiles, exports what its
//! type requires, imports only what Herald provides, with a valid configuration section); any
//! failure is a 400 saying which. An extension's id is its path without `.wasm`.

use axum::extract::State;
use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};
use axum::routing::{get, post};
use axum::{Json, Router};

use super::upload::{self, Form};
use super::{io_fault, media, stored, ListQuery};
use crate::http::error::{ApiError, ApiResult};
use crate::http::extract::{AppQuery, PublicCaller};
use crate::http::openapi::schemas as s;
use crate::http::ApiContext;
use crate::runtime::ExtensionKind;
use crate::store::tenant::ExtensionRecord;

#[derive(utoipa::OpenApi)]
#[openapi(paths(create, put, remove, list_extensions))]
pub(super) struct Doc;

pub(super) fn router() -> Router<ApiContext> {
    Router::new().route("/assets/extensions", post(create).put(put).delete(remove)).route("/assets/extensions/list", get(list_extensions))
}

fn checked_type(kind: Option<&str>) -> ApiResult<Option<ExtensionKind>> {
    match kind {
        None => Ok(None),
        Some(k) => ExtensionKind::parse(k)
            .map(Some)
            .ok_or_else(|| ApiError::bad(format!("unknown extension type '{k}' (one of {})", ExtensionKind::names()))),
    }
}

async fn save(ctx: &ApiContext, caller: &PublicCaller, form: Form, replace: bool) -> ApiResult<Response> {
    let tenant = &caller.tenant;
    let media = media(ctx, tenant);
    let mut fields = upload::read(&media, form).await?;
    let kind = checked_type(fields.kind.as_deref())?;
    let file = fields.take_file()?;
    let path = fields.folder()?.join(&file.name);
    let existing = tenant.db.extension(&path.as_text()).await?;
    let kind = match (replace, &existing, kind) {
        (false, Some(_), _) => return Err(ApiError::Conflict(format!("extension {} exists; PUT replaces it", path.as_text()))),
        (false, None, None) => return Err(ApiError::bad(format!("the form needs a 'type' ({})", ExtensionKind::names()))),
        (false, None, Some(k)) => k,
        (true, None, _) => return Err(ApiError::NotFound),
        (true, Some(e), k) => match k.or(e.kind()) {
            Some(k) => k,
            None => {
                return Err(ApiError::Internal(anyhow::anyhow!("extension {} has an unknown stored type '{}'", path.as_text(), e.kind)))
            }
        },
    };
    // The component is compiled and checked before it is stored; its precompiled artifact is
    // kept by content hash, so the first call (after a restart too) does not compile. It goes
    // into the instance's database too, where every node finds it; the file in the media area
    // is this node's copy.
    let content = axum::body::Bytes::from(tokio::fs::read(file.temp.path()).await.map_err(io_fault)?);
    let config = match ctx.runtime.validate(content.clone(), kind, &file.sha256).await? {
        Ok(config) => config,
        Err(message) => return Err(ApiError::BadRequest(message)),
    };
    check_against_instance(tenant, &path.as_text(), &config).await?;
    let record = ExtensionRecord {
        path: path.as_text(),
        kind: kind.name().to_string(),
        size: file.size,
        sha256: file.sha256.clone(),
        config: Some(config.to_json().to_string()),
    };
    file.temp.replace(&media.extension(&path)).await.map_err(io_fault)?;
    tenant.db.put_extension(&record, &content).await?;
    // A monitor's schedule is registered by the scheduler's next look.
    ctx.tenants.touch(tenant.customer_id());
    let url = (kind == ExtensionKind::Http).then(|| call_url(tenant.customer_id(), &record.path, config.open));
    let body = s::StoredAsset { r#type: Some(record.kind), sha256: Some(record.sha256), url, ..stored("extensions", &path, record.size) };
    let status = if replace { StatusCode::OK } else { StatusCode::CREATED };
    Ok((status, Json(body)).into_response())
}

/// Where http extension `path` (`shop/hook.wasm`) of instance `customer` is called: a path on
/// this server, its folder's `/` written `%252F` (the specification's double encoding).
fn call_url(customer: &str, path: &str, open: bool) -> String {
    let id = crate::http::extensions::id_in_url(path.trim_end_matches(".wasm"));
    match open {
        true => format!("/extensions/open/{customer}/{id}"),
        false => format!("/extensions/secure/{id}"),
    }
}

/// What an extension's configuration must agree with in its instance: a monitor's alert names an
/// event the instance defines (400); an authheader extension is bound to no host another of the
/// instance's authheader extensions is bound to (409: which one would make the headers?).
async fn check_against_instance(tenant: &crate::tenants::Tenant, path: &str, config: &crate::runtime::ExtensionConfig) -> ApiResult<()> {
    if let Some(alert) = &config.alert {
        if !tenant.model.def.events.iter().any(|e| e.name == alert.event) {
            return Err(ApiError::bad(format!("'alert' names event '{}', which the instance does not define", alert.event)));
        }
        crate::domain::recipients::recipient_id(&tenant.model, &alert.recipient).map_err(|e| ApiError::bad(format!("'alert': {e}")))?;
    }
    if config.bound_hosts.is_empty() {
        return Ok(());
    }
    let mut clashes = Vec::new();
    for other in tenant.db.extensions_of_kind(ExtensionKind::Authheader.name()).await?.iter().filter(|e| e.path != path) {
        let theirs = crate::runtime::stored_config(tenant, other).await?;
        for mine in &config.bound_hosts {
            if let Some(host) = theirs.bound_hosts.iter().find(|h| crate::runtime::config::patterns_overlap(mine, h)) {
                clashes.push(format!("'{mine}' overlaps '{host}', bound to the authheader extension {}", other.path));
            }
        }
    }
    if clashes.is_empty() {
        Ok(())
    } else {
        Err(ApiError::Conflict(format!("an outbound call's host can have one authheader extension: {}", clashes.join("; "))))
    }
}

#[utoipa::path(post, path = "/assets/extensions", tag = "Assets", summary = "Upload an extension (a Wasm component)",
    request_body(content = s::ExtensionForm, content_type = "multipart/form-data"),
    responses((status = 404, description = "The folder or item is not there."), (status = 201, description = "Validated, compiled and stored.", body = s::StoredAsset), (status = 409, description = "The item exists, or an authheader extension is bound to one of its hosts.", body = s::Message)))]
async fn create(State(ctx): State<ApiContext>, caller: PublicCaller, form: Form) -> ApiResult<Response> {
    save(&ctx, &caller, form, false).await
}

#[utoipa::path(put, path = "/assets/extensions", tag = "Assets", summary = "Replace an extension",
    request_body(content = s::ExtensionForm, content_type = "multipart/form-data"),
    responses((status = 404, description = "The folder or item is not there."), (status = 200, description = "Validated, compiled and stored.", body = s::StoredAsset), (status = 409, description = "An authheader extension is bound to one of its hosts.", body = s::Message)))]
async fn put(State(ctx): State<ApiContext>, caller: PublicCaller, form: Form) -> ApiResult<Response> {
    save(&ctx, &caller, form, true).await
}

#[utoipa::path(delete, path = "/assets/extensions", tag = "Assets", summary = "Delete an extension",
    request_body(content = s::AssetPathForm, content_type = "multipart/form-data"),
    responses((status = 404, description = "The folder or item is not there."), (status = 204, description = "Deleted.")))]
async fn remove(State(ctx): State<ApiContext>, caller: PublicCaller, form: Form) -> ApiResult<StatusCode> {
    let media = media(&ctx, &caller.tenant);
    let fields = upload::read(&media, form).await?;
    let path = fields.item()?;
    if !caller.tenant.db.delete_extension(&path.as_text()).await? {
        return Err(ApiError::NotFound);
    }
    let _ = tokio::fs::remove_file(media.extension(&path)).await;
    ctx.tenants.touch(caller.tenant.customer_id());
    Ok(StatusCode::NO_CONTENT)
}

#[utoipa::path(get, path = "/assets/extensions/list", tag = "Assets", summary = "The extensions of a folder", params(("folder" = Option<String>, Query, description = "A folder path; the top when absent.")), responses((status = 404, description = "The folder or item is not there."), (status = 200, description = "The extensions (with type and size) and folders.", body = Vec<s::AssetListItem>)))]
/// Listed from the records, which every node shares (a node need not hold the files).
async fn list_extensions(
    State(ctx): State<ApiContext>,
    caller: PublicCaller,
    AppQuery(q): AppQuery<ListQuery>,
) -> ApiResult<Json<Vec<s::AssetListItem>>> {
    let folder = q.folder()?;
    let prefix = if folder.is_root() { String::new() } else { format!("{}/", folder.as_text()) };
    let records = caller.tenant.db.extensions(&prefix).await?;
    if records.is_empty() && !folder.is_root() {
        // A folder whose last extension was deleted here still exists; elsewhere it never did.
        let local = media(&ctx, &caller.tenant).extensions_root().join(folder.to_fs());
        return if tokio::fs::metadata(&local).await.is_ok_and(|m| m.is_dir()) { Ok(Json(Vec::new())) } else { Err(ApiError::NotFound) };
    }
    let mut folders = std::collections::BTreeSet::new();
    let mut files = Vec::new();
    for record in &records {
        match record.path[prefix.len()..].split_once('/') {
            Some((sub, _)) => {
                folders.insert(sub.to_string());
            }
            None => {
                let config: Option<serde_json::Value> = record.config.as_deref().and_then(|c| serde_json::from_str(c).ok());
                let open = config.as_ref().is_some_and(|c| c["open"] == true);
                files.push(s::AssetListItem {
                    r#type: Some(record.kind.clone()),
                    size: Some(record.size),
                    url: (record.kind() == Some(ExtensionKind::Http)).then(|| call_url(caller.tenant.customer_id(), &record.path, open)),
                    config,
                    ..s::AssetListItem::new(&record.path[prefix.len()..], false)
                })
            }
        }
    }
    let mut out: Vec<s::AssetListItem> = folders.into_iter().map(|name| s::AssetListItem::new(&name, true)).collect();
    out.extend(files);
    Ok(Json(out))
}

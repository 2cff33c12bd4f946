//! Assets API: the media area's resources, templates, Context Parameter Schemas, webapps and
//! extension files, through multipart forms. Answers (the spec leaves them open):
//!
//! - uploads: **201** created / **200** replaced, `{"path": "<kind>/<folder>/<name>", "size": n}`
//!   (webapps: `{"name", "url"}`); POST on an existing item, or a change a schema does not allow,
//!   is **409** with a message; PUT of an extension that does not exist, **404**;
//! - `DELETE` (the form's `file` names the item): **204**; a referenced resource is **409** naming
//!   the templates that reference it;
//! - `POST /assets/templates/:commit`: **200** `{"path", "committed": true}`; **404** without a
//!   working copy;
//! - lists: `[{"name", "isFolder", "referenced"?}]`; `referenced` on items of resources and
//!   templates, `type` on extensions.

mod contexts;
mod extensions;
mod files;

pub(super) use files::refuse_if_referenced;
pub(super) mod upload;
mod webapps;

use axum::Router;
use serde::Deserialize;

use super::error::{ApiError, ApiResult};
use super::openapi::schemas::StoredAsset;
use super::ApiContext;
use crate::assets::RelPath;
use crate::tenants::{InstanceMedia, Tenant};

/// The description of the asset operations, one part per module.
pub(super) fn described() -> [utoipa::openapi::OpenApi; 4] {
    use utoipa::OpenApi;
    [files::Doc::openapi(), contexts::Doc::openapi(), webapps::Doc::openapi(), extensions::Doc::openapi()]
}

pub(super) fn router() -> Router<ApiContext> {
    Router::new().merge(files::router()).merge(contexts::router()).merge(webapps::router()).merge(extensions::router())
}

/// The instance's media area, its writes held to the operator's quota.
pub(super) fn media(ctx: &ApiContext, tenant: &Tenant) -> InstanceMedia {
    tenant.media(&ctx.data_dir, ctx.media_quota)
}

#[derive(Deserialize)]
struct ListQuery {
    folder: Option<String>,
}

impl ListQuery {
    fn folder(&self) -> ApiResult<RelPath> {
        RelPath::parse("folder", self.folder.as_deref().unwrap_or("")).map_err(ApiError::BadRequest)
    }

    /// The folder asked for and its entries (this node's copy brought in line first): every
    /// kind's list answers 404 for a folder that is not there, and an empty list for the top of a
    /// kind nothing was uploaded to yet.
    async fn entries(&self, media: &InstanceMedia, kind: crate::assets::Kind) -> ApiResult<(RelPath, Vec<crate::assets::Entry>)> {
        let folder = self.folder()?;
        media.sync().await?;
        match crate::assets::list(&media.path(kind, &folder)).await.map_err(io_fault)? {
            Some(entries) => Ok((folder, entries)),
            None if folder.is_root() => Ok((folder, Vec::new())),
            None => Err(ApiError::NotFound),
        }
    }
}

fn io_fault(e: std::io::Error) -> ApiError {
    ApiError::Internal(e.into())
}

fn stored(kind: &str, path: &RelPath, size: u64) -> StoredAsset {
    StoredAsset { path: format!("{kind}/{}", path.as_text()), size, r#type: None, sha256: None, url: None }
}

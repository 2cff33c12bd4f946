//! The recipient handlers, one file a concern, with no cycle between them: `identity` (which
//! recipient a path names) and `json` (the one JSON form of a recipient) are leaves; `crud`
//! (the collection and single recipients) answers through `paged` and `stream`; `data` (what
//! hangs off one recipient: One-To-Many records, events, target groups, communication history)
//! names its recipient through `identity`.

mod crud;
mod data;
mod export;
mod identity;
mod json;
mod paged;
mod stream;

use axum::Router;

use super::ApiContext;
pub(crate) use export::ExportRequest;
#[cfg(test)]
pub(crate) use identity::parse_ref;
pub(super) use identity::resolve;

/// The description of the recipient operations.
pub(super) fn described() -> [utoipa::openapi::OpenApi; 2] {
    use utoipa::OpenApi;
    [crud::Doc::openapi(), data::Doc::openapi()]
}

pub(super) fn router() -> Router<ApiContext> {
    Router::new().merge(crud::router()).merge(data::router())
}

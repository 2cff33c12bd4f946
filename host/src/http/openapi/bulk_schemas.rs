//! The shapes of the bulk imports' answers (`http::imports`), kept apart from `schemas.rs` so
//! that each file stays one reader's length; `schemas` re-exports them.

use serde::Serialize;
use utoipa::ToSchema;

/// An import was taken: watch it at `GET /imports/{importId}`.
#[derive(Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct ImportStarted {
    pub import_id: String,
}

/// An import: where it stands and what it did so far.
#[derive(Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct Import {
    pub import_id: String,
    /// What it writes: `recipients`, or `globaldata/<tableName>` (a Global Data Table's records).
    pub target: String,
    /// `queued`, `running`, `completed`, `failed` or `cancelled`.
    pub state: String,
    /// `csv` or `ndjson`.
    pub format: String,
    /// The field that names each row's record: a unique Person Data field, or the table's identifier.
    pub key: String,
    /// `none` or `created`.
    pub triggers: String,
    /// The body's size in bytes, and how many of them have been read (for a progress bar).
    pub size: i64,
    pub bytes_read: i64,
    pub rows_read: i64,
    pub created: i64,
    pub updated: i64,
    pub rejected: i64,
    pub created_at: String,
    pub started_at: Option<String>,
    pub finished_at: Option<String>,
    /// Why it failed.
    pub message: Option<String>,
}

/// A row an import rejected.
#[derive(Serialize, ToSchema)]
pub struct RejectedRow {
    /// CSV: the row's number counting the header as row 1; NDJSON: the line's number.
    pub row: i64,
    /// The Person Data field at fault, when one is.
    pub field: Option<String>,
    pub message: String,
}

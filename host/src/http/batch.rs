//! Batch operations (`:batchUpdateRecords`, `:batchDeleteRecords`) shared by One-To-Many tables
//! and Global Data Tables. A batch holds at most 1000 entries (more: 400, nothing written). It is
//! not transactional: each entry succeeds or fails on its own, and the 200 response reports each
//! entry's outcome in request order:
//!
//! `{"results": [{"index": 0, "id": "P1", "status": "created"}, ...], "succeeded": 1, "failed": 0}`
//!
//! with status `created`, `updated`, `deleted`, `notFound` or `invalid` (with a `message`).

use serde_json::Value as Json;

use super::error::{ApiError, ApiResult};
use super::openapi::schemas::{BatchEntry, BatchReport};
use super::wire;
use crate::domain;
use crate::model::fields::{self, Given};
use crate::model::{Formats, TableDef, Value};
use crate::store::tenant::{EntryOutcome, TableRef};
use crate::tenants::Tenant;

pub const MAX_BATCH: usize = 1000;

fn entries(body: &Json) -> ApiResult<&Vec<Json>> {
    let items = body.as_array().ok_or_else(|| ApiError::bad("a batch body must be a JSON array"))?;
    if items.len() > MAX_BATCH {
        return Err(ApiError::bad(format!("a batch holds at most {MAX_BATCH} entries; this one has {}", items.len())));
    }
    Ok(items)
}

fn report(ids: Vec<Option<Json>>, outcomes: Vec<EntryOutcome>) -> BatchReport {
    let succeeded =
        outcomes.iter().filter(|o| matches!(o, EntryOutcome::Created | EntryOutcome::Updated | EntryOutcome::Deleted)).count() as u64;
    let results: Vec<BatchEntry> = ids
        .into_iter()
        .zip(outcomes)
        .enumerate()
        .map(|(index, (id, outcome))| {
            let (status, message) = match outcome {
                EntryOutcome::Created => ("created", None),
                EntryOutcome::Updated => ("updated", None),
                EntryOutcome::Deleted => ("deleted", None),
                EntryOutcome::NotFound => ("notFound", None),
                EntryOutcome::Invalid(message) => ("invalid", Some(message)),
            };
            BatchEntry { index: index as u64, id, status: status.into(), message }
        })
        .collect();
    let failed = results.len() as u64 - succeeded;
    BatchReport { results, succeeded, failed }
}

/// The identifier of a record body, for the report.
fn id_of(table: &TableDef, record: &Json) -> Option<Json> {
    record.get(&table.identifier().name).filter(|v| !v.is_null()).cloned()
}

pub async fn update(tenant: &Tenant, t: &TableRef<'_>, body: &Json) -> ApiResult<BatchReport> {
    let formats = &tenant.model.formats;
    let items = entries(body)?;
    let ids = items.iter().map(|r| id_of(t.def, r)).collect();
    let parsed = items.iter().map(|r| wire::table_assignments(t.def, r, formats)).collect();
    let outcomes = domain::tables::batch_upsert(tenant, t, parsed).await?;
    Ok(report(ids, outcomes))
}

pub async fn delete(tenant: &Tenant, t: &TableRef<'_>, body: &Json) -> ApiResult<BatchReport> {
    let items = entries(body)?;
    let ids: Vec<Option<Json>> = items.iter().map(|id| Some(id.clone())).collect();
    let parsed = items.iter().map(|id| identifier_value(t.def, id, &tenant.model.formats)).collect();
    let outcomes = domain::tables::batch_delete(tenant, t, parsed).await?;
    Ok(report(ids, outcomes))
}

/// An identifier given in a batch delete: a string (the spec), or a number for NUMBER identifiers.
fn identifier_value(table: &TableDef, id: &Json, formats: &Formats) -> Result<Value, String> {
    let field = table.identifier();
    let value = fields::typed(field.ty, Given::identifier(id), formats).map_err(|e| format!("identifier {} {e}", field.name))?;
    if value.is_null() {
        return Err(format!("identifier {} is empty", field.name));
    }
    Ok(value)
}

/// An identifier from a path segment (decoded twice already).
pub fn path_identifier(table: &TableDef, text: &str, formats: &Formats) -> ApiResult<Value> {
    identifier_value(table, &Json::String(text.to_string()), formats).map_err(ApiError::BadRequest)
}

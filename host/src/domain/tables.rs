//! Table records: a recipient's One-To-Many records, or a Global Data Table's, reached through
//! their `TableRef` scope (so a recipient's records are only ever its own), read and written with
//! the table's rules (the identifier present and unique, the fields' types, checked by the store
//! as one statement).

use super::{DomainError, DomainResult};
use crate::model::Value;
use crate::store::tenant::{gdt_table, otm_table, EntryOutcome, Record, TableRef, Upserted};
use crate::tenants::Tenant;

/// (field index, value) pairs of a record.
pub type Fields = [(usize, Value)];

/// The One-To-Many table `name` of recipient `recipient` (its key).
pub fn one_to_many<'a>(tenant: &'a Tenant, name: &str, recipient: i64) -> DomainResult<TableRef<'a>> {
    let def = tenant.model.def.one_to_many_table(name).ok_or(DomainError::NotFound)?;
    Ok(TableRef { sql_name: otm_table(&def.name), def, recipient: Some(recipient) })
}

/// The Global Data Table `name`.
pub fn global<'a>(tenant: &'a Tenant, name: &str) -> DomainResult<TableRef<'a>> {
    let def = tenant.model.def.global_data_table(name).ok_or(DomainError::NotFound)?;
    Ok(TableRef { sql_name: gdt_table(&def.name), def, recipient: None })
}

/// Creates a record; one with the same identifier is a conflict.
pub async fn insert(tenant: &Tenant, scope: &TableRef<'_>, values: &Fields) -> DomainResult<()> {
    Ok(tenant.db.insert_record(scope, values).await?)
}

/// Creates the record, or sets the given fields of the one with the same identifier.
pub async fn upsert(tenant: &Tenant, scope: &TableRef<'_>, values: &Fields) -> DomainResult<Upserted> {
    Ok(tenant.db.upsert_record(scope, values).await?)
}

/// Deletes the record `id`; false when there was none.
pub async fn delete(tenant: &Tenant, scope: &TableRef<'_>, id: &Value) -> DomainResult<bool> {
    Ok(tenant.db.delete_record(scope, id).await?)
}

/// Deletes every record of the scope; how many there were.
pub async fn clear(tenant: &Tenant, scope: &TableRef<'_>) -> DomainResult<u64> {
    Ok(tenant.db.truncate(scope).await?)
}

/// Upserts each entry on its own, in one transaction: an entry refused (its own message, or the
/// store's) leaves the others.
pub async fn batch_upsert(
    tenant: &Tenant,
    scope: &TableRef<'_>,
    entries: Vec<Result<Vec<(usize, Value)>, String>>,
) -> DomainResult<Vec<EntryOutcome>> {
    Ok(tenant.db.batch_upsert(scope, entries).await?)
}

/// Deletes each entry's record on its own, in one transaction.
pub async fn batch_delete(tenant: &Tenant, scope: &TableRef<'_>, ids: Vec<Result<Value, String>>) -> DomainResult<Vec<EntryOutcome>> {
    Ok(tenant.db.batch_delete(scope, ids).await?)
}

/// The scope's records matching `condition` (none: all).
pub async fn records(tenant: &Tenant, scope: &TableRef<'_>, condition: Option<&crate::rsql::Condition>) -> DomainResult<Vec<Record>> {
    Ok(tenant.db.records(scope, condition).await?)
}

/// The scope's record `id`.
pub async fn record(tenant: &Tenant, scope: &TableRef<'_>, id: &Value) -> DomainResult<Option<Record>> {
    Ok(tenant.db.record(scope, id).await?)
}

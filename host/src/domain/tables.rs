//! The scopes of table records: a recipient's One-To-Many records, or a Global Data Table.

use super::{DomainError, DomainResult};
use crate::store::tenant::{gdt_table, otm_table, TableRef};
use crate::tenants::Tenant;

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

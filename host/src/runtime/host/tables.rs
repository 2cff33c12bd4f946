//! `tables`: the instance's Global Data Tables' records, read, filtered, upserted, deleted.

use std::sync::Arc;

use wasmtime::component::Linker;

use super::bindings::herald::platform::tables;
use super::values::{condition, field_values, shown_record, table_fields, table_id};
use super::{from_domain, Answer, Data, DataView, Field, WitValue, MAX_FIND};
use crate::domain;
use crate::model::fields::Fields;
use crate::runtime::state::CallState;
use crate::store::tenant::TableRef;
use crate::tenants::Tenant;

pub(super) fn add_to_linker(linker: &mut Linker<CallState>) -> wasmtime::Result<()> {
    tables::add_to_linker::<CallState, Data>(linker, DataView::of)
}

fn gdt<'a>(tenant: &'a Tenant, table: &str) -> Answer<TableRef<'a>> {
    domain::tables::global(tenant, table).map_err(from_domain)
}

impl tables::Host for DataView<'_> {
    async fn get(&mut self, table: String, id: WitValue) -> Answer<Option<Vec<Field>>> {
        let tenant = Arc::clone(self.tenant);
        let scope = gdt(&tenant, &table)?;
        let id = table_id(&tenant.model, scope.def, &id)?;
        Ok(domain::tables::record(&tenant, &scope, &id).await.map_err(from_domain)?.map(|r| table_fields(scope.def, &r)))
    }

    async fn find(&mut self, table: String, filter: String, limit: u32) -> Answer<Vec<Vec<Field>>> {
        let tenant = Arc::clone(self.tenant);
        let scope = gdt(&tenant, &table)?;
        let condition = condition(&filter, scope.def, &tenant)?;
        let records = domain::tables::records(&tenant, &scope, condition.as_ref()).await.map_err(from_domain)?;
        Ok(records.iter().take(limit.min(MAX_FIND) as usize).map(|r| table_fields(scope.def, r)).collect())
    }

    async fn upsert(&mut self, table: String, fields: Vec<Field>) -> Answer<()> {
        let tenant = Arc::clone(self.tenant);
        let model = &tenant.model;
        let scope = gdt(&tenant, &table)?;
        let values = field_values(Fields::table(scope.def), &fields, model)?;
        domain::tables::upsert(&tenant, &scope, &values).await.map_err(from_domain)?;
        self.note_change(1, || format!("{table}: record upserted: {}", shown_record(scope.def, model, &values)));
        Ok(())
    }

    async fn delete(&mut self, table: String, id: WitValue) -> Answer<bool> {
        let tenant = Arc::clone(self.tenant);
        let scope = gdt(&tenant, &table)?;
        let id = table_id(&tenant.model, scope.def, &id)?;
        let deleted = domain::tables::delete(&tenant, &scope, &id).await.map_err(from_domain)?;
        if deleted {
            self.note_change(1, || format!("{table}: record {} deleted", id.to_json(&tenant.model.formats)));
        }
        Ok(deleted)
    }
}

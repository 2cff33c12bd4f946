//! The host side of `herald:platform` (wit/platform.wit): each function acts on the instance the
//! call was made for (`CallState::tenant`, set from the route or credential) and on nothing else.
//! Guest-visible errors are `types::Error` values the guest can handle; only faults of Herald trap.

use std::sync::Arc;

use chrono::NaiveDate;
use futures_util::StreamExt;
use wasmtime::component::{HasSelf, Linker};

use super::state::CallState;
use crate::model::value::parse_iso_timestamp;
use crate::model::{FieldType, Model, Value};
use crate::rsql;
use crate::model::TableDef;
use crate::store::tenant::{gdt_table, otm_table, EntryOutcome, TableRef};
use crate::store::StoreError;
use crate::tenants::Tenant;

mod bindings {
    wasmtime::component::bindgen!({
        path: "../wit",
        world: "herald:platform/imports",
        imports: { default: async },
    });
}

use bindings::herald::platform::types::{Error as GuestError, Field, Value as WitValue};
use bindings::herald::platform::{context, global_data, log, recipients_read, recipients_write, tables, types};

pub fn add_to_linker(linker: &mut Linker<CallState>) -> anyhow::Result<()> {
    bindings::Imports::add_to_linker::<CallState, HasSelf<CallState>>(linker, |state| state)?;
    Ok(())
}

/// The most recipients `find` returns.
const MAX_FIND: u32 = 1000;

type Answer<T> = Result<T, GuestError>;

fn invalid(message: impl Into<String>) -> GuestError {
    GuestError::Invalid(message.into())
}

fn from_store(e: StoreError) -> GuestError {
    match e {
        StoreError::Conflict(m) => GuestError::Conflict(m),
        StoreError::Invalid(m) => GuestError::Invalid(m),
        StoreError::Db(e) => {
            tracing::error!(error = %e, "a platform call failed");
            GuestError::Invalid("the instance's data could not be reached".into())
        }
    }
}

/// A WIT value as a value of a field of type `ty`.
fn to_model(ty: FieldType, name: &str, value: WitValue, model: &Model) -> Answer<Value> {
    let wrong = || invalid(format!("field {name} is {}", ty.name()));
    Ok(match (value, ty) {
        (WitValue::Null, _) => Value::Null,
        (WitValue::Text(t), _) => Value::from_text(ty, &t, &model.formats).map_err(|e| invalid(format!("field {name} {e}")))?,
        (WitValue::Number(n), FieldType::Number) if n.is_finite() => Value::Number(n),
        (WitValue::Boolean(b), FieldType::Boolean) => Value::Bool(b),
        (WitValue::Date(d), FieldType::Date) => Value::Date(NaiveDate::parse_from_str(&d, "%Y-%m-%d").map_err(|_| wrong())?),
        (WitValue::Timestamp(t), FieldType::Timestamp) => Value::Timestamp(parse_iso_timestamp(&t).ok_or_else(wrong)?),
        _ => return Err(wrong()),
    })
}

fn to_wit(value: &Value) -> WitValue {
    match value {
        Value::Null => WitValue::Null,
        Value::Text(t) => WitValue::Text(t.clone()),
        Value::Number(n) => WitValue::Number(*n),
        Value::Bool(b) => WitValue::Boolean(*b),
        Value::Date(d) => WitValue::Date(d.format("%Y-%m-%d").to_string()),
        Value::Timestamp(t) => WitValue::Timestamp(t.format("%Y-%m-%dT%H:%M:%S%.3fZ").to_string()),
    }
}

/// An optional RSQL filter (empty: none) compiled against `selectors`; errors are the guest's.
fn condition(filter: &str, selectors: &dyn rsql::Selectors, tenant: &Tenant) -> Answer<Option<rsql::Condition>> {
    if filter.trim().is_empty() {
        return Ok(None);
    }
    rsql::compile_text(filter, selectors, &tenant.model.formats, tenant.db.dialect()).map(Some).map_err(|e| match e {
        rsql::FilterError::UnknownSelector(s) => invalid(format!("unknown selector {s}")),
        rsql::FilterError::Invalid(m) => invalid(m),
    })
}

fn person_fields(model: &Model, values: &[Value]) -> Vec<Field> {
    model.def.person_data.iter().zip(values).map(|(f, v)| Field { name: f.name.clone(), value: to_wit(v) }).collect()
}

/// (field index, value) of a unique Person Data field.
fn unique_key(model: &Model, key_field: &str, key: WitValue) -> Answer<(usize, Value)> {
    let index = model.def.person_data.iter().position(|f| f.name == key_field).ok_or_else(|| invalid(format!("unknown Person Data field {key_field}")))?;
    let field = &model.def.person_data[index];
    if !field.unique {
        return Err(invalid(format!("{key_field} is not unique")));
    }
    Ok((index, to_model(field.ty, &field.name, key, model)?))
}

impl types::Host for CallState {}

impl recipients_read::Host for CallState {
    async fn get(&mut self, key_field: String, key: WitValue) -> Answer<Option<Vec<Field>>> {
        let tenant = Arc::clone(&self.tenant);
        let (index, value) = unique_key(&tenant.model, &key_field, key)?;
        let found = tenant.db.find_recipient(&tenant.model, index, &value).await.map_err(from_store)?;
        Ok(found.map(|r| person_fields(&tenant.model, &r.values)))
    }

    async fn find(&mut self, filter: String, limit: u32) -> Answer<Vec<Vec<Field>>> {
        let tenant = Arc::clone(&self.tenant);
        let (db, model) = (&tenant.db, &tenant.model);
        let condition = condition(&filter, &model.def, &tenant)?;
        let sql = db.recipients_sql(model, condition.as_ref());
        let rows = db.recipients_stream(model, condition.as_ref(), &sql).take(limit.min(MAX_FIND) as usize);
        futures_util::pin_mut!(rows);
        let mut out = Vec::new();
        while let Some(r) = rows.next().await {
            out.push(person_fields(model, &r.map_err(from_store)?.values));
        }
        Ok(out)
    }
}

impl recipients_write::Host for CallState {
    async fn create(&mut self, fields: Vec<Field>) -> Answer<Vec<Field>> {
        let tenant = Arc::clone(&self.tenant);
        let values = person_values(&tenant.model, fields)?;
        let stored = tenant.db.create_recipient(&tenant.model, values).await.map_err(from_store)?;
        Ok(person_fields(&tenant.model, &stored.values))
    }

    async fn update(&mut self, key_field: String, key: WitValue, fields: Vec<Field>) -> Answer<Vec<Field>> {
        let tenant = Arc::clone(&self.tenant);
        let model = &tenant.model;
        let (index, value) = unique_key(model, &key_field, key)?;
        let recipient = tenant.db.find_recipient(model, index, &value).await.map_err(from_store)?.ok_or(GuestError::NotFound)?;
        let mut values = person_values(model, fields)?;
        let id_index = recipient_id_index(model);
        if values.iter().any(|(i, v)| *i == id_index && *v != recipient.values[id_index]) {
            return Err(invalid(format!("the Recipient Id ({}) cannot change", model.def.recipient_id)));
        }
        values.retain(|(i, _)| *i != id_index);
        let stored = tenant.db.update_recipient(model, recipient.key, values).await.map_err(from_store)?;
        Ok(person_fields(model, &stored.values))
    }

    async fn upsert(&mut self, fields: Vec<Field>) -> Answer<Vec<Field>> {
        let tenant = Arc::clone(&self.tenant);
        let (db, model) = (&tenant.db, &tenant.model);
        let mut values = person_values(model, fields)?;
        // The Recipient Id first, then any other unique field, names the recipient to update.
        let id_index = recipient_id_index(model);
        let mut keys: Vec<&(usize, Value)> = values.iter().filter(|(i, v)| model.def.person_data[*i].unique && !v.is_null()).collect();
        keys.sort_by_key(|(i, _)| *i != id_index);
        let mut existing = None;
        for (i, v) in keys {
            if let Some(r) = db.find_recipient(model, *i, v).await.map_err(from_store)? {
                existing = Some(r);
                break;
            }
        }
        let stored = match existing {
            Some(r) => {
                values.retain(|(i, _)| *i != id_index);
                db.update_recipient(model, r.key, values).await
            }
            None => db.create_recipient(model, values).await,
        }
        .map_err(from_store)?;
        Ok(person_fields(model, &stored.values))
    }

    async fn delete(&mut self, key_field: String, key: WitValue) -> Answer<bool> {
        let tenant = Arc::clone(&self.tenant);
        let (index, value) = unique_key(&tenant.model, &key_field, key)?;
        match tenant.db.find_recipient(&tenant.model, index, &value).await.map_err(from_store)? {
            Some(r) => tenant.db.delete_recipient(r.key).await.map_err(from_store),
            None => Ok(false),
        }
    }

    async fn upsert_records(&mut self, key_field: String, key: WitValue, table: String, records: Vec<Vec<Field>>) -> Answer<u32> {
        let tenant = Arc::clone(&self.tenant);
        let model = &tenant.model;
        if records.len() > 1000 {
            return Err(invalid("at most 1000 records at once"));
        }
        let def = model.def.one_to_many_table(&table).ok_or(GuestError::NotFound)?;
        let (index, value) = unique_key(model, &key_field, key)?;
        let recipient = tenant.db.find_recipient(model, index, &value).await.map_err(from_store)?.ok_or(GuestError::NotFound)?;
        let entries = records
            .into_iter()
            .map(|fields| {
                fields
                    .into_iter()
                    .map(|f| {
                        let i = def.fields.iter().position(|d| d.name == f.name).ok_or_else(|| format!("unknown field {}.{}", table, f.name))?;
                        to_model(def.fields[i].ty, &f.name, f.value, model).map(|v| (i, v)).map_err(|e| format!("{e:?}"))
                    })
                    .collect::<Result<Vec<_>, String>>()
            })
            .collect();
        let scope = TableRef { sql_name: otm_table(&def.name), def, recipient: Some(recipient.key) };
        let outcomes = tenant.db.batch_upsert(&scope, entries).await.map_err(from_store)?;
        if let Some(EntryOutcome::Invalid(m)) = outcomes.iter().find(|o| matches!(o, EntryOutcome::Invalid(_))) {
            return Err(invalid(m.clone()));
        }
        Ok(outcomes.len() as u32)
    }

    async fn delete_records(&mut self, key_field: String, key: WitValue, table: String, ids: Vec<WitValue>) -> Answer<u32> {
        let tenant = Arc::clone(&self.tenant);
        let model = &tenant.model;
        let def = model.def.one_to_many_table(&table).ok_or(GuestError::NotFound)?;
        let (index, value) = unique_key(model, &key_field, key)?;
        let recipient = tenant.db.find_recipient(model, index, &value).await.map_err(from_store)?.ok_or(GuestError::NotFound)?;
        let id_field = def.identifier();
        let ids = ids.into_iter().map(|v| to_model(id_field.ty, &id_field.name, v, model).map_err(|e| format!("{e:?}"))).collect();
        let scope = TableRef { sql_name: otm_table(&def.name), def, recipient: Some(recipient.key) };
        let outcomes = tenant.db.batch_delete(&scope, ids).await.map_err(from_store)?;
        Ok(outcomes.iter().filter(|o| matches!(o, EntryOutcome::Deleted)).count() as u32)
    }

    async fn achieve_event(&mut self, key_field: String, key: WitValue, event: String) -> Answer<()> {
        let tenant = Arc::clone(&self.tenant);
        if !tenant.model.def.events.iter().any(|e| e.name == event) {
            return Err(GuestError::NotFound);
        }
        let (index, value) = unique_key(&tenant.model, &key_field, key)?;
        let r = tenant.db.find_recipient(&tenant.model, index, &value).await.map_err(from_store)?.ok_or(GuestError::NotFound)?;
        tenant.db.achieve_event(r.key, &event, chrono::Utc::now().naive_utc()).await.map_err(from_store)
    }
}

fn table_fields(def: &TableDef, values: &[Value]) -> Vec<Field> {
    def.fields.iter().zip(values).map(|(f, v)| Field { name: f.name.clone(), value: to_wit(v) }).collect()
}

fn gdt<'a>(model: &'a Model, table: &str) -> Answer<TableRef<'a>> {
    let def = model.def.global_data_table(table).ok_or(GuestError::NotFound)?;
    Ok(TableRef { sql_name: gdt_table(&def.name), def, recipient: None })
}

fn table_id(model: &Model, def: &TableDef, id: WitValue) -> Answer<Value> {
    let field = def.identifier();
    to_model(field.ty, &field.name, id, model)
}

impl tables::Host for CallState {
    async fn get(&mut self, table: String, id: WitValue) -> Answer<Option<Vec<Field>>> {
        let tenant = Arc::clone(&self.tenant);
        let scope = gdt(&tenant.model, &table)?;
        let id = table_id(&tenant.model, scope.def, id)?;
        Ok(tenant.db.record(&scope, &id).await.map_err(from_store)?.map(|r| table_fields(scope.def, &r)))
    }

    async fn find(&mut self, table: String, filter: String, limit: u32) -> Answer<Vec<Vec<Field>>> {
        let tenant = Arc::clone(&self.tenant);
        let model = &tenant.model;
        let scope = gdt(model, &table)?;
        let condition = condition(&filter, scope.def, &tenant)?;
        let records = tenant.db.records(&scope, condition.as_ref()).await.map_err(from_store)?;
        Ok(records.iter().take(limit.min(MAX_FIND) as usize).map(|r| table_fields(scope.def, r)).collect())
    }

    async fn upsert(&mut self, table: String, fields: Vec<Field>) -> Answer<()> {
        let tenant = Arc::clone(&self.tenant);
        let model = &tenant.model;
        let scope = gdt(model, &table)?;
        let mut values = Vec::with_capacity(fields.len());
        for f in fields {
            let i = scope.def.fields.iter().position(|d| d.name == f.name).ok_or_else(|| invalid(format!("unknown field {table}.{}", f.name)))?;
            values.push((i, to_model(scope.def.fields[i].ty, &f.name, f.value, model)?));
        }
        tenant.db.upsert_record(&scope, &values).await.map_err(from_store)?;
        Ok(())
    }

    async fn delete(&mut self, table: String, id: WitValue) -> Answer<bool> {
        let tenant = Arc::clone(&self.tenant);
        let scope = gdt(&tenant.model, &table)?;
        let id = table_id(&tenant.model, scope.def, id)?;
        tenant.db.delete_record(&scope, &id).await.map_err(from_store)
    }
}

impl context::Host for CallState {
    async fn data(&mut self) -> Option<String> {
        self.context.clone()
    }
}

impl global_data::Host for CallState {
    async fn get(&mut self, name: String) -> Answer<Option<String>> {
        let tenant = Arc::clone(&self.tenant);
        tenant.model.def.global_data_item(&name).ok_or(GuestError::NotFound)?;
        Ok(tenant.db.global_value(&name).await.map_err(from_store)?.and_then(|v| v.value))
    }

    async fn set(&mut self, name: String, value: String) -> Answer<()> {
        let tenant = Arc::clone(&self.tenant);
        let item = tenant.model.def.global_data_item(&name).ok_or(GuestError::NotFound)?;
        let parsed = Value::from_text(item.ty, &value, &tenant.model.formats).map_err(|e| invalid(format!("{name} {e}")))?;
        let stored = (!parsed.is_null()).then(|| parsed.to_text(&tenant.model.formats));
        tenant.db.set_global_value(&name, stored.as_deref()).await.map_err(from_store)?;
        Ok(())
    }
}

impl log::Host for CallState {
    async fn log(&mut self, level: log::Level, message: String) {
        let level = match level {
            log::Level::Debug => "debug",
            log::Level::Info => "info",
            log::Level::Warn => "warn",
            log::Level::Error => "error",
        };
        self.record_log(level, &message);
    }
}

/// The Person Data values of `fields`, checked against the model (by field index).
fn person_values(model: &Model, fields: Vec<Field>) -> Result<Vec<(usize, Value)>, GuestError> {
    let mut values = Vec::with_capacity(fields.len());
    for f in fields {
        let index = model.def.person_data.iter().position(|p| p.name == f.name).ok_or_else(|| invalid(format!("unknown Person Data field {}", f.name)))?;
        values.push((index, to_model(model.def.person_data[index].ty, &f.name, f.value, model)?));
    }
    Ok(values)
}

fn recipient_id_index(model: &Model) -> usize {
    model.def.person_data.iter().position(|p| p.name == model.def.recipient_id).expect("validated")
}

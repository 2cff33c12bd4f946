//! The host side of `herald:platform` (wit/platform.wit): each function acts on the instance the
//! call was made for (`CallState::tenant`, set from the route or credential) and on nothing else.
//! Guest-visible errors are `types::Error` values the guest can handle; only faults of Herald
//! (`HostError::Fault`: the instance's data could not be reached) trap, and the execution ends
//! `fault` (`outcome.rs`). Every function has a tracing span (`bindgen!`'s `tracing`).

use std::sync::Arc;

use chrono::NaiveDate;
use futures_util::StreamExt;
use wasmtime::component::{HasSelf, Linker};

use super::state::CallState;
use crate::domain::triggers::Happening;
use crate::domain::{self, DomainError};
use crate::model::TableDef;
use crate::model::{FieldType, Model, Value};
use crate::rsql;
use crate::store::tenant::{EntryOutcome, TableRef};
use crate::store::StoreError;
use crate::tenants::Tenant;
use crate::values::value::parse_iso_timestamp;

pub(crate) mod bindings {
    wasmtime::component::bindgen!({
        path: "../wit",
        world: "herald:platform/imports",
        imports: {
            "herald:platform/context": async | tracing,
            "herald:platform/log": async | tracing,
            default: async | trappable | tracing,
        },
        trappable_error_type: { "herald:platform/types.error" => crate::runtime::platform::HostError },
    });
}

/// Why a platform call did not do what the guest asked: the guest's to handle (a WIT error), or
/// Herald's own fault (a trap; the reason is logged by the server, the guest sees none of it).
#[derive(Debug)]
pub enum HostError {
    Guest(GuestError),
    Fault(&'static str),
}

impl From<GuestError> for HostError {
    fn from(e: GuestError) -> Self {
        HostError::Guest(e)
    }
}

use bindings::herald::platform::types::{Error as GuestError, Field, Value as WitValue};
use bindings::herald::platform::{context, global_data, log, recipients_read, recipients_write, tables, types};

pub fn add_to_linker(linker: &mut Linker<CallState>) -> anyhow::Result<()> {
    bindings::Imports::add_to_linker::<CallState, HasSelf<CallState>>(linker, |state| state)?;
    Ok(())
}

/// The most recipients `find` returns.
const MAX_FIND: u32 = 1000;

type Answer<T> = Result<T, HostError>;

fn invalid(message: impl Into<String>) -> GuestError {
    GuestError::Invalid(message.into())
}

/// A guest error's text as the REST API would say it (no Rust names), for the places that carry
/// one refusal inside another (an entry of a batch).
fn guest_text(e: GuestError) -> String {
    match e {
        GuestError::Invalid(m) | GuestError::Conflict(m) => m,
        GuestError::NotFound => "not found".into(),
        GuestError::Forbidden => "forbidden".into(),
        GuestError::LimitExceeded => "a limit of the instance is reached".into(),
    }
}

fn from_store(e: StoreError) -> HostError {
    match e {
        StoreError::Conflict(m) => GuestError::Conflict(m).into(),
        StoreError::Invalid(m) => GuestError::Invalid(m).into(),
        StoreError::Db(e) => {
            tracing::error!(error = %e, "a platform call failed");
            HostError::Fault("the instance's data could not be reached")
        }
    }
}

/// The guest's view of a rule's refusal.
fn from_domain(e: DomainError) -> HostError {
    match e {
        DomainError::NotFound => GuestError::NotFound.into(),
        DomainError::Invalid(m) => GuestError::Invalid(m).into(),
        DomainError::UnknownSelector(s) => invalid(format!("unknown selector {s}")).into(),
        DomainError::Conflict(m) => GuestError::Conflict(m).into(),
        DomainError::Store(e) => from_store(e),
    }
}

/// A WIT value as a value of a field of type `ty`.
fn to_model(ty: FieldType, name: &str, value: WitValue, model: &Model) -> Result<Value, GuestError> {
    let wrong = || invalid(format!("field {name} is {}", ty.name()));
    let value = match (value, ty) {
        (WitValue::Null, _) => Value::Null,
        (WitValue::Text(t), _) => Value::from_text(ty, &t, &model.formats).map_err(|e| invalid(format!("field {name} {e}")))?,
        (WitValue::Number(n), FieldType::Number) => Value::Number(n),
        (WitValue::Boolean(b), FieldType::Boolean) => Value::Bool(b),
        (WitValue::Date(d), FieldType::Date) => Value::Date(NaiveDate::parse_from_str(&d, "%Y-%m-%d").map_err(|_| wrong())?),
        (WitValue::Timestamp(t), FieldType::Timestamp) => Value::Timestamp(parse_iso_timestamp(&t).ok_or_else(wrong)?),
        _ => return Err(wrong()),
    };
    value.checked().map_err(|e| invalid(format!("field {name} {e}")))
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

/// An optional RSQL filter (blank: none) compiled against `selectors`; errors are the guest's.
fn condition(filter: &str, selectors: &dyn rsql::Selectors, tenant: &Tenant) -> Answer<Option<rsql::Condition>> {
    let text = (!filter.trim().is_empty()).then_some(filter);
    domain::filter(text, selectors, tenant).map_err(from_domain)
}

pub fn person_fields(model: &Model, values: &[Value]) -> Vec<Field> {
    model.def.person_data.iter().zip(values).map(|(f, v)| Field { name: f.name.clone(), value: to_wit(v) }).collect()
}

/// (field index, value) of a unique Person Data field.
fn unique_key(model: &Model, key_field: &str, key: WitValue) -> Answer<(usize, Value)> {
    let index = model
        .def
        .person_data
        .iter()
        .position(|f| f.name == key_field)
        .ok_or_else(|| invalid(format!("unknown Person Data field {key_field}")))?;
    let field = &model.def.person_data[index];
    if !field.unique {
        return Err(invalid(format!("{key_field} is not unique")).into());
    }
    Ok((index, key_value(field.ty, &field.name, key, model)?))
}

/// A key's value: a key without one matches nothing, and would be a NULL the database cannot
/// type (PostgreSQL refuses the query), so it is the guest's mistake.
fn key_value(ty: FieldType, name: &str, key: WitValue, model: &Model) -> Result<Value, GuestError> {
    match to_model(ty, name, key, model)? {
        Value::Null => Err(invalid(format!("the key {name} has no value"))),
        value => Ok(value),
    }
}

impl types::Host for CallState {
    fn convert_error(&mut self, e: HostError) -> wasmtime::Result<GuestError> {
        match e {
            HostError::Guest(e) => Ok(e),
            HostError::Fault(why) => Err(wasmtime::Error::new(super::HostFault(why.to_string()))),
        }
    }
}

impl recipients_read::Host for CallState {
    async fn records(&mut self, key_field: String, key: WitValue, table: String, filter: String, limit: u32) -> Answer<Vec<Vec<Field>>> {
        let tenant = Arc::clone(&self.tenant);
        let (index, value) = unique_key(&tenant.model, &key_field, key)?;
        let recipient = tenant.db.find_recipient(&tenant.model, index, &value).await.map_err(from_store)?.ok_or(GuestError::NotFound)?;
        let scope = domain::tables::one_to_many(&tenant, &table, recipient.key).map_err(from_domain)?;
        let condition = condition(&filter, scope.def, &tenant)?;
        let records = tenant.db.records(&scope, condition.as_ref()).await.map_err(from_store)?;
        Ok(records.iter().take(limit.min(MAX_FIND) as usize).map(|r| table_fields(scope.def, r)).collect())
    }

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
        let mut reader = db.stream_reader().await.map_err(from_store)?;
        let rows = db.recipients_stream(&mut reader, model, condition.as_ref(), &sql).take(limit.min(MAX_FIND) as usize);
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
        let stored = domain::recipients::create(&tenant, values).await.map_err(from_domain)?;
        self.note_change(|| {
            format!("recipient {} created: {}", recipient_id(&tenant.model, &stored.values), all_shown(&tenant.model, &stored.values))
        });
        self.happened(stored.key, Happening::Created).await;
        Ok(person_fields(&tenant.model, &stored.values))
    }

    async fn update(&mut self, key_field: String, key: WitValue, fields: Vec<Field>) -> Answer<Vec<Field>> {
        let tenant = Arc::clone(&self.tenant);
        let model = &tenant.model;
        let (index, value) = unique_key(model, &key_field, key)?;
        let values = person_values(model, fields)?;
        let given = self.journal.as_ref().map(|_| shown(model, &values));
        let stored =
            domain::recipients::update_by(&tenant, index, &value, values).await.map_err(from_domain)?.ok_or(GuestError::NotFound)?;
        self.note_change(|| format!("recipient {} updated: {}", recipient_id(model, &stored.values), given.unwrap_or_default()));
        Ok(person_fields(model, &stored.values))
    }

    async fn upsert(&mut self, fields: Vec<Field>) -> Answer<Vec<Field>> {
        let tenant = Arc::clone(&self.tenant);
        let values = person_values(&tenant.model, fields)?;
        let given = self.journal.as_ref().map(|_| shown(&tenant.model, &values));
        let (stored, created) = domain::recipients::upsert(&tenant, values).await.map_err(from_domain)?;
        self.note_change(|| {
            let id = recipient_id(&tenant.model, &stored.values);
            if created {
                format!("recipient {id} created: {}", all_shown(&tenant.model, &stored.values))
            } else {
                format!("recipient {id} updated: {}", given.unwrap_or_default())
            }
        });
        if created {
            self.happened(stored.key, Happening::Created).await;
        }
        Ok(person_fields(&tenant.model, &stored.values))
    }

    async fn delete(&mut self, key_field: String, key: WitValue) -> Answer<bool> {
        let tenant = Arc::clone(&self.tenant);
        let (index, value) = unique_key(&tenant.model, &key_field, key)?;
        match tenant.db.find_recipient(&tenant.model, index, &value).await.map_err(from_store)? {
            Some(r) => {
                let deleted = tenant.db.delete_recipient(r.key).await.map_err(from_store)?;
                if deleted {
                    self.note_change(|| format!("recipient {} deleted", recipient_id(&tenant.model, &r.values)));
                }
                Ok(deleted)
            }
            None => Ok(false),
        }
    }

    async fn upsert_records(&mut self, key_field: String, key: WitValue, table: String, records: Vec<Vec<Field>>) -> Answer<u32> {
        let tenant = Arc::clone(&self.tenant);
        let model = &tenant.model;
        if records.len() > 1000 {
            return Err(invalid("at most 1000 records at once").into());
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
                        let i = def
                            .fields
                            .iter()
                            .position(|d| d.name == f.name)
                            .ok_or_else(|| format!("unknown field {}.{}", table, f.name))?;
                        to_model(def.fields[i].ty, &f.name, f.value, model).map(|v| (i, v)).map_err(guest_text)
                    })
                    .collect::<Result<Vec<_>, String>>()
            })
            .collect();
        let scope = domain::tables::one_to_many(&tenant, &def.name, recipient.key).map_err(from_domain)?;
        let outcomes = tenant.db.batch_upsert(&scope, entries).await.map_err(from_store)?;
        if let Some(EntryOutcome::Invalid(m)) = outcomes.iter().find(|o| matches!(o, EntryOutcome::Invalid(_))) {
            return Err(invalid(m.clone()).into());
        }
        self.note_change(|| {
            format!("{}: {} record(s) upserted for recipient {}", def.name, outcomes.len(), recipient_id(model, &recipient.values))
        });
        Ok(outcomes.len() as u32)
    }

    async fn delete_records(&mut self, key_field: String, key: WitValue, table: String, ids: Vec<WitValue>) -> Answer<u32> {
        let tenant = Arc::clone(&self.tenant);
        let model = &tenant.model;
        let def = model.def.one_to_many_table(&table).ok_or(GuestError::NotFound)?;
        let (index, value) = unique_key(model, &key_field, key)?;
        let recipient = tenant.db.find_recipient(model, index, &value).await.map_err(from_store)?.ok_or(GuestError::NotFound)?;
        let id_field = def.identifier();
        let ids = ids.into_iter().map(|v| key_value(id_field.ty, &id_field.name, v, model).map_err(guest_text)).collect();
        let scope = domain::tables::one_to_many(&tenant, &def.name, recipient.key).map_err(from_domain)?;
        let outcomes = tenant.db.batch_delete(&scope, ids).await.map_err(from_store)?;
        let deleted = outcomes.iter().filter(|o| matches!(o, EntryOutcome::Deleted)).count() as u32;
        if deleted > 0 {
            self.note_change(|| {
                format!("{}: {deleted} record(s) deleted for recipient {}", def.name, recipient_id(model, &recipient.values))
            });
        }
        Ok(deleted)
    }

    async fn achieve_event(&mut self, key_field: String, key: WitValue, event: String) -> Answer<()> {
        let tenant = Arc::clone(&self.tenant);
        let (index, value) = unique_key(&tenant.model, &key_field, key)?;
        let r = domain::recipients::find(&tenant, index, &value).await.map_err(from_domain)?.ok_or(GuestError::NotFound)?;
        let now = self.clock.now_utc();
        domain::recipients::achieve_event(&tenant, r.key, &event, now).await.map_err(from_domain)?;
        self.note_change(|| format!("event {event} achieved by recipient {}", recipient_id(&tenant.model, &r.values)));
        self.happened(r.key, Happening::EventAchieved(&event)).await;
        Ok(())
    }
}

impl CallState {
    /// Starts the flows that `what` triggers, one event further down the chain than this call.
    fn happened<'a>(&self, key: i64, what: Happening<'a>) -> impl std::future::Future<Output = ()> + Send + 'a {
        // What the flows need, taken out of the call's state (which is not `Sync`).
        let (triggers, tenant, lineage) = (self.triggers.clone(), Arc::clone(&self.tenant), self.lineage.next());
        async move {
            if let Some(triggers) = triggers {
                triggers.happened(&tenant, key, what, lineage).await;
            }
        }
    }
}

/// A recipient's Recipient Id, for the journal.
fn recipient_id(model: &Model, values: &[Value]) -> serde_json::Value {
    values.get(model.def.recipient_id_index()).map_or(serde_json::Value::Null, |v| v.to_json(&model.formats))
}

/// The fields a call gave (`{"FIELD": value}`), for the journal.
fn shown(model: &Model, values: &[(usize, Value)]) -> String {
    let map: serde_json::Map<String, serde_json::Value> =
        values.iter().map(|(i, v)| (model.def.person_data[*i].name.clone(), v.to_json(&model.formats))).collect();
    serde_json::Value::Object(map).to_string()
}

/// A stored recipient's fields that have a value, for the journal.
fn all_shown(model: &Model, values: &[Value]) -> String {
    let given: Vec<(usize, Value)> = values.iter().enumerate().filter(|(_, v)| !v.is_null()).map(|(i, v)| (i, v.clone())).collect();
    shown(model, &given)
}

/// A table record's fields as given, for the journal.
fn shown_record(def: &TableDef, model: &Model, values: &[(usize, Value)]) -> String {
    let map: serde_json::Map<String, serde_json::Value> =
        values.iter().map(|(i, v)| (def.fields[*i].name.clone(), v.to_json(&model.formats))).collect();
    serde_json::Value::Object(map).to_string()
}

fn table_fields(def: &TableDef, values: &[Value]) -> Vec<Field> {
    def.fields.iter().zip(values).map(|(f, v)| Field { name: f.name.clone(), value: to_wit(v) }).collect()
}

fn gdt<'a>(tenant: &'a Tenant, table: &str) -> Answer<TableRef<'a>> {
    domain::tables::global(tenant, table).map_err(from_domain)
}

fn table_id(model: &Model, def: &TableDef, id: WitValue) -> Result<Value, GuestError> {
    let field = def.identifier();
    key_value(field.ty, &field.name, id, model)
}

impl tables::Host for CallState {
    async fn get(&mut self, table: String, id: WitValue) -> Answer<Option<Vec<Field>>> {
        let tenant = Arc::clone(&self.tenant);
        let scope = gdt(&tenant, &table)?;
        let id = table_id(&tenant.model, scope.def, id)?;
        Ok(tenant.db.record(&scope, &id).await.map_err(from_store)?.map(|r| table_fields(scope.def, &r)))
    }

    async fn find(&mut self, table: String, filter: String, limit: u32) -> Answer<Vec<Vec<Field>>> {
        let tenant = Arc::clone(&self.tenant);
        let scope = gdt(&tenant, &table)?;
        let condition = condition(&filter, scope.def, &tenant)?;
        let records = tenant.db.records(&scope, condition.as_ref()).await.map_err(from_store)?;
        Ok(records.iter().take(limit.min(MAX_FIND) as usize).map(|r| table_fields(scope.def, r)).collect())
    }

    async fn upsert(&mut self, table: String, fields: Vec<Field>) -> Answer<()> {
        let tenant = Arc::clone(&self.tenant);
        let model = &tenant.model;
        let scope = gdt(&tenant, &table)?;
        let mut values = Vec::with_capacity(fields.len());
        for f in fields {
            let i = scope
                .def
                .fields
                .iter()
                .position(|d| d.name == f.name)
                .ok_or_else(|| invalid(format!("unknown field {table}.{}", f.name)))?;
            values.push((i, to_model(scope.def.fields[i].ty, &f.name, f.value, model)?));
        }
        tenant.db.upsert_record(&scope, &values).await.map_err(from_store)?;
        self.note_change(|| format!("{table}: record upserted: {}", shown_record(scope.def, model, &values)));
        Ok(())
    }

    async fn delete(&mut self, table: String, id: WitValue) -> Answer<bool> {
        let tenant = Arc::clone(&self.tenant);
        let scope = gdt(&tenant, &table)?;
        let id = table_id(&tenant.model, scope.def, id)?;
        let deleted = tenant.db.delete_record(&scope, &id).await.map_err(from_store)?;
        if deleted {
            self.note_change(|| format!("{table}: record {} deleted", id.to_json(&tenant.model.formats)));
        }
        Ok(deleted)
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
        domain::global_data::set(&tenant, &name, &value).await.map_err(from_domain)?;
        self.note_change(|| format!("global data {name} set to {}", serde_json::Value::String(value)));
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
        let index = model
            .def
            .person_data
            .iter()
            .position(|p| p.name == f.name)
            .ok_or_else(|| invalid(format!("unknown Person Data field {}", f.name)))?;
        values.push((index, to_model(model.def.person_data[index].ty, &f.name, f.value, model)?));
    }
    Ok(values)
}

impl CallState {
    /// The value of the instance's secret `name`, noted as revealed (so that the call's records
    /// have it replaced by `[secret]`); for the interfaces that use secrets (`secrets.get`, the
    /// signature checks), each of which decides first whether its call may.
    pub(super) async fn open_secret(&mut self, ring: &crate::secrets::KeyRing, name: &str) -> Answer<Option<String>> {
        let tenant = Arc::clone(&self.tenant);
        match crate::secrets::get(ring, &tenant, name).await {
            Ok(value) => {
                self.revealed.extend(value.iter().cloned());
                Ok(value)
            }
            Err(crate::secrets::SecretError::Unopenable { name, reason }) => {
                tracing::error!(instance = tenant.customer_id(), secret = %name, %reason, "a secret cannot be opened");
                Err(invalid(format!("secret {name} cannot be opened on this node (its operator is told why)")).into())
            }
            Err(e) => {
                tracing::error!(instance = tenant.customer_id(), error = %e, "a secret could not be read");
                Err(HostError::Fault("the instance's secrets could not be reached"))
            }
        }
    }
}

//! WIT values and the model's, both ways, with the messages a guest reads: a field's type, a
//! unique key, a filter; and the lines a local run's journal shows of what a call wrote.

use super::{from_domain, invalid, Answer, Field, GuestError, WitValue};
use crate::domain;
use crate::model::fields::{FieldInfo, Fields, Given};
use crate::model::{Model, TableDef, Value};
use crate::rsql;
use crate::tenants::Tenant;

/// A WIT value as `model::fields` reads it (each typed variant must be of its field's type).
fn given(value: &WitValue) -> Given<'_> {
    match value {
        WitValue::Null => Given::Null,
        WitValue::Text(t) => Given::Text(t),
        WitValue::Number(n) => Given::Number(*n),
        WitValue::Boolean(b) => Given::Boolean(*b),
        WitValue::Date(d) => Given::IsoDate(d),
        WitValue::Timestamp(t) => Given::IsoTimestamp(t),
    }
}

pub(super) fn to_wit(value: &Value) -> WitValue {
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
pub(super) fn condition(filter: &str, selectors: &dyn rsql::Selectors, tenant: &Tenant) -> Answer<Option<rsql::Condition>> {
    let text = (!filter.trim().is_empty()).then_some(filter);
    domain::filter(text, selectors, tenant).map_err(from_domain)
}

pub fn person_fields(model: &Model, values: &[Value]) -> Vec<Field> {
    model.def.person_data.iter().zip(values).map(|(f, v)| Field { name: f.name.clone(), value: to_wit(v) }).collect()
}

/// (field index, value) of a unique Person Data field.
pub(super) fn unique_key(model: &Model, key_field: &str, key: WitValue) -> Answer<(usize, Value)> {
    let person = Fields::person_data(&model.def);
    let index = person.position(key_field).map_err(invalid)?;
    if !model.def.person_data[index].unique {
        return Err(invalid(format!("{key_field} is not unique")).into());
    }
    Ok((index, key_value(person, index, &key, model)?))
}

/// A key's value: a key without one matches nothing, and would be a NULL the database cannot
/// type (PostgreSQL refuses the query), so it is the guest's mistake.
pub(super) fn key_value<F: FieldInfo>(fields: Fields<'_, F>, index: usize, key: &WitValue, model: &Model) -> Result<Value, GuestError> {
    match fields.value(index, given(key), &model.formats).map_err(invalid)? {
        Value::Null => Err(invalid(format!("the key {} has no value", fields.fields[index].field_name()))),
        value => Ok(value),
    }
}

pub(super) fn table_fields(def: &TableDef, values: &[Value]) -> Vec<Field> {
    def.fields.iter().zip(values).map(|(f, v)| Field { name: f.name.clone(), value: to_wit(v) }).collect()
}

/// A table record's identifier.
pub(super) fn table_id(model: &Model, def: &TableDef, id: &WitValue) -> Result<Value, GuestError> {
    key_value(Fields::table(def), def.identifier_index(), id, model)
}

/// A guest's fields as (field index, value) pairs of `fields`, read by `model::fields`.
pub(super) fn field_values<F: FieldInfo>(
    fields: Fields<'_, F>,
    given_fields: &[Field],
    model: &Model,
) -> Result<Vec<(usize, Value)>, GuestError> {
    fields.assign(given_fields.iter().map(|f| (&f.name, given(&f.value))), &model.formats).map_err(invalid)
}

/// The Person Data values of `fields`, checked against the model (by field index).
pub(super) fn person_values(model: &Model, fields: &[Field]) -> Result<Vec<(usize, Value)>, GuestError> {
    field_values(Fields::person_data(&model.def), fields, model)
}

/// A recipient's Recipient Id, for the journal.
pub(super) fn recipient_id(model: &Model, values: &[Value]) -> serde_json::Value {
    values.get(model.def.recipient_id_index()).map_or(serde_json::Value::Null, |v| v.to_json(&model.formats))
}

/// The fields a call gave (`{"FIELD": value}`), for the journal.
pub(super) fn shown(model: &Model, values: &[(usize, Value)]) -> String {
    let map: serde_json::Map<String, serde_json::Value> =
        values.iter().map(|(i, v)| (model.def.person_data[*i].name.clone(), v.to_json(&model.formats))).collect();
    serde_json::Value::Object(map).to_string()
}

/// A stored recipient's fields that have a value, for the journal.
pub(super) fn all_shown(model: &Model, values: &[Value]) -> String {
    let given: Vec<(usize, Value)> = values.iter().enumerate().filter(|(_, v)| !v.is_null()).map(|(i, v)| (i, v.clone())).collect();
    shown(model, &given)
}

/// A table record's fields as given, for the journal.
pub(super) fn shown_record(def: &TableDef, model: &Model, values: &[(usize, Value)]) -> String {
    let map: serde_json::Map<String, serde_json::Value> =
        values.iter().map(|(i, v)| (def.fields[*i].name.clone(), v.to_json(&model.formats))).collect();
    serde_json::Value::Object(map).to_string()
}

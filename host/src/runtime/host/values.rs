//! WIT values and the model's, both ways, with the messages a guest reads: a field's type, a
//! unique key, a filter; and the lines a local run's journal shows of what a call wrote.

use chrono::NaiveDate;

use super::{from_domain, invalid, Answer, Field, GuestError, WitValue};
use crate::domain;
use crate::model::{FieldType, Model, TableDef, Value};
use crate::rsql;
use crate::tenants::Tenant;
use crate::values::value::parse_iso_timestamp;

/// A WIT value as a value of a field of type `ty`.
pub(super) fn to_model(ty: FieldType, name: &str, value: WitValue, model: &Model) -> Result<Value, GuestError> {
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
pub(super) fn key_value(ty: FieldType, name: &str, key: WitValue, model: &Model) -> Result<Value, GuestError> {
    match to_model(ty, name, key, model)? {
        Value::Null => Err(invalid(format!("the key {name} has no value"))),
        value => Ok(value),
    }
}

pub(super) fn table_fields(def: &TableDef, values: &[Value]) -> Vec<Field> {
    def.fields.iter().zip(values).map(|(f, v)| Field { name: f.name.clone(), value: to_wit(v) }).collect()
}

pub(super) fn table_id(model: &Model, def: &TableDef, id: WitValue) -> Result<Value, GuestError> {
    let field = def.identifier();
    key_value(field.ty, &field.name, id, model)
}

/// `fields` as (index, value) pairs of the fields `defs` describes (`name_and_type` reads one),
/// each value checked against its field's type; a name not among them is refused with
/// `unknown(name)`.
pub(super) fn field_values<D>(
    defs: &[D],
    name_and_type: impl Fn(&D) -> (&str, FieldType),
    fields: Vec<Field>,
    model: &Model,
    unknown: impl Fn(&str) -> String,
) -> Result<Vec<(usize, Value)>, GuestError> {
    fields
        .into_iter()
        .map(|f| {
            let i = defs.iter().position(|d| name_and_type(d).0 == f.name).ok_or_else(|| invalid(unknown(&f.name)))?;
            Ok((i, to_model(name_and_type(&defs[i]).1, &f.name, f.value, model)?))
        })
        .collect()
}

/// The Person Data values of `fields`, checked against the model (by field index).
pub(super) fn person_values(model: &Model, fields: Vec<Field>) -> Result<Vec<(usize, Value)>, GuestError> {
    field_values(&model.def.person_data, |p| (p.name.as_str(), p.ty), fields, model, |name| format!("unknown Person Data field {name}"))
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

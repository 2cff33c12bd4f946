//! The field rules of a record, in one place: a value given for a named field, in whichever shape
//! its door received it, read as the field's typed value, with one wording of every refusal. The
//! REST API's JSON bodies, a flow's `set`, the extensions' WIT values, an import's cells and lines
//! and a local run's recipient all come through here (a source test holds every other module to
//! it: none reads a `Value` from JSON or text itself), so a field takes the same values and
//! refuses them in the same words whichever door they came through:
//!
//! - `unknown Person Data field SHOE_SIZE`, `unknown PURCHASES field COLOUR`;
//! - `Person Data field AGE expects a NUMBER, got 'many'`, `PURCHASES field PRICE expects a NUMBER
//!   (a JSON number)`.
//!
//! What a value may be once typed (ranges, years) is `Value::checked`'s, applied to every shape.

use std::fmt;

use chrono::NaiveDate;
use serde_json::Value as Json;

use super::{DataModel, FieldType, Formats, PersonField, TableDef, TableField, Value};
use crate::values::value::parse_iso_timestamp;

/// A named, typed field of a record.
pub trait FieldInfo {
    fn field_name(&self) -> &str;
    fn field_type(&self) -> FieldType;
}

impl FieldInfo for PersonField {
    fn field_name(&self) -> &str {
        &self.name
    }
    fn field_type(&self) -> FieldType {
        self.ty
    }
}

impl FieldInfo for TableField {
    fn field_name(&self) -> &str {
        &self.name
    }
    fn field_type(&self) -> FieldType {
        self.ty
    }
}

/// Whose fields: how the customer calls them in a message.
#[derive(Debug, Clone, Copy)]
pub enum Record<'a> {
    PersonData,
    /// A One-To-Many or Global Data Table, by its name.
    Table(&'a str),
}

impl fmt::Display for Record<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Record::PersonData => f.write_str("Person Data"),
            Record::Table(name) => f.write_str(name),
        }
    }
}

/// A record's fields with the name the customer knows them by.
#[derive(Clone, Copy)]
pub struct Fields<'a, F> {
    pub record: Record<'a>,
    pub fields: &'a [F],
}

impl<'a> Fields<'a, PersonField> {
    pub fn person_data(def: &'a DataModel) -> Self {
        Fields { record: Record::PersonData, fields: &def.person_data }
    }
}

impl<'a> Fields<'a, TableField> {
    pub fn table(def: &'a TableDef) -> Self {
        Fields { record: Record::Table(&def.name), fields: &def.fields }
    }
}

impl<F: FieldInfo> Fields<'_, F> {
    /// The index of field `name`, or `unknown <record> field <name>`.
    pub fn position(&self, name: &str) -> Result<usize, String> {
        self.fields.iter().position(|f| f.field_name() == name).ok_or_else(|| format!("unknown {} field {name}", self.record))
    }

    /// Field `index`'s value read from `given`; the message names the record and the field.
    pub fn value(&self, index: usize, given: Given<'_>, formats: &Formats) -> Result<Value, String> {
        let field = &self.fields[index];
        field_value(self.record, field.field_name(), field.field_type(), given, formats)
    }

    /// `(name, value)` pairs as (field index, typed value) pairs, stopping at the first refusal.
    pub fn assign<'g, N: AsRef<str>>(
        &self,
        given: impl IntoIterator<Item = (N, Given<'g>)>,
        formats: &Formats,
    ) -> Result<Vec<(usize, Value)>, String> {
        given
            .into_iter()
            .map(|(name, value)| {
                let index = self.position(name.as_ref())?;
                Ok((index, self.value(index, value, formats)?))
            })
            .collect()
    }

    /// A JSON object's members as (field index, typed value) pairs: a REST body's fields.
    pub fn assign_json(&self, object: &serde_json::Map<String, Json>, formats: &Formats) -> Result<Vec<(usize, Value)>, String> {
        self.assign(object.iter().map(|(name, json)| (name, Given::Json(json))), formats)
    }
}

/// A field's value as a door received it.
#[derive(Debug, Clone, Copy)]
pub enum Given<'a> {
    /// A JSON value, as the REST API takes it: types are strict (a NUMBER field takes a JSON
    /// number); dates and timestamps are strings in the instance's formats or ISO 8601; `null`
    /// and `""` are the empty value (the specification clears a field sent "empty or null").
    Json(&'a Json),
    /// Text in the instance's formats (a CSV cell, a path segment, a guest's text): a NUMBER
    /// parsed, `true`/`false`; empty is the empty value.
    Text(&'a str),
    /// The typed values of the extensions' WIT `value`: each must be of its field's type.
    Null,
    Number(f64),
    Boolean(bool),
    /// `YYYY-MM-DD`.
    IsoDate(&'a str),
    /// ISO 8601.
    IsoTimestamp(&'a str),
}

impl<'a> Given<'a> {
    /// An identifier given as JSON: a string is text (as a path segment gives it, so `"7"` names
    /// a NUMBER identifier), anything else JSON.
    pub fn identifier(json: &'a Json) -> Given<'a> {
        match json {
            Json::String(text) => Given::Text(text),
            other => Given::Json(other),
        }
    }
}

/// `given` as the value of field `name` (of type `ty`) of `record`; the message names both.
pub fn field_value(record: Record<'_>, name: &str, ty: FieldType, given: Given<'_>, formats: &Formats) -> Result<Value, String> {
    typed(ty, given, formats).map_err(|e| format!("{record} field {name} {e}"))
}

/// `given` as a value of type `ty`, checked (`Value::checked`); the error says what is wrong
/// without naming the field (`expects a NUMBER, got 'many'`).
pub fn typed(ty: FieldType, given: Given<'_>, formats: &Formats) -> Result<Value, String> {
    let value = match (given, ty) {
        (Given::Json(json), _) => return Value::from_json(ty, json, formats),
        (Given::Text(text), _) => return Value::from_text(ty, text, formats),
        (Given::Null, _) => Value::Null,
        (Given::Number(n), FieldType::Number) => Value::Number(n),
        (Given::Boolean(b), FieldType::Boolean) => Value::Bool(b),
        (Given::IsoDate(d), FieldType::Date) => {
            Value::Date(NaiveDate::parse_from_str(d, "%Y-%m-%d").map_err(|_| format!("expects a DATE as YYYY-MM-DD, got '{d}'"))?)
        }
        (Given::IsoTimestamp(t), FieldType::Timestamp) => {
            Value::Timestamp(parse_iso_timestamp(t).ok_or_else(|| format!("expects a TIMESTAMP in ISO 8601, got '{t}'"))?)
        }
        (_, ty) => return Err(format!("expects a {}", ty.name())),
    };
    value.checked()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::DEMO;
    use serde_json::json;

    fn demo() -> crate::model::Model {
        crate::model::Model::new(crate::model::DefinitionFile::from_toml(DEMO).unwrap().model).unwrap()
    }

    #[test]
    fn every_shape_is_refused_in_the_same_words() {
        let model = demo();
        let person = Fields::person_data(&model.def);
        let f = &model.formats;
        let age = person.position("AGE").unwrap();
        let json = person.value(age, Given::Json(&json!("many")), f).unwrap_err();
        let text = person.value(age, Given::Text("many"), f).unwrap_err();
        let wit = person.value(age, Given::Boolean(true), f).unwrap_err();
        assert_eq!(json, "Person Data field AGE expects a NUMBER (a JSON number)");
        assert_eq!(text, "Person Data field AGE expects a NUMBER, got 'many'");
        assert_eq!(wit, "Person Data field AGE expects a NUMBER");
        assert_eq!(person.position("SHOE_SIZE").unwrap_err(), "unknown Person Data field SHOE_SIZE");
        let out_of_range = person.value(age, Given::Number(1e300), f).unwrap_err();
        assert!(out_of_range.starts_with("Person Data field AGE is out of range"), "{out_of_range}");
    }

    #[test]
    fn tables_are_named_by_their_name() {
        let model = demo();
        let table = model.def.one_to_many_table("PURCHASES").expect("the demo's PURCHASES table");
        let fields = Fields::table(table);
        assert_eq!(fields.position("COLOUR").unwrap_err(), "unknown PURCHASES field COLOUR");
        let given = [("NOPE", Given::Null)];
        assert_eq!(fields.assign(given, &model.formats).unwrap_err(), "unknown PURCHASES field NOPE");
    }

    #[test]
    fn typed_wit_values_and_their_emptiness() {
        let f = &demo().formats;
        assert_eq!(
            typed(FieldType::Date, Given::IsoDate("2026-11-27"), f),
            Ok(Value::Date(NaiveDate::from_ymd_opt(2026, 11, 27).unwrap()))
        );
        assert!(typed(FieldType::Date, Given::IsoDate("27.11.2026"), f).unwrap_err().contains("YYYY-MM-DD"));
        assert_eq!(typed(FieldType::Number, Given::Null, f), Ok(Value::Null));
        assert_eq!(typed(FieldType::String, Given::Json(&json!("")), f), Ok(Value::Null));
        assert_eq!(typed(FieldType::Boolean, Given::Text("true"), f), Ok(Value::Bool(true)));
    }
}

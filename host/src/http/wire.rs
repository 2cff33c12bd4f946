//! The JSON shapes of records on the wire: reading field assignments from a JSON object against
//! a list of typed fields, and writing records back.

use serde_json::{Map, Value as Json};

use super::error::ApiError;
use crate::model::{FieldType, Formats, PersonField, TableDef, TableField, Value};

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

/// Reads `{FIELD: value, ...}` into (field index, value) pairs; the message names the field.
pub fn assignments<F: FieldInfo>(
    kind: &str,
    fields: &[F],
    object: &Map<String, Json>,
    formats: &Formats,
) -> Result<Vec<(usize, Value)>, String> {
    let mut out = Vec::with_capacity(object.len());
    for (name, json) in object {
        let index = fields.iter().position(|f| f.field_name() == name).ok_or_else(|| format!("unknown {kind} field '{name}'"))?;
        let value = Value::from_json(fields[index].field_type(), json, formats).map_err(|e| format!("{kind} field {name} {e}"))?;
        out.push((index, value));
    }
    Ok(out)
}

/// `{FIELD: value, ...}` for values in field order.
pub fn record_json<F: FieldInfo>(fields: &[F], values: &[Value], formats: &Formats) -> Json {
    let mut map = Map::with_capacity(fields.len());
    for (f, v) in fields.iter().zip(values) {
        map.insert(f.field_name().to_string(), v.to_json(formats));
    }
    Json::Object(map)
}

/// The body of a table record write: a JSON object.
pub fn table_assignments(table: &TableDef, json: &Json, formats: &Formats) -> Result<Vec<(usize, Value)>, String> {
    let object = json.as_object().ok_or_else(|| "a record must be a JSON object".to_string())?;
    assignments(&table.name, &table.fields, object, formats)
}

/// `{"personData": {...}}`: the Person Data object of a recipient body.
pub fn person_data(body: &Json) -> Result<&Map<String, Json>, ApiError> {
    let object = body.as_object().ok_or_else(|| ApiError::bad("the body must be a JSON object"))?;
    if let Some(other) = object.keys().find(|k| k.as_str() != "personData") {
        return Err(ApiError::bad(format!("unknown member '{other}' (a recipient body is {{\"personData\": {{...}}}})")));
    }
    object
        .get("personData")
        .ok_or_else(|| ApiError::bad("the body needs a 'personData' object"))?
        .as_object()
        .ok_or_else(|| ApiError::bad("'personData' must be a JSON object"))
}

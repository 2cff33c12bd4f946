//! The JSON shapes of records on the wire: a recipient's body, a table record's body (its values
//! read by `model::fields`, the one reader of field values), and records written back.

use serde_json::{Map, Value as Json};

use super::error::ApiError;
use crate::model::fields::{FieldInfo, Fields};
use crate::model::{Formats, TableDef, Value};

/// `{FIELD: value, ...}` for values in field order, as a JSON tree (`Record`'s output).
pub fn record_json<F: FieldInfo>(fields: &[F], values: &[Value], formats: &Formats) -> Json {
    serde_json::to_value(Record { fields, values, formats }).expect("a record serialises")
}

/// `{FIELD: value, ...}` for values in field order, serialised where it is written (a
/// recipient's answer) without a JSON tree first.
pub struct Record<'a, F> {
    pub fields: &'a [F],
    pub values: &'a [Value],
    pub formats: &'a Formats,
}

impl<F: FieldInfo> serde::Serialize for Record<'_, F> {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        use serde::ser::SerializeMap;
        let mut map = s.serialize_map(Some(self.fields.len()))?;
        for (f, v) in self.fields.iter().zip(self.values) {
            map.serialize_entry(f.field_name(), &v.wire(self.formats))?;
        }
        map.end()
    }
}

/// The body of a table record write: a JSON object.
pub fn table_assignments(table: &TableDef, json: &Json, formats: &Formats) -> Result<Vec<(usize, Value)>, String> {
    let object = json.as_object().ok_or_else(|| "a record must be a JSON object".to_string())?;
    Fields::table(table).assign_json(object, formats)
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

//! A record of the file read as a row of values, with the REST API's rules: each value of its
//! field's type (CSV cells in the API's text forms, NDJSON values as the API's JSON), a NUMBER
//! Recipient Id a whole number from 1 to 2^53 − 1. An empty cell (or a JSON null or "") clears
//! its field, as PUT does; an empty Recipient Id is left out (an update keeps it, a new
//! recipient is numbered). What is wrong with a row rejects that row alone, with the field at
//! fault and a message in the customer's terms.
//!
//! The fields are a `Shape`'s: the Person Data of recipients (an NDJSON line is
//! `{"personData": {...}}`, as a recipient's body), or a Global Data Table's (a line is the
//! record itself, as a record's body).

use serde_json::{Map, Value as Json};

use crate::model::{FieldType, Model, TableDef, Value};
use crate::store::tenant::{ImportRow, Refusal};

/// The fields an import's rows set.
#[derive(Clone, Copy)]
pub struct Shape<'m> {
    pub model: &'m Model,
    /// A Global Data Table's records; recipients when `None`.
    pub table: Option<&'m TableDef>,
}

impl Shape<'_> {
    fn count(&self) -> usize {
        self.table.map_or(self.model.def.person_data.len(), |t| t.fields.len())
    }

    pub fn name(&self, i: usize) -> &str {
        self.table.map_or(&self.model.def.person_data[i].name, |t| &t.fields[i].name)
    }

    fn ty(&self, i: usize) -> FieldType {
        self.table.map_or(self.model.def.person_data[i].ty, |t| t.fields[i].ty)
    }

    fn position(&self, name: &str) -> Option<usize> {
        (0..self.count()).find(|i| self.name(*i) == name)
    }

    /// How the customer calls the fields: "Person Data" or the table's name.
    pub fn kind(&self) -> &str {
        self.table.map_or("Person Data", |t| &t.name)
    }

    /// The field naming each row's record when no key is given: the Recipient Id, or the
    /// table's identifier.
    pub fn identifier(&self) -> usize {
        match self.table {
            Some(t) => t.fields.iter().position(|f| f.identifier).expect("validated: one identifier per table"),
            None => self.model.def.recipient_id_index(),
        }
    }
}

/// Every name in `names` that is not a field of `shape` (for the header check, which refuses a
/// file naming any before anything is written).
pub fn unknown_fields<'n>(shape: Shape<'_>, names: &'n [String]) -> Vec<&'n str> {
    names.iter().filter(|n| shape.position(n).is_none()).map(String::as_str).collect()
}

/// The field indexes of a CSV header's columns (checked: every name is a field).
pub fn columns(shape: Shape<'_>, names: &[String]) -> Result<Vec<usize>, String> {
    let unknown = unknown_fields(shape, names);
    if !unknown.is_empty() {
        let whose = shape.table.map_or("the instance does not have".to_string(), |t| format!("table {} does not have", t.name));
        return Err(format!("the header names fields {whose}: {}", unknown.join(", ")));
    }
    let indexes: Vec<usize> = names.iter().map(|n| shape.position(n).expect("checked")).collect();
    if let Some(twice) = names.iter().enumerate().find(|(i, n)| names[..*i].contains(n)) {
        return Err(format!("the header names {} twice", twice.1));
    }
    Ok(indexes)
}

/// A CSV row. `None` for a blank line.
pub fn csv_row(shape: Shape<'_>, columns: &[usize], row: i64, cells: Vec<Vec<u8>>) -> Option<ImportRow> {
    if cells.len() == 1 && cells[0].is_empty() && columns.len() != 1 {
        return None;
    }
    let values = if cells.len() != columns.len() {
        Err(Refusal::of(None, format!("the row has {} cells where the header has {}", cells.len(), columns.len())))
    } else {
        columns.iter().zip(cells).map(|(i, cell)| cell_value(shape, *i, cell)).filter_map(Result::transpose).collect()
    };
    Some(ImportRow { row, values })
}

fn cell_value(shape: Shape<'_>, index: usize, cell: Vec<u8>) -> Result<Option<(usize, Value)>, Refusal> {
    let name = shape.name(index);
    let text = String::from_utf8(cell).map_err(|_| Refusal::of(Some(name), format!("{name} is not UTF-8 text")))?;
    let value = Value::from_text(shape.ty(index), &text, &shape.model.formats)
        .map_err(|e| Refusal::of(Some(name), format!("{} field {name} {e}", shape.kind())))?;
    checked(shape, index, value)
}

/// An NDJSON line: `{"personData": {...}}`, or a table's record.
pub fn json_row(shape: Shape<'_>, row: i64, line: &[u8]) -> ImportRow {
    ImportRow { row, values: json_values(shape, line) }
}

fn json_values(shape: Shape<'_>, line: &[u8]) -> Result<Vec<(usize, Value)>, Refusal> {
    let json: Json = serde_json::from_slice(line).map_err(|e| Refusal::of(None, format!("the line is not JSON: {e}")))?;
    let object = match shape.table {
        Some(_) => json.as_object().ok_or_else(|| Refusal::of(None, "the line must be a JSON object, a record"))?,
        None => person_data(&json)?,
    };
    let names: Vec<String> = object.keys().cloned().collect();
    let unknown = unknown_fields(shape, &names);
    if !unknown.is_empty() {
        return Err(Refusal::of(None, format!("unknown {} fields: {}", shape.kind(), unknown.join(", "))));
    }
    let mut values = Vec::with_capacity(object.len());
    for (name, json) in object {
        let index = shape.position(name).expect("checked above");
        let value = Value::from_json(shape.ty(index), json, &shape.model.formats)
            .map_err(|e| Refusal::of(Some(name), format!("{} field {name} {e}", shape.kind())))?;
        values.extend(checked(shape, index, value)?);
    }
    Ok(values)
}

fn person_data(json: &Json) -> Result<&Map<String, Json>, Refusal> {
    let object = json.as_object().ok_or_else(|| Refusal::of(None, "the line must be a JSON object {\"personData\": {...}}"))?;
    if let Some(other) = object.keys().find(|k| k.as_str() != "personData") {
        return Err(Refusal::of(None, format!("unknown member '{other}' (a line is {{\"personData\": {{...}}}})")));
    }
    object.get("personData").and_then(Json::as_object).ok_or_else(|| Refusal::of(None, "the line needs a 'personData' object"))
}

/// The Recipient Id's own rules; an empty one is left out.
fn checked(shape: Shape<'_>, index: usize, value: Value) -> Result<Option<(usize, Value)>, Refusal> {
    let model = shape.model;
    if shape.table.is_some() || index != model.def.recipient_id_index() {
        return Ok(Some((index, value)));
    }
    let field = &model.def.person_data[index];
    match value {
        Value::Null => Ok(None),
        Value::Number(n) if field.ty == FieldType::Number && !crate::values::is_recipient_number(n) => Err(Refusal::of(
            Some(&field.name),
            format!("the Recipient Id {} must be a whole number from 1 to {}", field.name, crate::values::MAX_EXACT_NUMBER as i64),
        )),
        value => Ok(Some((index, value))),
    }
}

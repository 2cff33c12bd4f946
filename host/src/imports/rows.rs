//! A record of the file read as a row of Person Data values, with the REST API's rules: each
//! value of its field's type (CSV cells in the API's text forms, NDJSON values as the API's
//! JSON), a NUMBER Recipient Id a whole number from 1 to 2^53 − 1. An empty cell (or a JSON
//! null or "") clears its field, as PUT does; an empty Recipient Id is left out (an update keeps
//! it, a new recipient is numbered). What is wrong with a row rejects that row alone, with the
//! field at fault and a message in the customer's terms.

use serde_json::Value as Json;

use crate::model::{FieldType, Model, Value};
use crate::store::tenant::{ImportRow, Refusal};

/// Every name in `names` that is not a Person Data field of `model` (for the header check, which
/// refuses a file naming any before anything is written).
pub fn unknown_fields<'n>(model: &Model, names: &'n [String]) -> Vec<&'n str> {
    names.iter().filter(|n| !model.def.person_data.iter().any(|f| &f.name == *n)).map(String::as_str).collect()
}

/// The field indexes of a CSV header's columns (checked: every name is a field).
pub fn columns(model: &Model, names: &[String]) -> Result<Vec<usize>, String> {
    let unknown = unknown_fields(model, names);
    if !unknown.is_empty() {
        return Err(format!("the header names fields the instance does not have: {}", unknown.join(", ")));
    }
    let indexes: Vec<usize> = names.iter().map(|n| model.def.person_data.iter().position(|f| &f.name == n).expect("checked")).collect();
    if let Some(twice) = names.iter().enumerate().find(|(i, n)| names[..*i].contains(n)) {
        return Err(format!("the header names {} twice", twice.1));
    }
    Ok(indexes)
}

/// A CSV row. `None` for a blank line.
pub fn csv_row(model: &Model, columns: &[usize], row: i64, cells: Vec<Vec<u8>>) -> Option<ImportRow> {
    if cells.len() == 1 && cells[0].is_empty() && columns.len() != 1 {
        return None;
    }
    let values = if cells.len() != columns.len() {
        Err(Refusal::of(None, format!("the row has {} cells where the header has {}", cells.len(), columns.len())))
    } else {
        columns.iter().zip(cells).map(|(i, cell)| cell_value(model, *i, cell)).filter_map(Result::transpose).collect()
    };
    Some(ImportRow { row, values })
}

fn cell_value(model: &Model, index: usize, cell: Vec<u8>) -> Result<Option<(usize, Value)>, Refusal> {
    let field = &model.def.person_data[index];
    let text = String::from_utf8(cell).map_err(|_| Refusal::of(Some(&field.name), format!("{} is not UTF-8 text", field.name)))?;
    let value = Value::from_text(field.ty, &text, &model.formats)
        .map_err(|e| Refusal::of(Some(&field.name), format!("Person Data field {} {e}", field.name)))?;
    checked(model, index, value)
}

/// An NDJSON line: `{"personData": {...}}`.
pub fn json_row(model: &Model, row: i64, line: &[u8]) -> ImportRow {
    ImportRow { row, values: json_values(model, line) }
}

fn json_values(model: &Model, line: &[u8]) -> Result<Vec<(usize, Value)>, Refusal> {
    let json: Json = serde_json::from_slice(line).map_err(|e| Refusal::of(None, format!("the line is not JSON: {e}")))?;
    let object = json.as_object().ok_or_else(|| Refusal::of(None, "the line must be a JSON object {\"personData\": {...}}"))?;
    if let Some(other) = object.keys().find(|k| k.as_str() != "personData") {
        return Err(Refusal::of(None, format!("unknown member '{other}' (a line is {{\"personData\": {{...}}}})")));
    }
    let person =
        object.get("personData").and_then(Json::as_object).ok_or_else(|| Refusal::of(None, "the line needs a 'personData' object"))?;
    let names: Vec<String> = person.keys().cloned().collect();
    let unknown = unknown_fields(model, &names);
    if !unknown.is_empty() {
        return Err(Refusal::of(None, format!("unknown Person Data fields: {}", unknown.join(", "))));
    }
    let mut values = Vec::with_capacity(person.len());
    for (name, json) in person {
        let index = model.def.person_data.iter().position(|f| &f.name == name).expect("checked above");
        let field = &model.def.person_data[index];
        let value = Value::from_json(field.ty, json, &model.formats)
            .map_err(|e| Refusal::of(Some(name), format!("Person Data field {name} {e}")))?;
        values.extend(checked(model, index, value)?);
    }
    Ok(values)
}

/// The Recipient Id's own rules; an empty one is left out.
fn checked(model: &Model, index: usize, value: Value) -> Result<Option<(usize, Value)>, Refusal> {
    if index != model.def.recipient_id_index() {
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

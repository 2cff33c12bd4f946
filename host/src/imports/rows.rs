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

use crate::model::fields::{field_value, Given, Record};
use crate::model::{FieldType, Model, TableDef, Value};
use crate::store::tenant::{ImportRow, Refusal, Related};

/// The fields an import's rows set.
#[derive(Clone, Copy)]
pub struct Shape<'m> {
    pub model: &'m Model,
    /// A table's records (a Global Data Table's, or the One-To-Many records of an NDJSON line);
    /// recipients when `None`.
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
    pub fn kind(&self) -> Record<'_> {
        self.table.map_or(Record::PersonData, |t| Record::Table(&t.name))
    }

    /// Field `index`'s value read from `given`, or the row's refusal naming the field.
    fn value(&self, index: usize, given: Given<'_>) -> Result<Value, Refusal> {
        let name = self.name(index);
        field_value(self.kind(), name, self.ty(index), given, &self.model.formats).map_err(|e| Refusal::of(Some(name), e))
    }

    /// The field naming each row's record when no key is given: the Recipient Id, or the
    /// table's identifier.
    pub fn identifier(&self) -> usize {
        match self.table {
            Some(t) => t.identifier_index(),
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
    Some(ImportRow { row, values, related: Vec::new() })
}

fn cell_value(shape: Shape<'_>, index: usize, cell: Vec<u8>) -> Result<Option<(usize, Value)>, Refusal> {
    let name = shape.name(index);
    let text = String::from_utf8(cell).map_err(|_| Refusal::of(Some(name), format!("{name} is not UTF-8 text")))?;
    let value = shape.value(index, Given::Text(&text))?;
    checked(shape, index, value)
}

/// An NDJSON line: `{"personData": {...}}` (with One-To-Many records under their tables' names),
/// or a table's record.
pub fn json_row(shape: Shape<'_>, row: i64, line: &[u8]) -> ImportRow {
    match json_line(shape, line) {
        Ok((values, related)) => ImportRow { row, values: Ok(values), related },
        Err(refusal) => ImportRow { row, values: Err(refusal), related: Vec::new() },
    }
}

/// A line's values and the records it carries.
type LineValues = (Vec<(usize, Value)>, Vec<Related>);

fn json_line(shape: Shape<'_>, line: &[u8]) -> Result<LineValues, Refusal> {
    let json: Json = serde_json::from_slice(line).map_err(|e| Refusal::of(None, format!("the line is not JSON: {e}")))?;
    match shape.table {
        Some(_) => {
            let object = json.as_object().ok_or_else(|| Refusal::of(None, "the line must be a JSON object, a record"))?;
            Ok((object_values(shape, object)?, Vec::new()))
        }
        None => {
            let (person, related) = recipient_line(shape.model, &json)?;
            Ok((object_values(shape, person)?, related))
        }
    }
}

fn object_values(shape: Shape<'_>, object: &Map<String, Json>) -> Result<Vec<(usize, Value)>, Refusal> {
    let names: Vec<String> = object.keys().cloned().collect();
    let unknown = unknown_fields(shape, &names);
    if !unknown.is_empty() {
        return Err(Refusal::of(None, format!("unknown {} fields: {}", shape.kind(), unknown.join(", "))));
    }
    let mut values = Vec::with_capacity(object.len());
    for (name, json) in object {
        let index = shape.position(name).expect("checked above");
        let value = shape.value(index, Given::Json(json))?;
        values.extend(checked(shape, index, value)?);
    }
    Ok(values)
}

/// `{"personData": {...}, "<One-To-Many table>": [{record}, ...], ...}`: the Person Data object
/// and the records (each with its identifier; upserted for the recipient, other records kept).
fn recipient_line<'j>(model: &Model, json: &'j Json) -> Result<(&'j Map<String, Json>, Vec<Related>), Refusal> {
    let shape_of_line = "a line is {\"personData\": {...}} with One-To-Many records under their table's name";
    let object = json.as_object().ok_or_else(|| Refusal::of(None, format!("the line must be a JSON object: {shape_of_line}")))?;
    let person =
        object.get("personData").and_then(Json::as_object).ok_or_else(|| Refusal::of(None, "the line needs a 'personData' object"))?;
    let mut related = Vec::new();
    for (name, member) in object.iter().filter(|(name, _)| name.as_str() != "personData") {
        let table = model
            .def
            .one_to_many
            .iter()
            .position(|t| &t.name == name)
            .ok_or_else(|| Refusal::of(None, format!("unknown member '{name}' ({shape_of_line})")))?;
        let def = &model.def.one_to_many[table];
        let items = member.as_array().ok_or_else(|| Refusal::of(Some(name), format!("{name} must be an array of records")))?;
        let shape = Shape { model, table: Some(def) };
        let identifier = shape.identifier();
        let mut records = Vec::with_capacity(items.len());
        for (n, item) in items.iter().enumerate() {
            let at = |message: String| Refusal::of(Some(name), format!("record {} of {name}: {message}", n + 1));
            let record = item.as_object().ok_or_else(|| at("a record must be a JSON object".into()))?;
            let values = object_values(shape, record).map_err(|r| at(r.message))?;
            let id = values.iter().find(|(i, v)| *i == identifier && !v.is_null()).map(|(_, v)| v);
            let id_name = shape.name(identifier);
            let id = id.ok_or_else(|| at(format!("the identifier field {id_name} is required")))?;
            id.check_indexed().map_err(|e| at(format!("the identifier field {id_name} {e}")))?;
            records.push(values);
        }
        related.push(Related { table, records });
    }
    Ok((person, related))
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

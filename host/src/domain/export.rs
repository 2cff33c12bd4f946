//! How recipients are written out in bulk, for the API's `POST /recipients/:export` and the
//! operator's `herald export`: CSV (RFC 4180: a header row of the field names, CRLF line ends, a
//! cell quoted when it holds a comma, a quote, a line break or spaces at either end, its quotes
//! doubled; an empty value is an empty cell; values in the API's text forms, so the file reads
//! back as it is) or NDJSON (`{"personData": {...}}` a line, as the API writes a recipient). The
//! records of a Global Data Table are written alike, an NDJSON line being the record itself.

use crate::model::{Formats, Model, TableDef, Value};
use crate::store::tenant::Recipient;
use crate::values::value::number_to_json;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ExportFormat {
    Csv,
    Ndjson,
}

impl ExportFormat {
    /// `csv` or `ndjson`; the error says what is allowed.
    pub fn parse(text: &str) -> Result<ExportFormat, String> {
        match text {
            "csv" => Ok(ExportFormat::Csv),
            "ndjson" => Ok(ExportFormat::Ndjson),
            other => Err(format!("unknown format '{other}' (csv or ndjson)")),
        }
    }

    pub fn content_type(self) -> &'static str {
        match self {
            ExportFormat::Csv => "text/csv; charset=utf-8",
            ExportFormat::Ndjson => "application/x-ndjson",
        }
    }

    pub fn extension(self) -> &'static str {
        match self {
            ExportFormat::Csv => "csv",
            ExportFormat::Ndjson => "ndjson",
        }
    }
}

/// The Person Data fields (indexes) that `names` picks, in their order; every field when `None`.
/// The error names every unknown field.
pub fn fields(model: &Model, names: Option<&[String]>) -> Result<Vec<usize>, String> {
    let all: Vec<&str> = model.def.person_data.iter().map(|f| f.name.as_str()).collect();
    picked(&all, names, "the instance does not have")
}

/// The fields of Global Data Table `table` that `names` picks, as `fields` does.
pub fn table_fields(table: &TableDef, names: Option<&[String]>) -> Result<Vec<usize>, String> {
    let all: Vec<&str> = table.fields.iter().map(|f| f.name.as_str()).collect();
    picked(&all, names, &format!("table {} does not have", table.name))
}

fn picked(all: &[&str], names: Option<&[String]>, missing: &str) -> Result<Vec<usize>, String> {
    let Some(names) = names else { return Ok((0..all.len()).collect()) };
    let picked = positions(all, names, |unknown| format!("'fields' names fields {missing}: {unknown}"))?;
    if picked.is_empty() {
        return Err("'fields' is empty: name at least one field, or leave it out for all".into());
    }
    Ok(picked)
}

/// Where each of `names` is in `all`; the error (`unknown` of the list) names every unknown one.
fn positions(all: &[&str], names: &[String], unknown: impl FnOnce(&str) -> String) -> Result<Vec<usize>, String> {
    let missing: Vec<&str> = names.iter().filter(|n| !all.contains(&n.as_str())).map(String::as_str).collect();
    if !missing.is_empty() {
        return Err(unknown(&missing.join(", ")));
    }
    Ok(names.iter().map(|n| all.iter().position(|f| f == n).expect("checked above")).collect())
}

/// What comes before the first row (the CSV header row).
pub fn header(format: ExportFormat, model: &Model, fields: &[usize], buf: &mut Vec<u8>) {
    let names: Vec<&str> = model.def.person_data.iter().map(|f| f.name.as_str()).collect();
    names_header(format, &names, fields, buf);
}

/// A table's CSV header row.
pub fn table_header(format: ExportFormat, table: &TableDef, fields: &[usize], buf: &mut Vec<u8>) {
    let names: Vec<&str> = table.fields.iter().map(|f| f.name.as_str()).collect();
    names_header(format, &names, fields, buf);
}

fn names_header(format: ExportFormat, names: &[&str], fields: &[usize], buf: &mut Vec<u8>) {
    if format == ExportFormat::Csv {
        csv_line(fields.iter().map(|i| names[*i]), buf);
    }
}

/// One recipient (a `{"personData": {...}}` line in NDJSON). Called for every row of an export:
/// field names are looked up in place rather than gathered per row.
pub fn row(format: ExportFormat, model: &Model, fields: &[usize], r: &Recipient, buf: &mut Vec<u8>) {
    let names = |i: usize| model.def.person_data[i].name.as_str();
    values_line(format, names, &model.formats, fields, &r.values, Some("personData"), buf);
}

/// One record of a table (the record itself a line in NDJSON, as a record's body).
pub fn table_row(format: ExportFormat, table: &TableDef, formats: &Formats, fields: &[usize], values: &[Value], buf: &mut Vec<u8>) {
    values_line(format, |i| table.fields[i].name.as_str(), formats, fields, values, None, buf);
}

fn values_line<'n>(
    format: ExportFormat,
    names: impl Fn(usize) -> &'n str,
    formats: &Formats,
    fields: &[usize],
    values: &[Value],
    wrapper: Option<&str>,
    buf: &mut Vec<u8>,
) {
    match format {
        ExportFormat::Csv => {
            for (n, i) in fields.iter().enumerate() {
                if n > 0 {
                    buf.push(b',');
                }
                csv_value(&values[*i], formats, buf);
            }
            buf.extend_from_slice(b"\r\n");
        }
        ExportFormat::Ndjson => {
            let object = values_object(names, formats, fields, values);
            let line = match wrapper {
                Some(name) => serde_json::json!({ name: object }),
                None => serde_json::Value::Object(object),
            };
            serde_json::to_writer(&mut *buf, &line).expect("JSON values serialise");
            buf.push(b'\n');
        }
    }
}

fn values_object<'n>(
    names: impl Fn(usize) -> &'n str,
    formats: &Formats,
    fields: &[usize],
    values: &[Value],
) -> serde_json::Map<String, serde_json::Value> {
    let mut object = serde_json::Map::with_capacity(fields.len());
    for i in fields {
        object.insert(names(*i).to_string(), values[*i].to_json(formats));
    }
    object
}

/// One recipient with its records of One-To-Many `tables` (NDJSON only):
/// `{"personData": {...}, "<table>": [{record}, ...], ...}`, as an import reads it back.
pub fn row_with_records(model: &Model, fields: &[usize], r: &Recipient, tables: &[usize], records: &[Vec<Vec<Value>>], buf: &mut Vec<u8>) {
    let names = |i: usize| model.def.person_data[i].name.as_str();
    let mut line = serde_json::Map::with_capacity(1 + tables.len());
    line.insert("personData".into(), serde_json::Value::Object(values_object(names, &model.formats, fields, &r.values)));
    for (table, records) in tables.iter().zip(records) {
        let def = &model.def.one_to_many[*table];
        let all: Vec<usize> = (0..def.fields.len()).collect();
        let names = |i: usize| def.fields[i].name.as_str();
        let list = records.iter().map(|values| serde_json::Value::Object(values_object(names, &model.formats, &all, values))).collect();
        line.insert(def.name.clone(), serde_json::Value::Array(list));
    }
    serde_json::to_writer(&mut *buf, &line).expect("JSON values serialise");
    buf.push(b'\n');
}

/// The One-To-Many tables (indexes) an export names; the error names every unknown one.
pub fn one_to_many_tables(model: &Model, names: &[String]) -> Result<Vec<usize>, String> {
    let all: Vec<&str> = model.def.one_to_many.iter().map(|t| t.name.as_str()).collect();
    positions(&all, names, |unknown| format!("'oneToMany' names tables the instance does not have: {unknown}"))
}

fn csv_line<'a>(cells: impl Iterator<Item = &'a str>, buf: &mut Vec<u8>) {
    for (i, cell) in cells.enumerate() {
        if i > 0 {
            buf.push(b',');
        }
        csv_cell(cell, buf);
    }
    buf.extend_from_slice(b"\r\n");
}

/// A value as a cell, in its API text form, written in place: this runs for every cell of an
/// export, so text is not copied and numbers go straight into the buffer.
fn csv_value(value: &Value, formats: &Formats, buf: &mut Vec<u8>) {
    match value {
        Value::Null => {}
        Value::Text(text) => csv_cell(text, buf),
        // A number that is not finite is never stored (`Value::checked`): it would be an empty cell.
        Value::Number(n) => {
            if let serde_json::Value::Number(number) = number_to_json(*n) {
                serde_json::to_writer(&mut *buf, &number).expect("numbers serialise")
            }
        }
        Value::Bool(b) => buf.extend_from_slice(if *b { b"true" } else { b"false" }),
        Value::Date(_) | Value::Timestamp(_) => csv_cell(&value.to_text(formats), buf),
    }
}

/// One cell, quoted when it holds a comma, a quote, a line break or spaces at either end.
fn csv_cell(cell: &str, buf: &mut Vec<u8>) {
    if cell.contains([',', '"', '\r', '\n']) || cell.starts_with(' ') || cell.ends_with(' ') {
        buf.push(b'"');
        buf.extend_from_slice(cell.replace('"', "\"\"").as_bytes());
        buf.push(b'"');
    } else {
        buf.extend_from_slice(cell.as_bytes());
    }
}

#[cfg(test)]
mod tests {
    use super::{csv_line, csv_value};
    use crate::model::{Formats, Value};

    #[test]
    fn cells_are_quoted_when_they_must_be() {
        let mut buf = Vec::new();
        csv_line(["plain", "a,b", "say \"hi\"", "two\nlines", " pad", ""].into_iter(), &mut buf);
        assert_eq!(String::from_utf8(buf).unwrap(), "plain,\"a,b\",\"say \"\"hi\"\"\",\"two\nlines\",\" pad\",\r\n");
    }

    #[test]
    fn values_are_written_as_the_api_writes_them() {
        let formats = Formats::new("dd.MM.yyyy", "dd.MM.yyyy HH:mm:ss").unwrap();
        let values = [
            Value::Number(42.0),
            Value::Number(-1.5),
            Value::Bool(true),
            Value::Null,
            Value::Text("a \"b\"".into()),
            Value::Date(chrono::NaiveDate::from_ymd_opt(2024, 1, 2).unwrap()),
        ];
        for value in values {
            let mut cell = Vec::new();
            csv_value(&value, &formats, &mut cell);
            let mut expected = Vec::new();
            csv_line([value.to_text(&formats)].iter().map(String::as_str), &mut expected);
            expected.truncate(expected.len() - 2);
            assert_eq!(String::from_utf8(cell).unwrap(), String::from_utf8(expected).unwrap(), "{value:?}");
        }
    }
}

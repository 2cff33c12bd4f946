//! How recipients are written out in bulk, for the API's `POST /recipients/:export` and the
//! operator's `herald export`: CSV (RFC 4180: a header row of the field names, CRLF line ends, a
//! cell quoted when it holds a comma, a quote, a line break or spaces at either end, its quotes
//! doubled; an empty value is an empty cell; values in the API's text forms, so the file reads
//! back as it is) or NDJSON (`{"personData": {...}}` a line, as the API writes a recipient).

use crate::model::Model;
use crate::store::tenant::Recipient;

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
    let person_data = &model.def.person_data;
    let Some(names) = names else { return Ok((0..person_data.len()).collect()) };
    let unknown: Vec<&str> = names.iter().filter(|n| !person_data.iter().any(|f| &f.name == *n)).map(String::as_str).collect();
    if !unknown.is_empty() {
        return Err(format!("'fields' names fields the instance does not have: {}", unknown.join(", ")));
    }
    if names.is_empty() {
        return Err("'fields' is empty: name at least one field, or leave it out for all".into());
    }
    Ok(names.iter().map(|n| person_data.iter().position(|f| &f.name == n).expect("checked above")).collect())
}

/// What comes before the first row (the CSV header row).
pub fn header(format: ExportFormat, model: &Model, fields: &[usize], buf: &mut Vec<u8>) {
    if format == ExportFormat::Csv {
        csv_line(fields.iter().map(|i| model.def.person_data[*i].name.as_str()), buf);
    }
}

/// One recipient.
pub fn row(format: ExportFormat, model: &Model, fields: &[usize], r: &Recipient, buf: &mut Vec<u8>) {
    match format {
        ExportFormat::Csv => {
            let cells: Vec<String> =
                fields.iter().map(|i| if r.values[*i].is_null() { String::new() } else { r.values[*i].to_text(&model.formats) }).collect();
            csv_line(cells.iter().map(String::as_str), buf);
        }
        ExportFormat::Ndjson => {
            let mut person = serde_json::Map::with_capacity(fields.len());
            for i in fields {
                person.insert(model.def.person_data[*i].name.clone(), r.values[*i].to_json(&model.formats));
            }
            serde_json::to_writer(&mut *buf, &serde_json::json!({ "personData": person })).expect("JSON values serialise");
            buf.push(b'\n');
        }
    }
}

fn csv_line<'a>(cells: impl Iterator<Item = &'a str>, buf: &mut Vec<u8>) {
    for (i, cell) in cells.enumerate() {
        if i > 0 {
            buf.push(b',');
        }
        if cell.contains([',', '"', '\r', '\n']) || cell.starts_with(' ') || cell.ends_with(' ') {
            buf.push(b'"');
            buf.extend_from_slice(cell.replace('"', "\"\"").as_bytes());
            buf.push(b'"');
        } else {
            buf.extend_from_slice(cell.as_bytes());
        }
    }
    buf.extend_from_slice(b"\r\n");
}

#[cfg(test)]
mod tests {
    use super::csv_line;

    #[test]
    fn cells_are_quoted_when_they_must_be() {
        let mut buf = Vec::new();
        csv_line(["plain", "a,b", "say \"hi\"", "two\nlines", " pad", ""].into_iter(), &mut buf);
        assert_eq!(String::from_utf8(buf).unwrap(), "plain,\"a,b\",\"say \"\"hi\"\"\",\"two\nlines\",\" pad\",\r\n");
    }
}

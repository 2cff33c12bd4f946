//! Context Parameter Schemas: the format Herald defines for them, the rule that an existing
//! schema's models and fields cannot change (only be added to), and the validator of the
//! contextual data a call carries.
//!
//! A schema file (`media/contexts/<name>.json`; its file name, without `.json`, is the name calls
//! use):
//!
//! ```json
//! {"models": [
//!   {"name": "CUSTOMER", "type": "person_data", "required": true,
//!    "fields": [{"name": "EMAIL", "data_type": "string", "required": true},
//!               {"name": "BIRTHDAY", "data_type": "date"}]},
//!   {"name": "ORDER_LINES", "type": "otm", "fields": [{"name": "SKU", "data_type": "string"}]}
//! ]}
//! ```
//!
//! `type` is `person_data`, `otm`, `global_data` or `gdt`; `data_type` is `string`, `number`,
//! `boolean`, `date` (`YYYY-MM-DD`) or `timestamp` (RFC 3339); `required` defaults to false. The
//! contextual data for that schema is an object with a member per model: an object for
//! `person_data` and `global_data`, an array of objects for `otm` and `gdt`.

use std::collections::HashSet;

use serde::{Deserialize, Serialize};
use serde_json::Value as Json;

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Schema {
    pub models: Vec<Model>,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Model {
    pub name: String,
    #[serde(rename = "type")]
    pub kind: ModelKind,
    #[serde(default)]
    pub required: bool,
    pub fields: Vec<Field>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ModelKind {
    PersonData,
    Otm,
    GlobalData,
    Gdt,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Field {
    pub name: String,
    pub data_type: DataType,
    #[serde(default)]
    pub required: bool,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum DataType {
    String,
    Number,
    Boolean,
    Date,
    Timestamp,
}

/// Reads and checks a schema file; the error says what is wrong.
pub fn parse(bytes: &[u8]) -> Result<Schema, String> {
    let schema: Schema = serde_json::from_slice(bytes).map_err(|e| format!("the schema is not valid: {e}"))?;
    if schema.models.is_empty() {
        return Err("the schema needs at least one model".into());
    }
    let mut models = HashSet::new();
    for m in &schema.models {
        if m.name.is_empty() || !models.insert(m.name.as_str()) {
            return Err(format!("model name '{}' is empty or used twice", m.name));
        }
        if m.fields.is_empty() {
            return Err(format!("model {} needs at least one field", m.name));
        }
        let mut fields = HashSet::new();
        for f in &m.fields {
            if f.name.is_empty() || !fields.insert(f.name.as_str()) {
                return Err(format!("field name '{}' of model {} is empty or used twice", f.name, m.name));
            }
        }
    }
    Ok(schema)
}

/// Whether `new` only adds to `old`: every model and field of `old` is in `new`, unchanged.
pub fn check_evolution(old: &Schema, new: &Schema) -> Result<(), String> {
    for m in &old.models {
        let Some(n) = new.models.iter().find(|n| n.name == m.name) else {
            return Err(format!("model {} cannot be removed from an existing schema", m.name));
        };
        if n.kind != m.kind || n.required != m.required {
            return Err(format!("model {} of an existing schema cannot change", m.name));
        }
        for f in &m.fields {
            match n.fields.iter().find(|g| g.name == f.name) {
                None => return Err(format!("field {}.{} cannot be removed from an existing schema", m.name, f.name)),
                Some(g) if g != f => return Err(format!("field {}.{} of an existing schema cannot change", m.name, f.name)),
                Some(_) => {}
            }
        }
    }
    Ok(())
}

/// Checks contextual data against a schema; the error lists every problem.
pub fn validate(schema: &Schema, data: &Json) -> Result<(), Vec<String>> {
    let mut problems = Vec::new();
    let Some(object) = data.as_object() else {
        return Err(vec!["contextual data must be a JSON object with a member per model".into()]);
    };
    for name in object.keys() {
        if !schema.models.iter().any(|m| &m.name == name) {
            problems.push(format!("unknown model '{name}'"));
        }
    }
    for m in &schema.models {
        match (object.get(&m.name), m.kind) {
            (None | Some(Json::Null), _) => {
                if m.required {
                    problems.push(format!("model {} is required", m.name));
                }
            }
            (Some(Json::Object(record)), ModelKind::PersonData | ModelKind::GlobalData) => check_record(m, record, &m.name, &mut problems),
            (Some(Json::Array(records)), ModelKind::Otm | ModelKind::Gdt) => {
                for (i, r) in records.iter().enumerate() {
                    match r.as_object() {
                        Some(record) => check_record(m, record, &format!("{}[{i}]", m.name), &mut problems),
                        None => problems.push(format!("{}[{i}] must be an object", m.name)),
                    }
                }
            }
            (Some(_), ModelKind::PersonData | ModelKind::GlobalData) => problems.push(format!("model {} must be an object", m.name)),
            (Some(_), ModelKind::Otm | ModelKind::Gdt) => problems.push(format!("model {} must be an array of objects", m.name)),
        }
    }
    if problems.is_empty() {
        Ok(())
    } else {
        Err(problems)
    }
}

fn check_record(m: &Model, record: &serde_json::Map<String, Json>, at: &str, problems: &mut Vec<String>) {
    for name in record.keys() {
        if !m.fields.iter().any(|f| &f.name == name) {
            problems.push(format!("{at}: unknown field '{name}'"));
        }
    }
    for f in &m.fields {
        match record.get(&f.name) {
            None | Some(Json::Null) => {
                if f.required {
                    problems.push(format!("{at}.{} is required", f.name));
                }
            }
            // Members are named as the schema spells them (names are matched exactly).
            Some(v) => {
                if let Err(why) = fits(f.data_type, v) {
                    problems.push(format!("{at}.{} {why}", f.name));
                }
            }
        }
    }
}

/// Whether `v` is a value of `ty`, within the ranges every stored value keeps (`Value::checked`:
/// NUMBER within ±(2^53−1), years 1000 to 9999, no NUL in text); else what is wrong.
fn fits(ty: DataType, v: &Json) -> Result<(), String> {
    use crate::values::Value;
    let value = match (ty, v) {
        (DataType::String, Json::String(s)) => Value::Text(s.clone()),
        (DataType::Number, Json::Number(n)) => Value::Number(n.as_f64().unwrap_or(f64::INFINITY)),
        (DataType::Boolean, Json::Bool(b)) => Value::Bool(*b),
        (DataType::Date, Json::String(s)) => match chrono::NaiveDate::parse_from_str(s, "%Y-%m-%d") {
            Ok(date) => Value::Date(date),
            Err(_) => return Err("must be a date (YYYY-MM-DD)".into()),
        },
        (DataType::Timestamp, Json::String(s)) => match chrono::DateTime::parse_from_rfc3339(s) {
            Ok(t) => Value::Timestamp(t.naive_utc()),
            Err(_) => return Err("must be a timestamp (RFC 3339, such as 2026-11-26T09:30:00Z)".into()),
        },
        (DataType::String, _) => return Err("must be a string".into()),
        (DataType::Number, _) => return Err("must be a number".into()),
        (DataType::Boolean, _) => return Err("must be true or false".into()),
        (DataType::Date, _) => return Err("must be a date (YYYY-MM-DD)".into()),
        (DataType::Timestamp, _) => return Err("must be a timestamp (RFC 3339, such as 2026-11-26T09:30:00Z)".into()),
    };
    value.checked().map(|_| ())
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn schema() -> Schema {
        parse(
            br#"{"models": [
              {"name": "CUSTOMER", "type": "person_data", "required": true,
               "fields": [{"name": "EMAIL", "data_type": "string", "required": true}, {"name": "BIRTHDAY", "data_type": "date"}]},
              {"name": "LINES", "type": "otm", "fields": [{"name": "QTY", "data_type": "number"}, {"name": "AT", "data_type": "timestamp"}]}
            ]}"#,
        )
        .unwrap()
    }

    #[test]
    fn malformed_schemas_say_why() {
        assert!(parse(b"{}").unwrap_err().contains("models"));
        assert!(parse(br#"{"models": []}"#).unwrap_err().contains("at least one model"));
        assert!(parse(br#"{"models": [{"name": "A", "type": "person", "fields": []}]}"#).is_err());
        let twice = br#"{"models": [{"name": "A", "type": "otm", "fields": [{"name": "X", "data_type": "string"}, {"name": "X", "data_type": "number"}]}]}"#;
        assert!(parse(twice).unwrap_err().contains("used twice"));
    }

    #[test]
    fn schemas_only_grow() {
        let old = schema();
        let mut added = old.clone();
        added.models[1].fields.push(Field { name: "NOTE".into(), data_type: DataType::String, required: false });
        assert!(check_evolution(&old, &added).is_ok());
        let mut changed = old.clone();
        changed.models[0].fields[1].data_type = DataType::String;
        assert!(check_evolution(&old, &changed).unwrap_err().contains("CUSTOMER.BIRTHDAY"));
        let mut removed = old.clone();
        removed.models.pop();
        assert!(check_evolution(&old, &removed).unwrap_err().contains("LINES"));
    }

    #[test]
    fn data_is_validated() {
        let s = schema();
        assert!(validate(
            &s,
            &json!({"CUSTOMER": {"EMAIL": "a@b.c", "BIRTHDAY": "1990-12-24"}, "LINES": [{"QTY": 2, "AT": "2024-01-01T10:00:00Z"}]})
        )
        .is_ok());
        let problems =
            validate(&s, &json!({"CUSTOMER": {"BIRTHDAY": "24.12.1990", "X": 1}, "LINES": [{"QTY": "two"}, 5], "NOPE": {}})).unwrap_err();
        let text = problems.join("\n");
        for expected in [
            "CUSTOMER.EMAIL is required",
            "CUSTOMER.BIRTHDAY must be a date (YYYY-MM-DD)",
            "unknown field 'X'",
            "LINES[0].QTY must be a number",
            "LINES[1] must be an object",
            "unknown model 'NOPE'",
        ] {
            assert!(text.contains(expected), "{expected} in {text}");
        }
        assert!(validate(&s, &json!({})).unwrap_err()[0].contains("CUSTOMER is required"));
        // The ranges every stored value keeps.
        let problems =
            validate(&s, &json!({"CUSTOMER": {"EMAIL": "a\u{0}b", "BIRTHDAY": "0000-01-01"}, "LINES": [{"QTY": 9007199254740994.0_f64}]}))
                .unwrap_err()
                .join("\n");
        for expected in [
            "CUSTOMER.EMAIL holds the NUL character",
            "CUSTOMER.BIRTHDAY is out of range: a DATE lies in the years 1000 to 9999",
            "LINES[0].QTY is out of range",
        ] {
            assert!(problems.contains(expected), "{expected} in {problems}");
        }
    }
}

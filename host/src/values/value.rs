//! Typed field values: how they are read from JSON and text, and written back to JSON in the
//! instance's formats. Numbers are IEEE doubles (integers are exact up to 2^53 and are written
//! back without a fraction); dates and timestamps carry no zone and are taken as UTC.
//!
//! What a field accepts (`Value::checked`, applied wherever a value comes in: JSON, text, the
//! extensions' WIT values): a NUMBER lies within ±(2^53 − 1), the range in which every whole
//! number is exact in a double and in a JSON number read by any client (beyond it `1e19` and
//! `1e19 + 1` are the same value); a DATE or TIMESTAMP lies in the years 1000 to 9999, written
//! with four digits (so `01.01.20` for `dd.MM.yyyy` is refused rather than stored as the year 20,
//! and stored dates sort as text).

use chrono::{NaiveDate, NaiveDateTime};
use serde_json::Value as Json;

use super::{FieldType, Formats};

/// The largest magnitude of a NUMBER: 2^53 − 1 (JavaScript's `Number.MAX_SAFE_INTEGER`).
pub const MAX_EXACT_NUMBER: f64 = 9_007_199_254_740_991.0;
/// The longest STRING of an indexed column, in bytes (a PostgreSQL B-tree entry holds at most
/// 2704).
pub const MAX_INDEXED_TEXT: usize = 2000;
/// The first and last years of a DATE or TIMESTAMP.
pub const FIRST_YEAR: i32 = 1000;

/// Whether `n` may be a NUMBER Recipient Id: a whole number from 1 to 2^53 − 1, so that the next
/// one is exact and every client reads it back as the same number.
pub fn is_recipient_number(n: f64) -> bool {
    n.fract() == 0.0 && (1.0..=MAX_EXACT_NUMBER).contains(&n)
}
pub const LAST_YEAR: i32 = 9999;

/// One field's value.
#[derive(Debug, Clone, PartialEq)]
pub enum Value {
    Null,
    Text(String),
    Number(f64),
    Bool(bool),
    Date(NaiveDate),
    Timestamp(NaiveDateTime),
}

impl Value {
    pub fn is_null(&self) -> bool {
        matches!(self, Value::Null)
    }

    /// Reads a value of a field of type `ty` from JSON. `null` and `""` are the empty value (the
    /// spec clears a field sent "empty or null"). Types are strict: a number field takes a JSON
    /// number, a boolean field a JSON boolean, date and timestamp fields a string in the
    /// instance's format (ISO 8601 is accepted too).
    pub fn from_json(ty: FieldType, json: &Json, formats: &Formats) -> Result<Value, String> {
        match json {
            Json::Null => return Ok(Value::Null),
            Json::String(s) if s.is_empty() => return Ok(Value::Null),
            _ => {}
        }
        match (ty, json) {
            (FieldType::String, Json::String(s)) => Value::Text(s.clone()).checked(),
            (FieldType::Number, Json::Number(n)) => {
                n.as_f64().map(Value::Number).ok_or_else(|| "expects a finite NUMBER".to_string())?.checked()
            }
            (FieldType::Boolean, Json::Bool(b)) => Ok(Value::Bool(*b)),
            (FieldType::Date | FieldType::Timestamp, Json::String(s)) => Value::from_text(ty, s, formats),
            (FieldType::String, _) => Err("expects a STRING (a JSON string)".into()),
            (FieldType::Number, _) => Err("expects a NUMBER (a JSON number)".into()),
            (FieldType::Boolean, _) => Err("expects a BOOLEAN (true or false)".into()),
            (FieldType::Date, _) => Err(format!("expects a DATE as a string '{}'", formats.date.source())),
            (FieldType::Timestamp, _) => Err(format!("expects a TIMESTAMP as a string '{}'", formats.timestamp.source())),
        }
    }

    /// Reads a value from text (Global Data VALUE strings, identifiers in paths).
    pub fn from_text(ty: FieldType, text: &str, formats: &Formats) -> Result<Value, String> {
        if text.is_empty() {
            return Ok(Value::Null);
        }
        match ty {
            FieldType::String => Value::Text(text.to_string()).checked(),
            FieldType::Number => text
                .trim()
                .parse::<f64>()
                .ok()
                .filter(|f| f.is_finite())
                .map(Value::Number)
                .ok_or_else(|| format!("expects a NUMBER, got '{text}'"))?
                .checked(),
            FieldType::Boolean => match text {
                "true" => Ok(Value::Bool(true)),
                "false" => Ok(Value::Bool(false)),
                _ => Err(format!("expects a BOOLEAN (true or false), got '{text}'")),
            },
            FieldType::Date => formats
                .date
                .parse_date(text)
                .or_else(|| NaiveDate::parse_from_str(text, "%Y-%m-%d").ok())
                .map(Value::Date)
                .ok_or_else(|| format!("expects a DATE formatted '{}', got '{text}'", formats.date.source()))?
                .checked(),
            FieldType::Timestamp => formats
                .timestamp
                .parse_timestamp(text)
                .or_else(|| parse_iso_timestamp(text))
                .map(Value::Timestamp)
                .ok_or_else(|| format!("expects a TIMESTAMP formatted '{}', got '{text}'", formats.timestamp.source()))?
                .checked(),
        }
    }

    /// The value if a field may hold it (the module's rules: NUMBER range, years of dates), or
    /// what is wrong in the customer's terms.
    pub fn checked(self) -> Result<Value, String> {
        use chrono::Datelike;
        let year_ok = |y: i32| (FIRST_YEAR..=LAST_YEAR).contains(&y);
        match &self {
            Value::Number(n) if !n.is_finite() => Err("expects a finite NUMBER".into()),
            Value::Number(n) if n.abs() > MAX_EXACT_NUMBER => Err(format!(
                "is out of range: a NUMBER lies between -{0} and {0} (2^53 - 1), where whole numbers are exact",
                MAX_EXACT_NUMBER as i64
            )),
            Value::Date(d) if !year_ok(d.year()) => Err(format!("is out of range: a DATE lies in the years {FIRST_YEAR} to {LAST_YEAR}")),
            Value::Timestamp(t) if !year_ok(t.year()) => {
                Err(format!("is out of range: a TIMESTAMP lies in the years {FIRST_YEAR} to {LAST_YEAR}"))
            }
            Value::Text(t) if t.contains('\0') => Err("holds the NUL character (U+0000), which a STRING cannot hold".into()),
            _ => Ok(self),
        }
    }

    /// For a value of an indexed column: what `checked` allows, and text of at most
    /// `MAX_INDEXED_TEXT` bytes.
    pub fn check_indexed(&self) -> Result<(), String> {
        match self {
            Value::Text(t) if t.len() > MAX_INDEXED_TEXT => {
                Err(format!("is {} bytes long: this field is indexed and holds at most {MAX_INDEXED_TEXT}", t.len()))
            }
            _ => Ok(()),
        }
    }

    /// The value on the wire, in the instance's formats, serialised where it is written (an
    /// answer's bytes) without a JSON tree first.
    pub fn wire<'a>(&'a self, formats: &'a Formats) -> WireValue<'a> {
        WireValue { value: self, formats }
    }

    /// The value on the wire as a JSON tree (`wire`'s output).
    pub fn to_json(&self, formats: &Formats) -> Json {
        serde_json::to_value(self.wire(formats)).expect("a value serialises")
    }

    /// The value as text (Global Data VALUE, identifiers in messages).
    pub fn to_text(&self, formats: &Formats) -> String {
        match self.to_json(formats) {
            Json::Null => String::new(),
            Json::String(s) => s,
            other => other.to_string(),
        }
    }
}

/// A value as it goes on the wire: integral numbers as JSON integers (`number_to_json`), dates
/// and timestamps as text in the instance's formats (the only ones that make a string on the
/// way), the rest as JSON's own kinds.
pub struct WireValue<'a> {
    value: &'a Value,
    formats: &'a Formats,
}

impl serde::Serialize for WireValue<'_> {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        match self.value {
            Value::Null => s.serialize_unit(),
            Value::Text(t) => s.serialize_str(t),
            Value::Number(n) => serde::Serialize::serialize(&number_to_json(*n), s),
            Value::Bool(b) => s.serialize_bool(*b),
            Value::Date(d) => s.serialize_str(&self.formats.date.format_date(*d)),
            Value::Timestamp(t) => s.serialize_str(&self.formats.timestamp.format_timestamp(*t)),
        }
    }
}

/// Integral doubles are written as JSON integers, so `USER_ID` reads back as `1`, not `1.0`.
pub fn number_to_json(n: f64) -> Json {
    if n.fract() == 0.0 && n.abs() < 9_007_199_254_740_992.0 {
        Json::from(n as i64)
    } else {
        serde_json::Number::from_f64(n).map(Json::Number).unwrap_or(Json::Null)
    }
}

/// ISO 8601 / RFC 3339 timestamps; an offset is converted to UTC.
pub fn parse_iso_timestamp(text: &str) -> Option<NaiveDateTime> {
    if let Ok(dt) = chrono::DateTime::parse_from_rfc3339(text) {
        return Some(dt.naive_utc());
    }
    NaiveDateTime::parse_from_str(text, "%Y-%m-%dT%H:%M:%S").or_else(|_| NaiveDateTime::parse_from_str(text, "%Y-%m-%d %H:%M:%S")).ok()
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn formats() -> Formats {
        Formats::new("dd.MM.yyyy", "dd.MM.yyyy HH:mm:ss").unwrap()
    }

    #[test]
    fn strict_types() {
        let f = formats();
        assert_eq!(Value::from_json(FieldType::Number, &json!(3), &f), Ok(Value::Number(3.0)));
        assert!(Value::from_json(FieldType::Number, &json!("3"), &f).is_err());
        assert!(Value::from_json(FieldType::String, &json!(3), &f).is_err());
        assert!(Value::from_json(FieldType::Boolean, &json!("true"), &f).is_err());
        assert_eq!(Value::from_json(FieldType::String, &json!(""), &f), Ok(Value::Null));
        assert_eq!(Value::from_json(FieldType::Number, &json!(null), &f), Ok(Value::Null));
    }

    #[test]
    fn dates_use_the_instance_format_and_iso() {
        let f = formats();
        let d = Value::from_json(FieldType::Date, &json!("24.12.1990"), &f).unwrap();
        assert_eq!(d.to_json(&f), json!("24.12.1990"));
        let iso = Value::from_json(FieldType::Date, &json!("1990-12-24"), &f).unwrap();
        assert_eq!(iso, d);
        assert!(Value::from_json(FieldType::Date, &json!("24/12/1990"), &f).is_err());
        let t = Value::from_json(FieldType::Timestamp, &json!("2024-01-01T10:00:00+02:00"), &f).unwrap();
        assert_eq!(t.to_json(&f), json!("01.01.2024 08:00:00"));
    }

    #[test]
    fn numbers_and_dates_out_of_range_are_refused() {
        let f = formats();
        let max = 9_007_199_254_740_991_i64;
        assert_eq!(Value::from_json(FieldType::Number, &json!(max), &f), Ok(Value::Number(max as f64)));
        assert_eq!(Value::from_json(FieldType::Number, &json!(-max), &f), Ok(Value::Number(-max as f64)));
        for big in [json!(max + 1), json!(1e19), json!(-1e300), json!(u64::MAX)] {
            let e = Value::from_json(FieldType::Number, &big, &f).unwrap_err();
            assert!(e.contains("out of range") && e.contains("9007199254740991"), "{big}: {e}");
        }
        assert!(Value::from_text(FieldType::Number, "1e19", &f).is_err());
        assert_eq!(Value::from_json(FieldType::Number, &json!(0.15), &f), Ok(Value::Number(0.15)));
        for bad in ["01.01.20", "-0001-01-01", "01.01.0999", "+10000-01-01"] {
            let e = Value::from_json(FieldType::Date, &json!(bad), &f);
            assert!(e.is_err(), "{bad}: {e:?}");
        }
        assert!(Value::from_json(FieldType::Date, &json!("01.01.1000"), &f).is_ok());
        assert!(Value::from_json(FieldType::Date, &json!("9999-12-31"), &f).is_ok());
        assert!(Value::from_json(FieldType::Timestamp, &json!("0020-01-01T00:00:00Z"), &f).is_err());
        assert!(Value::from_json(FieldType::String, &json!("a\u{0}b"), &f).unwrap_err().contains("NUL"));
        assert!(Value::from_text(FieldType::String, "a\0", &f).is_err());
        assert!(Value::Text("x".repeat(MAX_INDEXED_TEXT)).check_indexed().is_ok());
        assert!(Value::Text("x".repeat(MAX_INDEXED_TEXT + 1)).check_indexed().is_err());
    }

    #[test]
    fn numbers_keep_integers_integral() {
        assert_eq!(number_to_json(42.0), json!(42));
        assert_eq!(number_to_json(0.15), json!(0.15));
        assert_eq!(Value::Number(7.0).to_text(&formats()), "7");
    }
}

//! Typed field values, below the data model and the filters (both use them, neither is used by
//! them): the five field types, a value of each (`value`), and the instance's date and timestamp
//! formats (`format`).

pub mod format;
pub mod value;

use serde::{Deserialize, Serialize};

pub use format::Pattern;
pub use value::{is_recipient_number, Value, MAX_EXACT_NUMBER};

/// The types a field can have.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "UPPERCASE")]
pub enum FieldType {
    String,
    Number,
    Boolean,
    Date,
    Timestamp,
}

impl FieldType {
    pub fn name(self) -> &'static str {
        match self {
            FieldType::String => "STRING",
            FieldType::Number => "NUMBER",
            FieldType::Boolean => "BOOLEAN",
            FieldType::Date => "DATE",
            FieldType::Timestamp => "TIMESTAMP",
        }
    }
}

/// The instance's date and timestamp formats, compiled.
#[derive(Debug, Clone)]
pub struct Formats {
    pub date: Pattern,
    pub timestamp: Pattern,
}

impl Formats {
    pub fn new(date: &str, timestamp: &str) -> Result<Formats, String> {
        let date_pattern = Pattern::parse(date).map_err(|e| format!("date_format: {e}"))?;
        if !date_pattern.is_date_only() {
            return Err(format!("date_format '{date}' must not hold time elements"));
        }
        let timestamp = Pattern::parse(timestamp).map_err(|e| format!("timestamp_format: {e}"))?;
        Ok(Formats { date: date_pattern, timestamp })
    }
}

//! Typed values and records: what the platform's interfaces take and give.

pub use crate::bindings::platform::herald::platform::types::{Error, Field, Value};

impl From<&str> for Value {
    fn from(text: &str) -> Value {
        Value::Text(text.to_string())
    }
}

impl From<String> for Value {
    fn from(text: String) -> Value {
        Value::Text(text)
    }
}

impl From<f64> for Value {
    fn from(n: f64) -> Value {
        Value::Number(n)
    }
}

impl From<i64> for Value {
    fn from(n: i64) -> Value {
        Value::Number(n as f64)
    }
}

impl From<i32> for Value {
    fn from(n: i32) -> Value {
        Value::Number(f64::from(n))
    }
}

impl From<bool> for Value {
    fn from(b: bool) -> Value {
        Value::Boolean(b)
    }
}

impl<T: Into<Value>> From<Option<T>> for Value {
    fn from(v: Option<T>) -> Value {
        v.map(Into::into).unwrap_or(Value::Null)
    }
}

impl Value {
    /// A date, `YYYY-MM-DD`.
    pub fn date(text: impl Into<String>) -> Value {
        Value::Date(text.into())
    }

    /// A timestamp, RFC 3339.
    pub fn timestamp(text: impl Into<String>) -> Value {
        Value::Timestamp(text.into())
    }

    /// The text of a text, date or timestamp value.
    pub fn as_str(&self) -> Option<&str> {
        match self {
            Value::Text(t) | Value::Date(t) | Value::Timestamp(t) => Some(t),
            _ => None,
        }
    }

    /// The number of a number value.
    pub fn as_f64(&self) -> Option<f64> {
        match self {
            Value::Number(n) => Some(*n),
            _ => None,
        }
    }

    /// The truth of a boolean value.
    pub fn as_bool(&self) -> Option<bool> {
        match self {
            Value::Boolean(b) => Some(*b),
            _ => None,
        }
    }

    /// Whether the value is null.
    pub fn is_null(&self) -> bool {
        matches!(self, Value::Null)
    }

    /// The value as JSON, as the REST API writes it: a whole number without a fraction (`40`, not
    /// `40.0`), dates and timestamps as their text.
    ///
    /// ```
    /// use herald_sdk::Value;
    /// assert_eq!(Value::Number(40.0).to_json().to_string(), "40");
    /// assert_eq!(Value::Number(0.15).to_json().to_string(), "0.15");
    /// ```
    pub fn to_json(&self) -> serde_json::Value {
        /// Whole numbers within ±(2^53 − 1), the platform's range, are integers in JSON.
        const MAX_EXACT: f64 = 9_007_199_254_740_991.0;
        match self {
            Value::Null => serde_json::Value::Null,
            Value::Text(t) | Value::Date(t) | Value::Timestamp(t) => serde_json::Value::String(t.clone()),
            Value::Number(n) if n.fract() == 0.0 && n.abs() <= MAX_EXACT => serde_json::Value::from(*n as i64),
            Value::Number(n) => serde_json::Number::from_f64(*n).map(serde_json::Value::Number).unwrap_or(serde_json::Value::Null),
            Value::Boolean(b) => serde_json::Value::Bool(*b),
        }
    }

    /// A JSON scalar as a value (strings become text; the platform converts text to the field's
    /// type, dates included). Arrays and objects are not values: `None`.
    pub fn from_json(json: &serde_json::Value) -> Option<Value> {
        Some(match json {
            serde_json::Value::Null => Value::Null,
            serde_json::Value::Bool(b) => Value::Boolean(*b),
            serde_json::Value::Number(n) => Value::Number(n.as_f64()?),
            serde_json::Value::String(s) => Value::Text(s.clone()),
            _ => return None,
        })
    }
}

/// A record (a recipient's Person Data, a One-To-Many or Global Data Table record): fields in order.
///
/// ```
/// use herald_sdk::{Record, Value};
///
/// let ann = Record::new().with("EMAIL", "ann@example.com").with("AGE", 31).with("NEWSLETTER", true);
/// assert_eq!(ann.text("EMAIL"), Some("ann@example.com"));
/// assert_eq!(ann.number("AGE"), Some(31.0));
/// assert_eq!(ann.get("NEWSLETTER"), Some(&Value::Boolean(true)));
/// assert_eq!(ann.get("PHONE"), None);
/// ```
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Record(Vec<Field>);

impl Record {
    /// An empty record.
    pub fn new() -> Record {
        Record(Vec::new())
    }

    /// The record with `name` set to `value`.
    pub fn with(mut self, name: &str, value: impl Into<Value>) -> Record {
        self.set(name, value);
        self
    }

    /// Sets `name` to `value`, replacing a value it had.
    pub fn set(&mut self, name: &str, value: impl Into<Value>) {
        let value = value.into();
        match self.0.iter_mut().find(|f| f.name == name) {
            Some(field) => field.value = value,
            None => self.0.push(Field { name: name.to_string(), value }),
        }
    }

    /// The value of `name`, if the record has the field.
    pub fn get(&self, name: &str) -> Option<&Value> {
        self.0.iter().find(|f| f.name == name).map(|f| &f.value)
    }

    /// The text of `name` (text, date or timestamp).
    pub fn text(&self, name: &str) -> Option<&str> {
        self.get(name).and_then(Value::as_str)
    }

    /// The number of `name`.
    pub fn number(&self, name: &str) -> Option<f64> {
        self.get(name).and_then(Value::as_f64)
    }

    /// The truth of `name`.
    pub fn boolean(&self, name: &str) -> Option<bool> {
        self.get(name).and_then(Value::as_bool)
    }

    /// The fields, in order.
    pub fn fields(&self) -> &[Field] {
        &self.0
    }

    /// The record as a type of the extension's own (typed access to a recipient's Person Data):
    /// fields by name, NUMBERs as numbers, everything else as text, empty fields as null.
    ///
    /// ```
    /// #[derive(serde::Deserialize)]
    /// #[allow(non_snake_case)]
    /// struct Shopper { USER_ID: f64, CITY: Option<String> }
    ///
    /// let r = herald_sdk::Record::new().with("USER_ID", 7.0).with("CITY", "Lyon");
    /// let shopper: Shopper = r.parse().unwrap();
    /// assert_eq!((shopper.USER_ID, shopper.CITY.as_deref()), (7.0, Some("Lyon")));
    /// ```
    pub fn parse<T: serde::de::DeserializeOwned>(&self) -> Result<T, String> {
        serde_json::from_value(self.to_json()).map_err(|e| format!("the record does not fit: {e}"))
    }

    /// The record as a JSON object.
    pub fn to_json(&self) -> serde_json::Value {
        serde_json::Value::Object(self.0.iter().map(|f| (f.name.clone(), f.value.to_json())).collect())
    }

    /// The scalar members of a JSON object as a record (others are left out).
    ///
    /// ```
    /// let r = herald_sdk::Record::from_json(&serde_json::json!({"EMAIL": "a@b.c", "AGE": 40, "TAGS": [1]}));
    /// assert_eq!(r.fields().len(), 2);
    /// ```
    pub fn from_json(json: &serde_json::Value) -> Record {
        let mut record = Record::new();
        if let Some(object) = json.as_object() {
            for (name, value) in object {
                if let Some(value) = Value::from_json(value) {
                    record.set(name, value);
                }
            }
        }
        record
    }
}

impl From<Vec<Field>> for Record {
    fn from(fields: Vec<Field>) -> Record {
        Record(fields)
    }
}

impl From<Record> for Vec<Field> {
    fn from(record: Record) -> Vec<Field> {
        record.0
    }
}

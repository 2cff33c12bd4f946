//! How typed values are stored: numbers as REAL, booleans as INTEGER 0/1, dates as
//! `YYYY-MM-DD` and timestamps as `YYYY-MM-DDTHH:MM:SS.mmm` text (fixed width, so text order
//! is time order and range filters use indexes).

use chrono::{NaiveDate, NaiveDateTime};
use sqlx::query::Query;
use sqlx::sqlite::{Sqlite, SqliteArguments, SqliteRow};
use sqlx::Row;

use crate::model::{FieldType, Value};

const DATE: &str = "%Y-%m-%d";
const TIMESTAMP: &str = "%Y-%m-%dT%H:%M:%S%.3f";

pub type SqliteQuery<'q> = Query<'q, Sqlite, SqliteArguments<'q>>;

pub fn bind<'q>(query: SqliteQuery<'q>, value: &Value) -> SqliteQuery<'q> {
    match value {
        Value::Null => query.bind(None::<String>),
        Value::Text(s) => query.bind(s.clone()),
        Value::Number(n) => query.bind(*n),
        Value::Bool(b) => query.bind(*b),
        Value::Date(d) => query.bind(d.format(DATE).to_string()),
        Value::Timestamp(t) => query.bind(t.format(TIMESTAMP).to_string()),
    }
}

pub fn bind_all<'q>(mut query: SqliteQuery<'q>, values: &[Value]) -> SqliteQuery<'q> {
    for v in values {
        query = bind(query, v);
    }
    query
}

/// Reads column `index` of `row` as a value of type `ty`.
pub fn decode(row: &SqliteRow, index: usize, ty: FieldType) -> Result<Value, sqlx::Error> {
    let corrupt = |what: &str, text: &str| sqlx::Error::Decode(format!("stored {what} '{text}' is malformed").into());
    Ok(match ty {
        FieldType::String => row.try_get::<Option<String>, _>(index)?.map_or(Value::Null, Value::Text),
        FieldType::Number => row.try_get::<Option<f64>, _>(index)?.map_or(Value::Null, Value::Number),
        FieldType::Boolean => row.try_get::<Option<bool>, _>(index)?.map_or(Value::Null, Value::Bool),
        FieldType::Date => match row.try_get::<Option<String>, _>(index)? {
            None => Value::Null,
            Some(s) => Value::Date(NaiveDate::parse_from_str(&s, DATE).map_err(|_| corrupt("date", &s))?),
        },
        FieldType::Timestamp => match row.try_get::<Option<String>, _>(index)? {
            None => Value::Null,
            Some(s) => {
                Value::Timestamp(NaiveDateTime::parse_from_str(&s, TIMESTAMP).map_err(|_| corrupt("timestamp", &s))?)
            }
        },
    })
}

/// The SQLite column type of a field type.
pub fn column_type(ty: FieldType) -> &'static str {
    match ty {
        FieldType::String | FieldType::Date | FieldType::Timestamp => "TEXT",
        FieldType::Number => "REAL",
        FieldType::Boolean => "INTEGER",
    }
}

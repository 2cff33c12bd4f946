//! How typed values are stored: numbers as REAL (DOUBLE PRECISION on PostgreSQL), booleans as
//! INTEGER 0/1 (BOOLEAN on PostgreSQL), dates as `YYYY-MM-DD` and timestamps as
//! `YYYY-MM-DDTHH:MM:SS.mmm` text (fixed width, so text order is time order and range filters use
//! indexes) on both engines.

use chrono::{NaiveDate, NaiveDateTime};
use sqlx::any::{Any, AnyArguments, AnyRow, AnyTypeInfoKind};
use sqlx::query::Query;
use sqlx::Row;

use crate::model::{FieldType, Value};
use crate::rsql::Dialect;

const DATE: &str = "%Y-%m-%d";
const TIMESTAMP: &str = "%Y-%m-%dT%H:%M:%S%.3f";

pub type AnyQuery<'q> = Query<'q, Any, AnyArguments<'q>>;

/// Binds a value whose column type is not known here. A NULL is bound as text: use
/// `bind_typed` where a NULL may go into a column of another type (PostgreSQL checks).
pub fn bind<'q>(query: AnyQuery<'q>, value: &Value) -> AnyQuery<'q> {
    match value {
        Value::Null => query.bind(None::<String>),
        Value::Text(s) => query.bind(s.clone()),
        Value::Number(n) => query.bind(*n),
        Value::Bool(b) => query.bind(*b),
        Value::Date(d) => query.bind(date_text(*d)),
        Value::Timestamp(t) => query.bind(timestamp_text(*t)),
    }
}

/// A date as it is stored.
pub fn date_text(d: NaiveDate) -> String {
    d.format(DATE).to_string()
}

/// A timestamp as it is stored.
pub fn timestamp_text(t: NaiveDateTime) -> String {
    t.format(TIMESTAMP).to_string()
}

/// A stored date's text read back; the error says what is malformed.
pub fn stored_date(text: &str) -> Result<NaiveDate, String> {
    NaiveDate::parse_from_str(text, DATE).map_err(|_| format!("stored date '{text}' is malformed"))
}

/// A stored timestamp's text read back; the error says what is malformed.
pub fn stored_timestamp(text: &str) -> Result<NaiveDateTime, String> {
    NaiveDateTime::parse_from_str(text, TIMESTAMP).map_err(|_| format!("stored timestamp '{text}' is malformed"))
}

/// A NULL that reaches PostgreSQL as a DOUBLE PRECISION parameter, as a number (an `f64`) does.
/// sqlx 0.8.6's Any driver swaps the NULL float types (sqlx issue 4284: `None::<f64>` is
/// sent as a `real`, `None::<f32>` as a `double precision`). The type matters beyond the NULL
/// itself: a connection prepares a statement once, with the parameter types of its first call,
/// and a later call of the same statement with a number in that place was refused ("incorrect
/// binary data format in bind parameter"), a 500 that depended on which pooled connection served
/// the call. `null_number_and_number_share_a_statement` (tests/it/global_data.rs) fails if an
/// upgrade of sqlx changes this.
const NULL_DOUBLE: Option<f32> = None;

/// Binds a value for a column of type `ty` (a NULL of that column's type).
pub fn bind_typed<'q>(query: AnyQuery<'q>, value: &Value, ty: FieldType) -> AnyQuery<'q> {
    match (value, ty) {
        (Value::Null, FieldType::Number) => query.bind(NULL_DOUBLE),
        (Value::Null, FieldType::Boolean) => query.bind(None::<bool>),
        (v, _) => bind(query, v),
    }
}

pub fn bind_all<'q>(mut query: AnyQuery<'q>, values: &[Value]) -> AnyQuery<'q> {
    for v in values {
        query = bind(query, v);
    }
    query
}

/// Reads column `index` of `row` as a value of type `ty`.
pub fn decode(row: &AnyRow, index: usize, ty: FieldType) -> Result<Value, sqlx::Error> {
    let corrupt = |message: String| sqlx::Error::Decode(message.into());
    Ok(match ty {
        FieldType::String => row.try_get::<Option<String>, _>(index)?.map_or(Value::Null, Value::Text),
        FieldType::Number => row.try_get::<Option<f64>, _>(index)?.map_or(Value::Null, Value::Number),
        FieldType::Boolean => get_bool(row, index)?.map_or(Value::Null, Value::Bool),
        FieldType::Date => match row.try_get::<Option<String>, _>(index)? {
            None => Value::Null,
            Some(s) => Value::Date(stored_date(&s).map_err(corrupt)?),
        },
        FieldType::Timestamp => match row.try_get::<Option<String>, _>(index)? {
            None => Value::Null,
            Some(s) => Value::Timestamp(stored_timestamp(&s).map_err(corrupt)?),
        },
    })
}

/// A boolean column: BOOLEAN on PostgreSQL, an integer 0/1 on SQLite.
pub fn get_bool(row: &AnyRow, index: usize) -> Result<Option<bool>, sqlx::Error> {
    let raw = row.try_get_raw(index)?;
    if sqlx::ValueRef::is_null(&raw) {
        return Ok(None);
    }
    if sqlx::ValueRef::type_info(&raw).kind() == AnyTypeInfoKind::Bool {
        row.try_get::<bool, _>(index).map(Some)
    } else {
        Ok(Some(row.try_get::<i64, _>(index)? != 0))
    }
}

/// The column type of a field type. Text on PostgreSQL compares bytewise (`COLLATE "C"`), as on
/// SQLite, whatever the database's locale: sorting and range filters behave the same on both,
/// and ISO dates and timestamps order as instants.
pub fn column_type(ty: FieldType, dialect: Dialect) -> &'static str {
    match (ty, dialect) {
        (FieldType::String | FieldType::Date | FieldType::Timestamp, Dialect::Sqlite) => "TEXT",
        (FieldType::String | FieldType::Date | FieldType::Timestamp, Dialect::Postgres) => "TEXT COLLATE \"C\"",
        (FieldType::Number, Dialect::Sqlite) => "REAL",
        (FieldType::Number, Dialect::Postgres) => "DOUBLE PRECISION",
        (FieldType::Boolean, Dialect::Sqlite) => "INTEGER",
        (FieldType::Boolean, Dialect::Postgres) => "BOOLEAN",
    }
}

//! The instance's data, as the platform's interfaces give it: always the instance the call was
//! made for (Herald takes it from the route or the credential; nothing here can name another).
//! Each function imports its interface only when the extension uses it, so an open extension that
//! never reads recipients does not import `recipients-read` (Herald refuses that import for open
//! extensions).

use crate::bindings::platform::herald::platform as wit;
use crate::record::{Error, Record, Value};

/// Recipients: get, find, create, update, upsert, delete, and their One-To-Many records and events.
pub mod recipients {
    use super::*;

    /// The recipient whose unique field `key_field` holds `key`.
    pub fn get(key_field: &str, key: impl Into<Value>) -> Result<Option<Record>, Error> {
        Ok(wit::recipients_read::get(key_field, &key.into())?.map(Record::from))
    }

    /// Recipients matching an RSQL filter (as the REST API's `filter`), at most `limit` (<= 1000).
    pub fn find(filter: &str, limit: u32) -> Result<Vec<Record>, Error> {
        Ok(wit::recipients_read::find(filter, limit)?.into_iter().map(Record::from).collect())
    }

    /// The recipient's records of One-To-Many table `table` matching an RSQL filter on the
    /// table's fields (blank: all), at most `limit` (<= 1000).
    ///
    /// ```no_run
    /// // Purchases since a date, of the recipient whose USER_ID is 42.
    /// let recent = herald_sdk::recipients::records("USER_ID", 42.0, "PURCHASES", "PURCHASED_AT=ge=2026-01-01T00:00:00Z", 1)?;
    /// # Ok::<(), herald_sdk::Error>(())
    /// ```
    pub fn records(key_field: &str, key: impl Into<Value>, table: &str, filter: &str, limit: u32) -> Result<Vec<Record>, Error> {
        Ok(wit::recipients_read::records(key_field, &key.into(), table, filter, limit)?.into_iter().map(Record::from).collect())
    }

    /// Creates a recipient; `Error::Conflict` when a unique value is taken.
    pub fn create(person_data: Record) -> Result<Record, Error> {
        wit::recipients_write::create(&Vec::from(person_data)).map(Record::from)
    }

    /// Sets fields of the recipient whose unique field `key_field` holds `key`;
    /// `Error::NotFound` when there is none.
    pub fn update(key_field: &str, key: impl Into<Value>, person_data: Record) -> Result<Record, Error> {
        wit::recipients_write::update(key_field, &key.into(), &Vec::from(person_data)).map(Record::from)
    }

    /// Creates the recipient or updates the one its Recipient Id (or another unique field) names.
    pub fn upsert(person_data: Record) -> Result<Record, Error> {
        wit::recipients_write::upsert(&Vec::from(person_data)).map(Record::from)
    }

    /// Deletes a recipient; false when there was none.
    pub fn delete(key_field: &str, key: impl Into<Value>) -> Result<bool, Error> {
        wit::recipients_write::delete(key_field, &key.into())
    }

    /// Upserts One-To-Many records of a recipient (by their identifier); returns how many.
    pub fn upsert_records(key_field: &str, key: impl Into<Value>, table: &str, records: Vec<Record>) -> Result<u32, Error> {
        let records: Vec<_> = records.into_iter().map(Vec::from).collect();
        wit::recipients_write::upsert_records(key_field, &key.into(), table, &records)
    }

    /// Deletes One-To-Many records of a recipient by identifier; returns how many existed.
    pub fn delete_records(key_field: &str, key: impl Into<Value>, table: &str, ids: Vec<Value>) -> Result<u32, Error> {
        wit::recipients_write::delete_records(key_field, &key.into(), table, &ids)
    }

    /// Records that the recipient achieved an event of the instance.
    pub fn achieve_event(key_field: &str, key: impl Into<Value>, event: &str) -> Result<(), Error> {
        wit::recipients_write::achieve_event(key_field, &key.into(), event)
    }
}

/// Global Data Tables.
pub mod tables {
    use super::*;

    /// The record of `table` with identifier `id`.
    pub fn get(table: &str, id: impl Into<Value>) -> Result<Option<Record>, Error> {
        Ok(wit::tables::get(table, &id.into())?.map(Record::from))
    }

    /// Records of `table` matching an RSQL filter, at most `limit`.
    pub fn find(table: &str, filter: &str, limit: u32) -> Result<Vec<Record>, Error> {
        Ok(wit::tables::find(table, filter, limit)?.into_iter().map(Record::from).collect())
    }

    /// Creates the record, or sets the given fields of the record with its identifier.
    pub fn upsert(table: &str, record: Record) -> Result<(), Error> {
        wit::tables::upsert(table, &Vec::from(record))
    }

    /// Deletes a record; false when there was none.
    pub fn delete(table: &str, id: impl Into<Value>) -> Result<bool, Error> {
        wit::tables::delete(table, &id.into())
    }
}

/// Global Data values (as text, like the REST API's VALUE).
pub mod global_data {
    use super::*;

    /// The value of `name`; `None` when it is not set.
    pub fn get(name: &str) -> Result<Option<String>, Error> {
        wit::global_data::get(name)
    }

    /// Sets `name`, which the instance must define.
    pub fn set(name: &str, value: &str) -> Result<(), Error> {
        wit::global_data::set(name, value)
    }
}

/// The instance's secrets (set with `PUT /extensions/secrets/{name}` or `herald secrets set`).
/// Only authheader extensions may read them: an upload of another type that calls this is
/// refused. Herald keeps the values out of the execution's log and output.
pub mod secrets {
    use super::*;

    /// The value of secret `name`; `None` when it is not set.
    pub fn get(name: &str) -> Result<Option<String>, Error> {
        crate::bindings::authheader_world::herald::platform::secrets::get(name)
    }
}

/// The contextual data of the call that triggered this execution (JSON), if any.
pub fn context() -> Option<serde_json::Value> {
    wit::context::data().and_then(|text| serde_json::from_str(&text).ok())
}

/// Lines kept with the execution for the instance's operator (`GET /extensions/logs/{id}`).
pub mod log {
    use super::wit::log::{log, Level};

    /// A debug line.
    pub fn debug(message: &str) {
        log(Level::Debug, message)
    }

    /// An informative line.
    pub fn info(message: &str) {
        log(Level::Info, message)
    }

    /// A warning.
    pub fn warn(message: &str) {
        log(Level::Warn, message)
    }

    /// An error.
    pub fn error(message: &str) {
        log(Level::Error, message)
    }
}

//! Recipients of the instance the call was made for: get, find, create, update, upsert,
//! delete, and their One-To-Many records and events (`herald:platform/recipients-read` and
//! `recipients-write`; an open extension may write but not read them).

use crate::bindings::platform::herald::platform as wit;
use crate::record::{Error, Record, Value};

/// The recipient whose unique field `key_field` holds `key`; `None` when there is none.
///
/// ```no_run
/// if let Some(ann) = herald_sdk::recipients::get("EMAIL", "ann@example.com")? {
///     herald_sdk::log::info(&format!("found {}", ann.to_json()));
/// }
/// # Ok::<(), herald_sdk::Error>(())
/// ```
pub fn get(key_field: &str, key: impl Into<Value>) -> Result<Option<Record>, Error> {
    Ok(wit::recipients_read::get(key_field, &key.into())?.map(Record::from))
}

/// Recipients matching an RSQL filter (as the REST API's `filter`), at most `limit` (1000 at
/// most; the JavaScript and Python SDKs take 100 when they are given none).
///
/// ```no_run
/// let in_paris = herald_sdk::recipients::find("CITY==\"Paris\";AGE=ge=18", 100)?;
/// # Ok::<(), herald_sdk::Error>(())
/// ```
pub fn find(filter: &str, limit: u32) -> Result<Vec<Record>, Error> {
    Ok(wit::recipients_read::find(filter, limit)?.into_iter().map(Record::from).collect())
}

/// The recipient's records of One-To-Many table `table` matching an RSQL filter on the table's
/// fields (blank: all), at most `limit` (1000 at most).
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
///
/// ```no_run
/// use herald_sdk::Record;
/// let made = herald_sdk::recipients::create(Record::new().with("EMAIL", "ann@example.com").with("FIRST_NAME", "Ann"))?;
/// # Ok::<(), herald_sdk::Error>(())
/// ```
pub fn create(person_data: Record) -> Result<Record, Error> {
    wit::recipients_write::create(&Vec::from(person_data)).map(Record::from)
}

/// Sets fields of the recipient whose unique field `key_field` holds `key`; `Error::NotFound`
/// when there is none.
///
/// ```no_run
/// use herald_sdk::Record;
/// herald_sdk::recipients::update("EMAIL", "ann@example.com", Record::new().with("CITY", "Lyon"))?;
/// # Ok::<(), herald_sdk::Error>(())
/// ```
pub fn update(key_field: &str, key: impl Into<Value>, person_data: Record) -> Result<Record, Error> {
    wit::recipients_write::update(key_field, &key.into(), &Vec::from(person_data)).map(Record::from)
}

/// Creates the recipient or updates the one its Recipient Id (or another unique field) names.
///
/// ```no_run
/// use herald_sdk::Record;
/// let stored = herald_sdk::recipients::upsert(Record::new().with("EMAIL", "ann@example.com").with("OPTIN", true))?;
/// # Ok::<(), herald_sdk::Error>(())
/// ```
pub fn upsert(person_data: Record) -> Result<Record, Error> {
    wit::recipients_write::upsert(&Vec::from(person_data)).map(Record::from)
}

/// Deletes a recipient with its records and events; false when there was none.
///
/// ```no_run
/// let gone = herald_sdk::recipients::delete("EMAIL", "ann@example.com")?;
/// # Ok::<(), herald_sdk::Error>(())
/// ```
pub fn delete(key_field: &str, key: impl Into<Value>) -> Result<bool, Error> {
    wit::recipients_write::delete(key_field, &key.into())
}

/// Upserts One-To-Many records of a recipient (by their identifier); returns how many. A call
/// delivered twice writes the same records again: webhooks are called at least once.
///
/// ```no_run
/// use herald_sdk::Record;
/// let line = Record::new().with("ID", "order-1001").with("PRODUCT", "Tea").with("AMOUNT", 12.5);
/// let written = herald_sdk::recipients::upsert_records("EMAIL", "ann@example.com", "PURCHASES", vec![line])?;
/// # Ok::<(), herald_sdk::Error>(())
/// ```
pub fn upsert_records(key_field: &str, key: impl Into<Value>, table: &str, records: Vec<Record>) -> Result<u32, Error> {
    let records: Vec<_> = records.into_iter().map(Vec::from).collect();
    wit::recipients_write::upsert_records(key_field, &key.into(), table, &records)
}

/// Deletes One-To-Many records of a recipient by identifier; returns how many existed.
///
/// ```no_run
/// let deleted = herald_sdk::recipients::delete_records("EMAIL", "ann@example.com", "PURCHASES", vec!["order-1001".into()])?;
/// # Ok::<(), herald_sdk::Error>(())
/// ```
pub fn delete_records(key_field: &str, key: impl Into<Value>, table: &str, ids: Vec<Value>) -> Result<u32, Error> {
    wit::recipients_write::delete_records(key_field, &key.into(), table, &ids)
}

/// Records that the recipient achieved an event of the instance (which starts the flows it
/// triggers).
///
/// ```no_run
/// herald_sdk::recipients::achieve_event("EMAIL", "ann@example.com", "NEWSLETTER_SIGNUP")?;
/// # Ok::<(), herald_sdk::Error>(())
/// ```
pub fn achieve_event(key_field: &str, key: impl Into<Value>, event: &str) -> Result<(), Error> {
    wit::recipients_write::achieve_event(key_field, &key.into(), event)
}

//! The instance's Global Data Tables (`herald:platform/tables`): records by identifier, found by
//! an RSQL filter, upserted, deleted.

use crate::bindings::platform::herald::platform as wit;
use crate::record::{Error, Record, Value};

/// The record of `table` with identifier `id`; `None` when there is none.
///
/// ```no_run
/// let opera = herald_sdk::tables::get("STORES", "S1")?;
/// # Ok::<(), herald_sdk::Error>(())
/// ```
pub fn get(table: &str, id: impl Into<Value>) -> Result<Option<Record>, Error> {
    Ok(wit::tables::get(table, &id.into())?.map(Record::from))
}

/// Records of `table` matching an RSQL filter (blank: all), at most `limit` (1000 at most).
///
/// ```no_run
/// let in_paris = herald_sdk::tables::find("STORES", "CITY==\"Paris\"", 100)?;
/// # Ok::<(), herald_sdk::Error>(())
/// ```
pub fn find(table: &str, filter: &str, limit: u32) -> Result<Vec<Record>, Error> {
    Ok(wit::tables::find(table, filter, limit)?.into_iter().map(Record::from).collect())
}

/// Creates the record, or sets the given fields of the record with its identifier.
///
/// ```no_run
/// use herald_sdk::Record;
/// herald_sdk::tables::upsert("STORES", Record::new().with("ID", "S1").with("NAME", "Opera").with("CITY", "Paris"))?;
/// # Ok::<(), herald_sdk::Error>(())
/// ```
pub fn upsert(table: &str, record: Record) -> Result<(), Error> {
    wit::tables::upsert(table, &Vec::from(record))
}

/// Deletes a record; false when there was none.
///
/// ```no_run
/// let gone = herald_sdk::tables::delete("STORES", "S1")?;
/// # Ok::<(), herald_sdk::Error>(())
/// ```
pub fn delete(table: &str, id: impl Into<Value>) -> Result<bool, Error> {
    wit::tables::delete(table, &id.into())
}

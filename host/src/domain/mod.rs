//! The data model's rules, in one place, and the one way in to an instance's data: the REST
//! handlers (`http/`), the extensions' host functions (`runtime/host/`) and the flows call these
//! to read and write it (the layering test holds them to it; the bulk machinery of exports,
//! paging documents and streamed searches excepted), so a rule cannot hold in one door and not
//! in another. Each function takes the instance (its model and
//! its store) and plain values; the callers turn the answer into their own errors
//! (`From<DomainError>` for the API's, a match for the guest's).
//!
//! - a recipient's Recipient Id cannot change (`recipients::update`);
//! - an upsert names its recipient by the Recipient Id, or failing that any unique field it holds
//!   (`recipients::upsert`);
//! - an event must be one the instance defines, and is achieved at the server's clock
//!   (`recipients::achieve_event`);
//! - One-To-Many and Global Data Table records are reached through their `TableRef` scope
//!   (`tables.rs`);
//! - filters are compiled against the model's selectors and the instance's formats
//!   (`filter`);
//! - an achieved event or a created recipient starts flows (`triggers`), whichever door it came
//!   through;
//! - the values every door passes in were read by `model::fields` (JSON bodies, a flow's `set`,
//!   a guest's WIT values, an import's cells), the one reader of field values, with one wording of
//!   its refusals.

pub mod export;
pub mod global_data;
pub mod recipients;
pub mod tables;
pub mod triggers;

use crate::rsql::{self, Condition, FilterError, Selectors};
use crate::store::StoreError;
use crate::tenants::Tenant;

/// Why a rule refused, or the store failed.
#[derive(Debug)]
pub enum DomainError {
    /// No such recipient, table, record or event.
    NotFound,
    /// The request does not fit the data model; the message says why.
    Invalid(String),
    /// It conflicts with what is stored (a unique value taken, an immutable field changed).
    Conflict(String),
    /// A filter names a selector the model does not have.
    UnknownSelector(String),
    /// The store failed (or refused with a message of its own: `StoreError::Invalid`/`Conflict`).
    Store(StoreError),
}

pub type DomainResult<T> = Result<T, DomainError>;

/// The refusal in the words the REST API uses (no Rust names), for the callers that pass it on
/// as text: flow traces, monitors' logs.
impl std::fmt::Display for DomainError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            DomainError::NotFound => f.write_str("not found"),
            DomainError::Invalid(m) | DomainError::Conflict(m) => f.write_str(m),
            DomainError::UnknownSelector(s) => write!(f, "unknown field {s}"),
            DomainError::Store(e) => write!(f, "{e}"),
        }
    }
}

impl From<StoreError> for DomainError {
    fn from(e: StoreError) -> DomainError {
        match e {
            StoreError::Invalid(m) => DomainError::Invalid(m),
            StoreError::Conflict(m) => DomainError::Conflict(m),
            e => DomainError::Store(e),
        }
    }
}

impl From<FilterError> for DomainError {
    fn from(e: FilterError) -> DomainError {
        match e {
            FilterError::UnknownSelector(s) => DomainError::UnknownSelector(s),
            FilterError::Invalid(m) => DomainError::Invalid(m),
        }
    }
}

/// An optional filter compiled against `selectors` (the Person Data, or a table's fields) in the
/// instance's formats and its store's SQL dialect. (An empty filter is refused by the parser: the
/// REST API's `?filter=` is a mistake; a guest's blank filter means none, decided by its caller.)
pub fn filter(text: Option<&str>, selectors: &dyn Selectors, tenant: &Tenant) -> DomainResult<Option<Condition>> {
    match text {
        Some(text) => Ok(Some(rsql::compile_text(text, selectors, &tenant.model.formats, tenant.db.dialect())?)),
        None => Ok(None),
    }
}

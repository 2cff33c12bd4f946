//! The host side of `herald:platform` (wit/platform.wit), one module per interface
//! (`recipients.rs` for recipients-read and recipients-write, `tables.rs`, `global_data.rs`,
//! `context.rs`, `log.rs`, `secrets.rs`, `signatures.rs`), each with its `add_to_linker` and
//! implemented on a borrowed view of the call state that holds only what it needs; the
//! turning of WIT values into the model's and back is `values.rs`. Each function acts on the
//! instance the call was made for (`CallState::tenant`, set from the route or credential) and on
//! nothing else, and writes through `domain`.
//!
//! Guest-visible errors are `types::Error` values the guest can handle; only faults of Herald
//! (`HostError::Fault`: the instance's data could not be reached) trap, and the execution ends
//! `fault` (`outcome.rs`). Every function has a tracing span (`bindgen!`'s `tracing`).

mod context;
mod global_data;
mod log;
mod recipients;
pub mod secrets;
pub mod signatures;
mod tables;
mod values;

use std::sync::Arc;

use wasmtime::component::{HasData, Linker};

use super::journal::Journal;
use super::state::CallState;
use crate::clock::Clock;
use crate::domain::triggers::{Lineage, Triggers};
use crate::domain::DomainError;
use crate::store::StoreError;
use crate::tenants::Tenant;

pub use values::person_fields;

pub(crate) mod bindings {
    wasmtime::component::bindgen!({
        path: "../wit",
        world: "herald:platform/imports",
        imports: {
            "herald:platform/context": async | tracing,
            "herald:platform/log": async | tracing,
            default: async | trappable | tracing,
        },
        trappable_error_type: { "herald:platform/types.error" => crate::runtime::host::HostError },
    });
}

/// Why a platform call did not do what the guest asked: the guest's to handle (a WIT error), or
/// Herald's own fault (a trap; the reason is logged by the server, the guest sees none of it).
#[derive(Debug)]
pub enum HostError {
    Guest(GuestError),
    Fault(&'static str),
}

impl From<GuestError> for HostError {
    fn from(e: GuestError) -> Self {
        HostError::Guest(e)
    }
}

use bindings::herald::platform::types;
pub(crate) use bindings::herald::platform::types::{Error as GuestError, Field, Value as WitValue};

/// What the data interfaces (recipients, tables, Global Data) see of a call: its instance, the
/// clock events are achieved at, the flows its writes start and where it stands in their chain,
/// and a local run's journal; nothing else of the call's state (its WASI context, its limits, its
/// secrets).
pub(super) struct DataView<'a> {
    pub tenant: &'a Arc<Tenant>,
    pub clock: &'a Arc<dyn Clock>,
    triggers: Option<&'a Arc<dyn Triggers>>,
    lineage: &'a Lineage,
    pub journal: Option<&'a Journal>,
    /// The records this call's writes touched, for its receipt.
    rows_written: &'a std::sync::atomic::AtomicU64,
}

/// The data interfaces' view of the call state, for their `add_to_linker`.
pub(super) struct Data;

impl HasData for Data {
    type Data<'a> = DataView<'a>;
}

impl DataView<'_> {
    pub(super) fn of(state: &mut CallState) -> DataView<'_> {
        state.host_calls += 1;
        DataView {
            tenant: &state.tenant,
            clock: &state.clock,
            triggers: state.triggers.as_ref(),
            lineage: &state.lineage,
            journal: state.journal.as_ref(),
            rows_written: &state.rows_written,
        }
    }

    /// Counts a change of `rows` records for the call's receipt, and notes it for a local run's
    /// journal (none in production: the line is not made).
    pub(super) fn note_change(&self, rows: u64, line: impl FnOnce() -> String) {
        self.rows_written.fetch_add(rows, std::sync::atomic::Ordering::Relaxed);
        if let Some(journal) = self.journal {
            journal.note(line());
        }
    }

    /// Starts the flows that `what` triggers, one event further down the chain than this call.
    pub(super) fn happened<'a>(
        &self,
        key: i64,
        what: crate::domain::triggers::Happening<'a>,
    ) -> impl std::future::Future<Output = ()> + Send + 'a {
        let (triggers, tenant, lineage) = (self.triggers.cloned(), Arc::clone(self.tenant), self.lineage.next());
        async move {
            if let Some(triggers) = triggers {
                triggers.happened(&tenant, key, what, lineage).await;
            }
        }
    }
}

/// Every interface of `herald:platform` into `linker` (each kind's upload check decides which of
/// them its extensions may import).
pub fn add_to_linker(linker: &mut Linker<CallState>) -> anyhow::Result<()> {
    types::add_to_linker::<CallState, wasmtime::component::HasSelf<CallState>>(linker, |state| state)?;
    recipients::add_to_linker(linker)?;
    tables::add_to_linker(linker)?;
    global_data::add_to_linker(linker)?;
    context::add_to_linker(linker)?;
    log::add_to_linker(linker)?;
    secrets::add_to_linker(linker)?;
    signatures::add_to_linker(linker)?;
    Ok(())
}

/// The most recipients or records `find` returns.
pub(super) const MAX_FIND: u32 = 1000;

pub(super) type Answer<T> = Result<T, HostError>;

pub(super) fn invalid(message: impl Into<String>) -> GuestError {
    GuestError::Invalid(message.into())
}

/// A guest error's text as the REST API would say it (no Rust names), for the places that carry
/// one refusal inside another (an entry of a batch).
pub(super) fn guest_text(e: GuestError) -> String {
    match e {
        GuestError::Invalid(m) | GuestError::Conflict(m) => m,
        GuestError::NotFound => "not found".into(),
        GuestError::Forbidden => "forbidden".into(),
        GuestError::LimitExceeded => "a limit of the instance is reached".into(),
    }
}

pub(super) fn from_store(e: StoreError) -> HostError {
    match e {
        StoreError::Conflict(m) => GuestError::Conflict(m).into(),
        StoreError::Invalid(m) => GuestError::Invalid(m).into(),
        StoreError::Db(e) => {
            tracing::error!(error = %e, "a platform call failed");
            HostError::Fault("the instance's data could not be reached")
        }
    }
}

/// The guest's view of a rule's refusal.
pub(super) fn from_domain(e: DomainError) -> HostError {
    match e {
        DomainError::NotFound => GuestError::NotFound.into(),
        DomainError::Invalid(m) => GuestError::Invalid(m).into(),
        DomainError::UnknownSelector(s) => invalid(format!("unknown selector {s}")).into(),
        DomainError::Conflict(m) => GuestError::Conflict(m).into(),
        DomainError::Store(e) => from_store(e),
    }
}

/// A guest's mistake as the WIT error it handles; Herald's own fault as a trap.
fn convert(e: HostError) -> wasmtime::Result<GuestError> {
    match e {
        HostError::Guest(e) => Ok(e),
        HostError::Fault(why) => Err(wasmtime::Error::new(super::HostFault(why.to_string()))),
    }
}

/// Every interface whose functions return `types.error` converts it the same way, on whichever
/// view it is implemented.
macro_rules! converts_errors {
    ($($view:ty),*) => {
        $(impl types::Host for $view {
            fn convert_error(&mut self, e: HostError) -> wasmtime::Result<GuestError> {
                convert(e)
            }
        })*
    };
}

converts_errors!(CallState, DataView<'_>, secrets::SecretsView<'_>, signatures::SigningView<'_>);

//! `secrets`: the instance's secrets, opened for the interfaces that may use them (an
//! authheader's `secrets.get`, and the signature checks of `signatures.rs`, which never hand the
//! value to the guest). Every value opened is noted as revealed, so that the call's records
//! have it replaced by `[secret]`.

use std::sync::Arc;

use wasmtime::component::{HasData, Linker};

use super::{invalid, Answer, GuestError, HostError};
use crate::runtime::kinds::authheader::secrets_interface;
use crate::runtime::state::CallState;
use crate::secrets::KeyRing;
use crate::tenants::Tenant;

/// What the interfaces that use secrets see of a call: its instance, the key ring it may use
/// (none: it may not), and the values it has seen, which its records have replaced by `[secret]`.
pub(super) struct SecretsView<'a> {
    pub tenant: &'a Arc<Tenant>,
    pub ring: Option<&'a KeyRing>,
    pub revealed: &'a mut Vec<String>,
}

struct Secrets;

impl HasData for Secrets {
    type Data<'a> = SecretsView<'a>;
}

pub(super) fn add_to_linker(linker: &mut Linker<CallState>) -> wasmtime::Result<()> {
    secrets_interface::add_to_linker::<CallState, Secrets>(linker, |state| {
        state.host_calls += 1;
        SecretsView { tenant: &state.tenant, ring: state.secrets.as_ref(), revealed: &mut state.revealed }
    })
}

impl SecretsView<'_> {
    /// The value of the instance's secret `name`, noted as revealed; for the interfaces that use
    /// secrets (`secrets.get`, the signature checks), each of which decides first whether its
    /// call may.
    pub(super) async fn open(&mut self, name: &str) -> Answer<Option<String>> {
        let Some(ring) = self.ring else { return Err(GuestError::Forbidden.into()) };
        let tenant = Arc::clone(self.tenant);
        match crate::secrets::get(ring, &tenant, name).await {
            Ok(value) => {
                self.revealed.extend(value.iter().cloned());
                Ok(value)
            }
            Err(crate::secrets::SecretError::Unopenable { name, reason }) => {
                tracing::error!(instance = tenant.customer_id(), secret = %name, %reason, "a secret cannot be opened");
                Err(invalid(format!("secret {name} cannot be opened on this node (its operator is told why)")).into())
            }
            Err(e) => {
                tracing::error!(instance = tenant.customer_id(), error = %e, "a secret could not be read");
                Err(HostError::Fault("the instance's secrets could not be reached"))
            }
        }
    }
}

/// `secrets.get`: the instance's secret, for an authheader extension's call only (no other call
/// holds the key ring; their uploads may not import the interface either).
impl secrets_interface::Host for SecretsView<'_> {
    async fn get(&mut self, name: String) -> Answer<Option<String>> {
        self.open(&name).await
    }
}

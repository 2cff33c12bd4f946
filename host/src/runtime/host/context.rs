//! `context`: the contextual data of the call that triggered this one (a flow's run); an http
//! call carries none.

use wasmtime::component::{HasSelf, Linker};

use super::bindings::herald::platform::context;
use crate::runtime::state::CallState;

pub(super) fn add_to_linker(linker: &mut Linker<CallState>) -> wasmtime::Result<()> {
    context::add_to_linker::<CallState, HasSelf<CallState>>(linker, |state| state)
}

impl context::Host for CallState {
    async fn data(&mut self) -> Option<String> {
        self.context.clone()
    }
}

//! `context`: the contextual data of the call that triggered this one (a flow's run); an http
//! call carries none.

use wasmtime::component::{HasData, Linker};

use super::bindings::herald::platform::context;
use crate::runtime::state::CallState;

/// All the `context` interface sees of a call: its contextual data.
pub(super) struct ContextView<'a>(Option<&'a str>);

struct Context;

impl HasData for Context {
    type Data<'a> = ContextView<'a>;
}

pub(super) fn add_to_linker(linker: &mut Linker<CallState>) -> wasmtime::Result<()> {
    context::add_to_linker::<CallState, Context>(linker, |state| {
        state.host_calls += 1;
        ContextView(state.context.as_deref())
    })
}

impl context::Host for ContextView<'_> {
    async fn data(&mut self) -> Option<String> {
        self.0.map(str::to_string)
    }
}

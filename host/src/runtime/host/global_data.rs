//! `global-data`: the instance's Global Data items, read and set with their types' rules.

use std::sync::Arc;

use wasmtime::component::Linker;

use super::bindings::herald::platform::global_data;
use super::{from_domain, Answer, Data, DataView, GuestError};
use crate::domain;
use crate::runtime::state::CallState;

pub(super) fn add_to_linker(linker: &mut Linker<CallState>) -> wasmtime::Result<()> {
    global_data::add_to_linker::<CallState, Data>(linker, DataView::of)
}

impl global_data::Host for DataView<'_> {
    async fn get(&mut self, name: String) -> Answer<Option<String>> {
        let tenant = Arc::clone(self.tenant);
        tenant.model.def.global_data_item(&name).ok_or(GuestError::NotFound)?;
        Ok(domain::global_data::get(&tenant, &name).await.map_err(from_domain)?.and_then(|v| v.value))
    }

    async fn set(&mut self, name: String, value: String) -> Answer<()> {
        let tenant = Arc::clone(self.tenant);
        domain::global_data::set(&tenant, &name, &value).await.map_err(from_domain)?;
        self.note_change(1, || format!("global data {name} set to {}", serde_json::Value::String(value)));
        Ok(())
    }
}

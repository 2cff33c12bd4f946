//! `log`: the lines an extension logs, kept with its execution (bounded, secrets redacted when
//! the record is made: `call.rs`).

use wasmtime::component::{HasSelf, Linker};

use super::bindings::herald::platform::log;
use crate::runtime::state::CallState;

pub(super) fn add_to_linker(linker: &mut Linker<CallState>) -> wasmtime::Result<()> {
    log::add_to_linker::<CallState, HasSelf<CallState>>(linker, |state| state)
}

impl log::Host for CallState {
    async fn log(&mut self, level: log::Level, message: String) {
        let level = match level {
            log::Level::Debug => "debug",
            log::Level::Info => "info",
            log::Level::Warn => "warn",
            log::Level::Error => "error",
        };
        self.record_log(level, &message);
    }
}

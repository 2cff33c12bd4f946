//! `log`: the lines an extension logs, kept with its execution (bounded, secrets redacted when
//! the record is made: `call.rs`).

use wasmtime::component::{HasData, Linker};

use super::bindings::herald::platform::log;
use crate::runtime::state::CallState;

/// All the `log` interface sees of a call: the lines it keeps.
pub(super) struct LogView<'a>(&'a mut Vec<String>);

struct Log;

impl HasData for Log {
    type Data<'a> = LogView<'a>;
}

pub(super) fn add_to_linker(linker: &mut Linker<CallState>) -> wasmtime::Result<()> {
    log::add_to_linker::<CallState, Log>(linker, |state| {
        state.host_calls += 1;
        LogView(&mut state.log)
    })
}

impl log::Host for LogView<'_> {
    async fn log(&mut self, level: log::Level, message: String) {
        let level = match level {
            log::Level::Debug => "debug",
            log::Level::Info => "info",
            log::Level::Warn => "warn",
            log::Level::Error => "error",
        };
        crate::runtime::state::keep_log_line(self.0, level, &message);
    }
}

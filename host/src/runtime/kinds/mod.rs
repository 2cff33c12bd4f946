//! One small module per kind of extension, each an `Invocation` over the shared call path
//! (`call.rs`): what the guest is asked and what its answer means. The worlds of `wit/` are
//! bound once per kind here; their imports are the platform's own bindings (`host/`), so a
//! record is one type everywhere.

pub mod authheader;
pub mod condition;
pub mod http;
pub mod monitor;
pub mod step;

/// The bindings of one world of `wit/extensions.wit`, its imports taken from `host/`.
macro_rules! world {
    ($world:literal) => {
        wasmtime::component::bindgen!({
            path: "../wit",
            world: $world,
            imports: { default: async },
            exports: { default: async },
            with: {
                "herald:platform/types": crate::runtime::host::bindings::herald::platform::types,
                "herald:platform/recipients-read": crate::runtime::host::bindings::herald::platform::recipients_read,
                "herald:platform/recipients-write": crate::runtime::host::bindings::herald::platform::recipients_write,
                "herald:platform/tables": crate::runtime::host::bindings::herald::platform::tables,
                "herald:platform/context": crate::runtime::host::bindings::herald::platform::context,
                "herald:platform/global-data": crate::runtime::host::bindings::herald::platform::global_data,
                "herald:platform/log": crate::runtime::host::bindings::herald::platform::log,
            },
        });
    };
}
pub(crate) use world;

//! Upload-time checks of an extension: it is a component, its configuration section is valid, it
//! compiles, it exports what its type requires and imports only what Herald provides. Each
//! failure is a message the customer can act on. Compiling is the expensive part; callers run this
//! on the blocking pool.

use wasmtime::component::{Component, Linker};
use wasmtime::Engine;

use super::config::{self, ExtensionConfig};
use super::state::CallState;

/// The interface open extensions may not import.
const READ_INTERFACE: &str = "herald:platform/recipients-read";

/// The extension types and what each must export.
pub fn required_export(kind: &str) -> Option<&'static str> {
    match kind {
        "http" => Some("wasi:http/incoming-handler@0.2"),
        "step" => Some("herald:platform/step@0.1"),
        "condition" => Some("herald:platform/condition@0.1"),
        "monitor" => Some("herald:platform/monitor@0.1"),
        "authheader" => Some("herald:platform/authheader@0.1"),
        _ => None,
    }
}

/// A component that passed every check, compiled.
pub struct Validated {
    pub config: ExtensionConfig,
    pub component: Component,
}

pub fn validate(engine: &Engine, linker: &Linker<CallState>, bytes: &[u8], kind: &str) -> Result<Validated, String> {
    if !wasmparser::Parser::is_component(bytes) {
        return Err(if wasmparser::Parser::is_core_wasm(bytes) {
            "the file is a core WebAssembly module, not a component: build for wasm32-wasip2, or wrap it with `wasm-tools component new`".into()
        } else {
            "the file is not a WebAssembly component".into()
        });
    }
    let config = config::read(bytes)?;
    let Some(export) = required_export(kind) else {
        return Err(format!("unknown extension type '{kind}'"));
    };
    let component = Component::new(engine, bytes).map_err(|e| format!("the component does not compile: {e}"))?;
    let ty = component.component_type();
    if !ty.exports(engine).any(|(name, _)| name.starts_with(export)) {
        return Err(format!("an extension of type '{kind}' must export {export}.x"));
    }
    if config.open && ty.imports(engine).any(|(name, _)| name.starts_with(READ_INTERFACE)) {
        return Err(format!(
            "an open extension may not import {READ_INTERFACE}: an open endpoint must not be usable to extract recipient data"
        ));
    }
    let missing: Vec<String> = ty
        .imports(engine)
        .map(|(name, _)| name.to_string())
        .filter(|name| !provided(name))
        .collect();
    if !missing.is_empty() {
        return Err(format!("the component imports what Herald does not provide: {}", missing.join(", ")));
    }
    linker.instantiate_pre(&component).map_err(|e| format!("the component's imports do not match what Herald provides: {e}"))?;
    Ok(Validated { config, component })
}

/// The interfaces an http extension may import: WASI 0.2 (the CLI interfaces a std guest pulls
/// in, with an empty environment and no files), wasi:http, and Herald's own.
fn provided(import: &str) -> bool {
    ["wasi:cli/", "wasi:io/", "wasi:clocks/", "wasi:random/", "wasi:http/", "wasi:filesystem/", "wasi:sockets/", "herald:platform/"]
        .iter()
        .any(|prefix| import.starts_with(prefix))
}

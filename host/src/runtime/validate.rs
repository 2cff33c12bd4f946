//! Upload-time checks of an extension: it is a component, its configuration section is valid, it
//! compiles, it exports what its kind requires and imports only what its kind's world offers
//! (`kind.rs`). Each failure is a message the customer can act on. Compiling is the expensive
//! part; callers run this on the blocking pool.

use wasmtime::component::{Component, Linker};
use wasmtime::Engine;

use super::config::{self, ExtensionConfig};
use super::kind::ExtensionKind;
use super::state::CallState;

/// A component that passed every check, compiled.
pub struct Validated {
    pub config: ExtensionConfig,
    pub component: Component,
}

/// `compiled`: the component already compiled from these bytes (its artifact), if any.
pub fn validate(
    engine: &Engine,
    linker: &Linker<CallState>,
    bytes: &[u8],
    kind: ExtensionKind,
    compiled: Option<Component>,
) -> Result<Validated, String> {
    if !wasmparser::Parser::is_component(bytes) {
        return Err(if wasmparser::Parser::is_core_wasm(bytes) {
            "the file is a core WebAssembly module, not a component: build for wasm32-wasip2, or wrap it with `wasm-tools component new`"
                .into()
        } else {
            "the file is not a WebAssembly component".into()
        });
    }
    let config = config::read(bytes)?;
    let component = match compiled {
        Some(component) => component,
        None => Component::new(engine, bytes).map_err(|e| format!("the component does not compile: {}", compile_failure(&e)))?,
    };
    let ty = component.component_type();
    let export = kind.required_export();
    if !ty.exports(engine).any(|(name, _)| name.starts_with(export)) {
        return Err(format!("an extension of type '{kind}' must export {export}.x"));
    }
    let refused: Vec<String> = ty.imports(engine).filter_map(|(name, _)| kind.refuses_import(name, config.open)).collect();
    if !refused.is_empty() {
        return Err(refused.join("; "));
    }
    let misplaced = config.problems_for(kind);
    if !misplaced.is_empty() {
        return Err(misplaced.join("; "));
    }
    linker.instantiate_pre(&component).map_err(|e| import_mismatch(&e))?;
    Ok(Validated { config, component })
}

/// Why a component did not compile, in WebAssembly's terms: the innermost cause (the validator's
/// message), with wasmtime's internal names of functions (`wasm[0]::function[254]`) turned into
/// the function's index.
fn compile_failure(e: &wasmtime::Error) -> String {
    let mut text = e.root_cause().to_string();
    while let Some(start) = text.find("wasm[") {
        let Some(mid) = text[start..].find("]::function[").map(|i| start + i) else { break };
        let index_start = mid + "]::function[".len();
        let Some(end) = text[index_start..].find(']').map(|i| index_start + i) else { break };
        let index = text[index_start..end].to_string();
        text.replace_range(start..=end, &format!("function {index}"));
    }
    text
}

/// An import that names an interface Herald provides but not in the form the component expects
/// (a function Herald does not have, another signature, another version). wasmtime's message
/// speaks of its linker; the author is told which import and what to check.
fn import_mismatch(e: &wasmtime::Error) -> String {
    let names: Vec<String> = e.chain().filter_map(|cause| backticked(&cause.to_string())).collect();
    let what = match names.as_slice() {
        [] => "an interface".to_string(),
        [import] => import.clone(),
        [import, inner @ ..] => format!("{} of {import}", inner.join(" of ")),
    };
    format!(
        "the component imports {what}, which Herald does not provide in that form: build it against the WIT in Herald's wit/ folder (herald:platform@0.1.0, WASI 0.2)"
    )
}

/// The first name written between backticks in `text`.
fn backticked(text: &str) -> Option<String> {
    let start = text.find('`')? + 1;
    let len = text[start..].find('`')?;
    Some(text[start..start + len].to_string())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn messages_name_functions_and_imports_not_internals() {
        let e = wasmtime::Error::msg("type mismatch in wasm[0]::function[254] at offset 12");
        assert_eq!(compile_failure(&e), "type mismatch in function 254 at offset 12");
        let e = wasmtime::Error::msg("instance export `nonexistent` has the wrong type")
            .context("component imports instance `herald:platform/recipients-write@0.1.0`, but a matching implementation was not found in the linker");
        let m = import_mismatch(&e);
        assert!(m.contains("nonexistent of herald:platform/recipients-write@0.1.0"), "{m}");
        assert!(!m.contains("linker"), "{m}");
    }
}

//! Writing the `herald:config` section into a component that was built without one: the
//! componentize tools of JavaScript and Python cannot add a custom section, so `herald extension
//! config` does it, with the one writer of custom sections (`custom_section.rs`): an existing
//! top-level `herald:config` section is replaced, unless the core module carries its own.

use super::config::{self, ExtensionConfig, SECTION};
use super::custom_section::{append_custom_section, without_custom_section};

/// `bytes` with its configuration section set to `config`; the error is for the author.
pub fn write(bytes: &[u8], config: &ExtensionConfig) -> Result<Vec<u8>, String> {
    if !wasmparser::Parser::is_component(bytes) && !wasmparser::Parser::is_core_wasm(bytes) {
        return Err("the file is not a WebAssembly component".into());
    }
    let mut out = without_custom_section(bytes, SECTION)?;
    if has_nested_section(&out) {
        return Err(format!(
            "the component's core module carries a '{SECTION}' section of its own (Rust's config! or #[link_section]): set the configuration there"
        ));
    }
    append_custom_section(&mut out, SECTION, config.to_json().to_string().as_bytes());
    debug_assert_eq!(config::read(&out).as_ref(), Ok(config));
    Ok(out)
}

/// Whether a `herald:config` section is left anywhere (inside a core module).
fn has_nested_section(bytes: &[u8]) -> bool {
    wasmparser::Parser::new(0).parse_all(bytes).any(|p| matches!(p, Ok(wasmparser::Payload::CustomSection(s)) if s.name() == SECTION))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn component() -> Vec<u8> {
        wat::parse_str("(component (core module $m) (core instance (instantiate $m)))").unwrap()
    }

    #[test]
    fn a_section_is_added_then_replaced_and_the_component_still_reads() {
        let first = ExtensionConfig { open: true, allowed_hosts: vec!["api.example.com".into()], ..Default::default() };
        let once = write(&component(), &first).unwrap();
        assert_eq!(config::read(&once).unwrap(), first);
        assert!(wasmparser::Validator::new().validate_all(&once).is_ok(), "still a valid component");
        let second = ExtensionConfig { timeout_ms: Some(5000), ..Default::default() };
        let twice = write(&once, &second).unwrap();
        assert_eq!(config::read(&twice).unwrap(), second, "replaced, not added beside");
        assert!(write(b"not wasm at all", &first).unwrap_err().contains("not a WebAssembly component"));
    }

    #[test]
    fn a_section_inside_the_core_module_is_not_overridden() {
        let nested = wat::parse_str(r#"(component (core module (@custom "herald:config" "{\"open\": true}")))"#).unwrap();
        assert!(write(&nested, &ExtensionConfig::default()).unwrap_err().contains("core module"));
    }
}

//! Writing the `herald:config` section into a component that was built without one: the
//! componentize tools of JavaScript and Python cannot add a custom section, so `herald extension
//! config` does it. The component's top-level sections are copied as they are, an existing
//! top-level `herald:config` section is replaced, and the new one is appended (a custom section
//! may stand anywhere).

use super::config::{self, ExtensionConfig, SECTION};

/// `bytes` with its configuration section set to `config`; the error is for the author.
pub fn write(bytes: &[u8], config: &ExtensionConfig) -> Result<Vec<u8>, String> {
    if !wasmparser::Parser::is_component(bytes) && !wasmparser::Parser::is_core_wasm(bytes) {
        return Err("the file is not a WebAssembly component".into());
    }
    let mut out = bytes[..8].to_vec();
    let mut at = 8;
    while at < bytes.len() {
        let id = bytes[at];
        let (size, size_len) = leb128(&bytes[at + 1..]).ok_or("the file is damaged: a section's size does not read")?;
        let end = at + 1 + size_len + size as usize;
        if end > bytes.len() {
            return Err("the file is damaged: a section runs past its end".into());
        }
        let payload = &bytes[at + 1 + size_len..end];
        if !(id == 0 && custom_name(payload) == Some(SECTION)) {
            out.extend_from_slice(&bytes[at..end]);
        }
        at = end;
    }
    if has_nested_section(&out) {
        return Err(format!(
            "the component's core module carries a '{SECTION}' section of its own (Rust's config! or #[link_section]): set the configuration there"
        ));
    }
    let json = config.to_json().to_string();
    let mut payload = Vec::new();
    push_leb128(&mut payload, SECTION.len() as u32);
    payload.extend_from_slice(SECTION.as_bytes());
    payload.extend_from_slice(json.as_bytes());
    out.push(0);
    push_leb128(&mut out, payload.len() as u32);
    out.extend_from_slice(&payload);
    debug_assert_eq!(config::read(&out).as_ref(), Ok(config));
    Ok(out)
}

/// Whether a `herald:config` section is left anywhere (inside a core module).
fn has_nested_section(bytes: &[u8]) -> bool {
    wasmparser::Parser::new(0).parse_all(bytes).any(|p| matches!(p, Ok(wasmparser::Payload::CustomSection(s)) if s.name() == SECTION))
}

fn custom_name(payload: &[u8]) -> Option<&str> {
    let (len, len_len) = leb128(payload)?;
    payload.get(len_len..len_len + len as usize).and_then(|name| std::str::from_utf8(name).ok())
}

fn leb128(bytes: &[u8]) -> Option<(u32, usize)> {
    let mut value: u32 = 0;
    for (i, byte) in bytes.iter().take(5).enumerate() {
        value |= u32::from(byte & 0x7f) << (7 * i);
        if byte & 0x80 == 0 {
            return Some((value, i + 1));
        }
    }
    None
}

fn push_leb128(out: &mut Vec<u8>, mut value: u32) {
    loop {
        let byte = (value & 0x7f) as u8;
        value >>= 7;
        if value == 0 {
            out.push(byte);
            return;
        }
        out.push(byte | 0x80);
    }
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

    #[test]
    fn leb128_round_trips() {
        for n in [0u32, 1, 127, 128, 300, 16_384, u32::MAX] {
            let mut out = Vec::new();
            push_leb128(&mut out, n);
            assert_eq!(leb128(&out), Some((n, out.len())));
        }
    }
}

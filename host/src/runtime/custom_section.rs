//! A named custom section set at the top level of a WebAssembly binary, with the standard library
//! alone: an existing top-level section of that name is taken out, and the new one appended (a
//! custom section may stand anywhere). The one writer of `herald:config` sections: `herald
//! extension config` (`config_section.rs`), the tests' helper `with_config`, the fuzzing of
//! configurations, and the tests' build script, which compiles this file by its path (a build
//! script cannot depend on the crate it helps test), hence no `use` of the crate here.

/// `bytes` (a component or a core module) without its top-level custom section `name`.
pub fn without_custom_section(bytes: &[u8], name: &str) -> Result<Vec<u8>, String> {
    if bytes.len() < 8 || &bytes[..4] != b"\0asm" {
        return Err("the file is not a WebAssembly component".into());
    }
    let mut out = bytes[..8].to_vec();
    let mut at = 8;
    while at < bytes.len() {
        let id = bytes[at];
        let (size, size_len) = read_leb128(&bytes[at + 1..]).ok_or("the file is damaged: a section's size does not read")?;
        let end = at + 1 + size_len + size as usize;
        if end > bytes.len() {
            return Err("the file is damaged: a section runs past its end".into());
        }
        let payload = &bytes[at + 1 + size_len..end];
        if !(id == 0 && custom_name(payload) == Some(name)) {
            out.extend_from_slice(&bytes[at..end]);
        }
        at = end;
    }
    Ok(out)
}

/// Appends custom section `name` holding `content` to `out`.
pub fn append_custom_section(out: &mut Vec<u8>, name: &str, content: &[u8]) {
    let mut payload = Vec::with_capacity(name.len() + content.len() + 5);
    push_leb128(&mut payload, name.len() as u32);
    payload.extend_from_slice(name.as_bytes());
    payload.extend_from_slice(content);
    out.push(0);
    push_leb128(out, payload.len() as u32);
    out.extend_from_slice(&payload);
}

/// `bytes` with its top-level custom section `name` set to `content`.
pub fn set_custom_section(bytes: &[u8], name: &str, content: &[u8]) -> Result<Vec<u8>, String> {
    let mut out = without_custom_section(bytes, name)?;
    append_custom_section(&mut out, name, content);
    Ok(out)
}

/// The name of a custom section, from its payload.
pub fn custom_name(payload: &[u8]) -> Option<&str> {
    let (len, len_len) = read_leb128(payload)?;
    payload.get(len_len..len_len + len as usize).and_then(|name| std::str::from_utf8(name).ok())
}

fn read_leb128(bytes: &[u8]) -> Option<(u32, usize)> {
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

    #[test]
    fn leb128_round_trips() {
        for n in [0u32, 1, 127, 128, 300, 16_384, u32::MAX] {
            let mut out = Vec::new();
            push_leb128(&mut out, n);
            assert_eq!(read_leb128(&out), Some((n, out.len())));
        }
    }

    #[test]
    fn a_section_is_set_once_whatever_was_there() {
        let header = b"\0asm\x0d\0\x01\0";
        let once = set_custom_section(header, "herald:config", b"{}").unwrap();
        let twice = set_custom_section(&once, "herald:config", br#"{"open": true}"#).unwrap();
        let mut expected = header.to_vec();
        append_custom_section(&mut expected, "herald:config", br#"{"open": true}"#);
        assert_eq!(twice, expected, "replaced, not added beside");
        assert!(set_custom_section(b"nope", "x", b"").is_err());
    }
}

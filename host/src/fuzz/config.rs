//! The `herald:config` section: any bytes as a component, and any JSON as the section.

use rand::Rng;

use super::{cases, mutate, rng, text};
use crate::runtime::config::{self, MAX_TIMEOUT_MS};

const WORDS: &[&str] = &[
    "{",
    "}",
    "[",
    "]",
    "\"open\"",
    "\"async\"",
    "\"allowed_hosts\"",
    "\"timeout_ms\"",
    ":",
    ",",
    "true",
    "null",
    "0",
    "300000",
    "1e3",
    "\"*.x.com\"",
    "\"a\"",
];

/// A component with `json` as its only custom section (a component header and the section).
fn component_with(json: &[u8]) -> Vec<u8> {
    crate::runtime::custom_section::set_custom_section(b"\0asm\x0d\0\x01\0", crate::runtime::config::SECTION, json).expect("a header")
}

#[test]
fn configuration_sections_never_panic_and_keep_their_ranges() {
    let mut rng = rng("config");
    let valid = r#"{"open": true, "async": false, "allowed_hosts": ["api.example.com", "*.cdn.net"], "timeout_ms": 5000}"#;
    for _ in 0..cases() {
        let json = if rng.gen_bool(0.5) { text(&mut rng, WORDS, 12) } else { mutate(&mut rng, valid) };
        if let Ok(c) = config::read(&component_with(json.as_bytes())) {
            assert!(c.timeout_ms.is_none_or(|ms| (1..=MAX_TIMEOUT_MS).contains(&ms)), "{json}: {c:?}");
            assert!(c.allowed_hosts.iter().all(|h| !h.is_empty() && !h.contains(['/', ':', ' '])), "{json}: {c:?}");
        }
        // Any bytes at all.
        let bytes: Vec<u8> = (0..rng.gen_range(0..64)).map(|_| rng.gen()).collect();
        let _ = config::read(&bytes);
    }
}

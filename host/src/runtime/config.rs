//! An extension's configuration travels inside the component, so the file alone describes it and
//! any language can set it: a custom section named `herald:config` holding JSON, at the top level
//! or inside the component's core module (where `#[link_section]` in Rust puts it):
//!
//! ```json
//! {"open": false, "async": false, "allowed_hosts": ["api.example.com"], "timeout_ms": 30000}
//! ```
//!
//! Every member is optional; a component without the section gets the safe defaults: secure
//! (`open` false), synchronous, no outbound network, the operator's default timeout.

use serde_json::Value as Json;
use wasmparser::{Parser, Payload};

/// The name of the custom section.
pub const SECTION: &str = "herald:config";

/// The longest deadline an extension may ask for (the operator's maximum may be lower).
pub const MAX_TIMEOUT_MS: u64 = 300_000;

#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ExtensionConfig {
    /// Called through the open endpoint (no credentials) instead of the secure one.
    pub open: bool,
    /// Executed asynchronously (answered 202 with a queue id).
    pub asynchronous: bool,
    /// Hosts the extension may call through `wasi:http/outgoing-handler`: exact names, or
    /// `*.example.com` for the subdomains of example.com.
    pub allowed_hosts: Vec<String>,
    /// The extension's own deadline (1 to `MAX_TIMEOUT_MS`), within the operator's maximum.
    pub timeout_ms: Option<u64>,
}

impl ExtensionConfig {
    pub fn allows_host(&self, host: &str) -> bool {
        let host = host.to_ascii_lowercase();
        self.allowed_hosts.iter().any(|allowed| {
            let allowed = allowed.to_ascii_lowercase();
            match allowed.strip_prefix("*.") {
                Some(domain) => host.len() > domain.len() + 1 && host.ends_with(&format!(".{domain}")),
                None => host == allowed,
            }
        })
    }
}

/// Reads the configuration of a component; the error is for the customer.
pub fn read(bytes: &[u8]) -> Result<ExtensionConfig, String> {
    let mut found: Option<&[u8]> = None;
    for payload in Parser::new(0).parse_all(bytes) {
        let payload = payload.map_err(|e| format!("the file is not a valid WebAssembly component: {e}"))?;
        if let Payload::CustomSection(section) = payload {
            if section.name() == SECTION {
                if found.is_some() {
                    return Err(format!("the component has more than one '{SECTION}' section"));
                }
                found = Some(section.data());
            }
        }
    }
    match found {
        None => Ok(ExtensionConfig::default()),
        Some(data) => {
            let json: Json = serde_json::from_slice(data).map_err(|e| format!("the '{SECTION}' section is not valid JSON: {e}"))?;
            from_json(&json).map_err(|e| format!("the '{SECTION}' section is not valid: {e}"))
        }
    }
}

/// Reads the section's JSON, every member checked, with messages in the author's terms.
fn from_json(json: &Json) -> Result<ExtensionConfig, String> {
    let Json::Object(members) = json else {
        return Err(r#"it must be a JSON object, such as {"open": true, "timeout_ms": 5000}"#.into());
    };
    let mut config = ExtensionConfig::default();
    for (name, value) in members {
        let flag = || value.as_bool().ok_or_else(|| format!("'{name}' must be true or false"));
        match name.as_str() {
            "open" => config.open = flag()?,
            "async" => config.asynchronous = flag()?,
            "allowed_hosts" => config.allowed_hosts = hosts(value)?,
            "timeout_ms" => {
                let ms = value.as_u64().filter(|ms| (1..=MAX_TIMEOUT_MS).contains(ms));
                config.timeout_ms = Some(ms.ok_or_else(|| {
                    format!("'timeout_ms' must be a whole number of milliseconds from 1 to {MAX_TIMEOUT_MS}")
                })?);
            }
            other => {
                return Err(format!("unknown member '{other}' (the members are open, async, allowed_hosts, timeout_ms)"))
            }
        }
    }
    Ok(config)
}

/// `allowed_hosts`: host names, or `*.` and a domain; no scheme, port or path.
fn hosts(value: &Json) -> Result<Vec<String>, String> {
    let wrong = || r#"'allowed_hosts' must be a list of host names, such as ["api.example.com", "*.example.net"]"#.to_string();
    let list = value.as_array().ok_or_else(wrong)?;
    list.iter()
        .map(|h| {
            let host = h.as_str().ok_or_else(wrong)?;
            let name = host.strip_prefix("*.").unwrap_or(host);
            let valid = !name.is_empty()
                && name.len() <= 253
                && name.split('.').all(|label| !label.is_empty() && label.chars().all(|c| c.is_ascii_alphanumeric() || c == '-'));
            if valid {
                Ok(host.to_string())
            } else {
                Err(format!("'{host}' in 'allowed_hosts' is not a host name (write it without scheme, port or path)"))
            }
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn host_patterns() {
        let c = ExtensionConfig { allowed_hosts: vec!["api.example.com".into(), "*.cdn.net".into()], ..Default::default() };
        assert!(c.allows_host("api.example.com"));
        assert!(c.allows_host("API.Example.com"));
        assert!(!c.allows_host("evil.example.com"));
        assert!(c.allows_host("eu.cdn.net"));
        assert!(!c.allows_host("cdn.net"));
        assert!(!c.allows_host("evilcdn.net"));
        assert!(!ExtensionConfig::default().allows_host("api.example.com"), "no network by default");
    }

    #[test]
    fn garbage_is_refused() {
        assert!(read(b"not wasm").is_err());
    }

    #[test]
    fn members_are_checked_with_messages_in_the_authors_terms() {
        let ok = from_json(&serde_json::json!({"open": true, "async": false, "allowed_hosts": ["a.example.com", "*.b.net"], "timeout_ms": 300000}));
        assert_eq!(ok.unwrap().timeout_ms, Some(300_000));
        for (bad, says) in [
            (serde_json::json!(null), "JSON object"),
            (serde_json::json!([1]), "JSON object"),
            (serde_json::json!({"timeout_ms": 0}), "from 1 to 300000"),
            (serde_json::json!({"timeout_ms": 300001}), "from 1 to 300000"),
            (serde_json::json!({"timeout_ms": 2.5}), "whole number"),
            (serde_json::json!({"open": "yes"}), "true or false"),
            (serde_json::json!({"allowed_hosts": "a.com"}), "list of host names"),
            (serde_json::json!({"allowed_hosts": ["https://a.com/x"]}), "not a host name"),
            (serde_json::json!({"opne": true}), "unknown member 'opne'"),
        ] {
            let e = from_json(&bad).unwrap_err();
            assert!(e.contains(says), "{bad}: {e}");
            assert!(!e.contains("struct") && !e.contains("u64"), "no Rust types: {e}");
        }
    }
}

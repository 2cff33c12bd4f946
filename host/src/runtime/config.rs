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

use serde::Deserialize;
use wasmparser::{Parser, Payload};

/// The name of the custom section.
pub const SECTION: &str = "herald:config";

#[derive(Debug, Clone, Default, PartialEq, Eq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ExtensionConfig {
    /// Called through the open endpoint (no credentials) instead of the secure one.
    #[serde(default)]
    pub open: bool,
    /// Executed asynchronously (answered 202 with a queue id).
    #[serde(default, rename = "async")]
    pub asynchronous: bool,
    /// Hosts the extension may call through `wasi:http/outgoing-handler`: exact names, or
    /// `*.example.com` for the subdomains of example.com.
    #[serde(default)]
    pub allowed_hosts: Vec<String>,
    /// The extension's own deadline, within the operator's maximum.
    #[serde(default)]
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
        Some(data) => serde_json::from_slice(data).map_err(|e| format!("the '{SECTION}' section is not valid: {e}")),
    }
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
}

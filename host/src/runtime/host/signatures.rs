//! `herald:platform/signatures`: an http extension checks that a call comes from the system that
//! says it sent it, with an HMAC-SHA256 keyed by one of the instance's secrets. Herald computes
//! it: the extension names the secret and never reads it, so the rule that only authheader
//! extensions read secrets still holds. A call may check `MAX_CHECKS` signatures, so that the
//! answers cannot serve to guess a weak secret one candidate at a time.

mod bindings {
    wasmtime::component::bindgen!({
        path: "../wit",
        world: "herald:platform/signing",
        imports: { default: async | trappable | tracing },
        trappable_error_type: { "herald:platform/types.error" => crate::runtime::host::HostError },
        with: {
            "herald:platform/types": crate::runtime::host::bindings::herald::platform::types,
        },
    });
}

pub(crate) use bindings::herald::platform::signatures as signatures_interface;

/// `signatures` into `linker` (the upload check lets only http extensions import it).
pub(super) fn add_to_linker(linker: &mut wasmtime::component::Linker<CallState>) -> wasmtime::Result<()> {
    signatures_interface::add_to_linker::<CallState, Signing>(linker, |state| {
        state.host_calls += 1;
        SigningView {
            secrets: SecretsView { tenant: &state.tenant, ring: state.signing.as_ref(), revealed: &mut state.revealed },
            checks: &mut state.signature_checks,
            clock: &state.clock,
        }
    })
}

use base64::engine::general_purpose::STANDARD as BASE64;
use base64::Engine as _;
use hmac::{Hmac, Mac};
use sha2::Sha256;

use crate::runtime::host::bindings::herald::platform::types::Error as GuestError;
use std::sync::Arc;

use wasmtime::component::HasData;

use super::secrets::SecretsView;
use crate::clock::Clock;
use crate::runtime::host::HostError;
use crate::runtime::state::CallState;

/// The signature checks one call may make.
pub const MAX_CHECKS: u32 = 8;

/// How far a Standard Webhooks timestamp may be from now when the extension gives 0.
pub const DEFAULT_TOLERANCE_SECONDS: u32 = 300;

type HmacSha256 = Hmac<Sha256>;

/// The key of a Standard Webhooks secret: the base64 after `whsec_`, or the value's own bytes.
fn standard_webhook_key(secret: &str) -> Result<Vec<u8>, String> {
    match secret.strip_prefix("whsec_") {
        Some(encoded) => BASE64.decode(encoded).map_err(|_| "the secret starts with whsec_ but the rest is not base64".to_string()),
        None => Ok(secret.as_bytes().to_vec()),
    }
}

fn mac(key: &[u8], parts: &[&[u8]]) -> HmacSha256 {
    let mut mac = HmacSha256::new_from_slice(key).expect("HMAC takes a key of any length");
    for part in parts {
        mac.update(part);
    }
    mac
}

/// Whether `header` (space-separated `v1,<base64>`) holds the signature of `{id}.{timestamp}.{body}`
/// keyed by `key`, and `timestamp` is within `tolerance` seconds of `now` (Unix seconds).
pub fn standard_webhook_valid(key: &[u8], id: &str, timestamp: &str, header: &str, body: &[u8], now: i64, tolerance: u32) -> bool {
    let Ok(sent_at) = timestamp.trim().parse::<i64>() else { return false };
    let tolerance = if tolerance == 0 { DEFAULT_TOLERANCE_SECONDS } else { tolerance };
    if (now - sent_at).unsigned_abs() > u64::from(tolerance) {
        return false;
    }
    let expected = mac(key, &[id.as_bytes(), b".", timestamp.as_bytes(), b".", body]);
    header.split_whitespace().filter_map(|one| one.strip_prefix("v1,")).filter_map(|encoded| BASE64.decode(encoded).ok()).any(|sent| {
        // verify_slice compares in constant time; a clone per candidate (a header has one or two).
        expected.clone().verify_slice(&sent).is_ok()
    })
}

/// Whether `signature` (hex or base64, `sha256=` skipped) is the HMAC-SHA256 of `message`.
pub fn hmac_sha256_valid(key: &[u8], message: &[u8], signature: &str) -> bool {
    let signature = signature.trim();
    let signature = signature.strip_prefix("sha256=").unwrap_or(signature);
    let sent = decode_hex(signature).or_else(|| BASE64.decode(signature).ok());
    sent.is_some_and(|sent| mac(key, &[message]).verify_slice(&sent).is_ok())
}

/// 64 hex digits (either case) as 32 bytes; anything else is not hex.
fn decode_hex(text: &str) -> Option<Vec<u8>> {
    if text.len() != 64 {
        return None;
    }
    let digit = |c: u8| (c as char).to_digit(16).map(|d| d as u8);
    text.as_bytes().chunks(2).map(|pair| Some(digit(pair[0])? << 4 | digit(pair[1])?)).collect()
}

/// What the signature checks see of a call: the secrets they may use (through Herald, never
/// handed to the guest), how many checks it made, and the clock a timestamp is checked against.
pub(super) struct SigningView<'a> {
    secrets: SecretsView<'a>,
    checks: &'a mut u32,
    clock: &'a Arc<dyn Clock>,
}

struct Signing;

impl HasData for Signing {
    type Data<'a> = SigningView<'a>;
}

impl SigningView<'_> {
    /// The value of secret `name` for a signature check, counted against `MAX_CHECKS`: never
    /// given to the guest (and noted as revealed, so that an echo of it is removed from the log).
    async fn signing_key(&mut self, name: &str) -> Result<String, HostError> {
        if self.secrets.ring.is_none() {
            return Err(GuestError::Forbidden.into());
        }
        if *self.checks >= MAX_CHECKS {
            return Err(GuestError::LimitExceeded.into());
        }
        *self.checks += 1;
        self.secrets.open(name).await?.ok_or(GuestError::NotFound.into())
    }
}

impl signatures_interface::Host for SigningView<'_> {
    async fn verify_standard_webhook(
        &mut self,
        secret: String,
        webhook_id: String,
        webhook_timestamp: String,
        webhook_signature: String,
        body: Vec<u8>,
        tolerance_seconds: u32,
    ) -> Result<bool, HostError> {
        let value = self.signing_key(&secret).await?;
        let key = standard_webhook_key(&value).map_err(GuestError::Invalid)?;
        let now = self.clock.now_millis().div_euclid(1000);
        Ok(standard_webhook_valid(&key, &webhook_id, &webhook_timestamp, &webhook_signature, &body, now, tolerance_seconds))
    }

    async fn verify_hmac_sha256(&mut self, secret: String, message: Vec<u8>, signature: String) -> Result<bool, HostError> {
        let value = self.signing_key(&secret).await?;
        Ok(hmac_sha256_valid(value.as_bytes(), &message, &signature))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The example of the Standard Webhooks specification's reference libraries.
    const SECRET: &str = "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw";
    const ID: &str = "msg_p5jXN8AQM9LWM0D4loKWxJek";
    const TIMESTAMP: &str = "1614265330";
    const BODY: &[u8] = br#"{"test": 2432232314}"#;
    const SIGNATURE: &str = "v1,g0hM9SsE+OTPJTGt/tmIKtSyZlE3uFJELVlNIOLJ1OE=";

    #[test]
    fn the_standard_webhooks_example_verifies_and_any_change_does_not() {
        let key = standard_webhook_key(SECRET).unwrap();
        let now = 1614265330;
        assert!(standard_webhook_valid(&key, ID, TIMESTAMP, SIGNATURE, BODY, now, 0));
        // One of several signatures (a sender rotating its secret sends two).
        assert!(standard_webhook_valid(&key, ID, TIMESTAMP, &format!("v1,bm90IGl0 {SIGNATURE}"), BODY, now, 0));
        assert!(!standard_webhook_valid(&key, ID, TIMESTAMP, SIGNATURE, br#"{"test": 2432232315}"#, now, 0), "another body");
        assert!(!standard_webhook_valid(&key, "msg_other", TIMESTAMP, SIGNATURE, BODY, now, 0), "another id");
        assert!(!standard_webhook_valid(&key, ID, TIMESTAMP, "v2,g0hM9SsE+OTPJTGt/tmIKtSyZlE3uFJELVlNIOLJ1OE=", BODY, now, 0));
        assert!(!standard_webhook_valid(b"another key", ID, TIMESTAMP, SIGNATURE, BODY, now, 0));
        // Outside the tolerance (300 s by default), either way; within a wider one.
        assert!(!standard_webhook_valid(&key, ID, TIMESTAMP, SIGNATURE, BODY, now + 301, 0));
        assert!(!standard_webhook_valid(&key, ID, TIMESTAMP, SIGNATURE, BODY, now - 301, 0));
        assert!(standard_webhook_valid(&key, ID, TIMESTAMP, SIGNATURE, BODY, now + 3000, 3600));
        assert!(!standard_webhook_valid(&key, ID, "yesterday", SIGNATURE, BODY, now, 0));
        assert!(standard_webhook_key("whsec_***").is_err());
        assert_eq!(standard_webhook_key("plain").unwrap(), b"plain");
    }

    #[test]
    fn a_bare_hmac_is_read_in_hex_or_base64() {
        // RFC 4231, test case 2: HMAC-SHA256 of "what do ya want for nothing?" keyed by "Jefe".
        let hex = "5bdcc146bf60754e6a042426089575c75a003f089d2739839dec58b964ec3843";
        assert!(hmac_sha256_valid(b"Jefe", b"what do ya want for nothing?", hex));
        assert!(hmac_sha256_valid(b"Jefe", b"what do ya want for nothing?", &hex.to_uppercase()));
        assert!(hmac_sha256_valid(b"Jefe", b"what do ya want for nothing?", &format!("sha256={hex}")));
        let base64 = BASE64.encode(decode_hex(hex).unwrap());
        assert!(hmac_sha256_valid(b"Jefe", b"what do ya want for nothing?", &base64));
        assert!(!hmac_sha256_valid(b"Jefe", b"what do ya want for nothing!", hex));
        assert!(!hmac_sha256_valid(b"jefe", b"what do ya want for nothing?", hex));
        assert!(!hmac_sha256_valid(b"Jefe", b"what do ya want for nothing?", "not a signature"));
    }
}

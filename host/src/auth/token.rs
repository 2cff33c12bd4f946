//! Access tokens: `v1.<payload>.<mac>`, where the payload names the credential, its instance, its
//! scope and its expiry, and the mac is HMAC-SHA256 under a key kept in the control plane. Any
//! node that shares the control plane verifies a token without a lookup of the token itself, and
//! tokens survive restarts.

use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use base64::Engine;
use hmac::{Hmac, Mac};
use serde::{Deserialize, Serialize};
use sha2::Sha256;

/// What a token says about its bearer.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Claims {
    /// client id
    pub c: String,
    /// customer id (instance)
    pub i: String,
    /// scope: "public" or "app"
    pub s: String,
    /// expiry, seconds since the Unix epoch
    pub e: i64,
}

pub struct Signer {
    key: Vec<u8>,
}

impl Signer {
    pub fn new(key: Vec<u8>) -> Signer {
        Signer { key }
    }

    fn mac(&self) -> Hmac<Sha256> {
        Hmac::<Sha256>::new_from_slice(&self.key).expect("HMAC takes any key length")
    }

    pub fn sign(&self, claims: &Claims) -> String {
        let payload = URL_SAFE_NO_PAD.encode(serde_json::to_vec(claims).expect("claims serialise"));
        let mut mac = self.mac();
        mac.update(payload.as_bytes());
        format!("v1.{payload}.{}", URL_SAFE_NO_PAD.encode(mac.finalize().into_bytes()))
    }

    /// The claims of a well-signed, unexpired token.
    pub fn verify(&self, token: &str, now_secs: i64) -> Option<Claims> {
        let rest = token.strip_prefix("v1.")?;
        let (payload, tag) = rest.split_once('.')?;
        let tag = URL_SAFE_NO_PAD.decode(tag).ok()?;
        let mut mac = self.mac();
        mac.update(payload.as_bytes());
        mac.verify_slice(&tag).ok()?;
        let claims: Claims = serde_json::from_slice(&URL_SAFE_NO_PAD.decode(payload).ok()?).ok()?;
        (claims.e > now_secs).then_some(claims)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn claims(e: i64) -> Claims {
        Claims { c: "k".into(), i: "demo".into(), s: "public".into(), e }
    }

    #[test]
    fn signed_tokens_verify_until_expiry() {
        let s = Signer::new(b"key".to_vec());
        let t = s.sign(&claims(100));
        assert_eq!(s.verify(&t, 99), Some(claims(100)));
        assert_eq!(s.verify(&t, 100), None);
    }

    #[test]
    fn tampering_and_other_keys_fail() {
        let s = Signer::new(b"key".to_vec());
        let t = s.sign(&claims(100));
        let forged = s.sign(&claims(100)).replace("v1.", "v1.x");
        assert_eq!(s.verify(&forged, 0), None);
        assert_eq!(Signer::new(b"other".to_vec()).verify(&t, 0), None);
        let (head, _) = t.rsplit_once('.').unwrap();
        let other_payload = Signer::new(b"key".to_vec()).sign(&claims(999));
        let (_, tag) = other_payload.rsplit_once('.').unwrap();
        assert_eq!(s.verify(&format!("{head}.{tag}"), 0), None);
        assert_eq!(s.verify("garbage", 0), None);
    }
}

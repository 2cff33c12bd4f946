//! Credential secrets: generated with 256 bits of entropy and stored only as a salted SHA-256.
//! A fast hash is enough for random secrets of that strength (there is nothing to brute-force),
//! and keeps Basic authentication cheap on every call.

use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use base64::Engine;
use rand::RngCore;
use sha2::{Digest, Sha256};

fn random_token(bytes: usize) -> String {
    let mut buf = vec![0u8; bytes];
    rand::thread_rng().fill_bytes(&mut buf);
    URL_SAFE_NO_PAD.encode(buf)
}

/// A new client id and secret. Both carry a fixed prefix (`hk_` the id, `hs_` the secret): a
/// generated value never begins with `-` (which a command line would read as an option), and
/// secret scanners can recognise a leaked Herald secret.
pub fn generate() -> (String, String) {
    (format!("hk_{}", random_token(12)), format!("hs_{}", random_token(32)))
}

/// `sha256$<salt>$<hex digest of salt + secret>`.
pub fn hash(secret: &str) -> String {
    let salt = random_token(12);
    format!("sha256${salt}${}", digest(&salt, secret))
}

fn digest(salt: &str, secret: &str) -> String {
    let mut h = Sha256::new();
    h.update(salt.as_bytes());
    h.update(secret.as_bytes());
    h.finalize().iter().map(|b| format!("{b:02x}")).collect()
}

/// Compares in constant time, so the answer's timing tells nothing about the stored hash.
pub fn verify(secret: &str, stored: &str) -> bool {
    let mut parts = stored.splitn(3, '$');
    let (Some("sha256"), Some(salt), Some(expected)) = (parts.next(), parts.next(), parts.next()) else {
        return false;
    };
    let actual = digest(salt, secret);
    actual.len() == expected.len() && actual.bytes().zip(expected.bytes()).fold(0u8, |acc, (a, b)| acc | (a ^ b)) == 0
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn hashes_verify_and_differ() {
        let (id, secret) = generate();
        assert!(id.starts_with("hk_"));
        assert!(secret.starts_with("hs_"), "{secret}");
        let a = hash(&secret);
        let b = hash(&secret);
        assert_ne!(a, b, "salted");
        assert!(verify(&secret, &a) && verify(&secret, &b));
        assert!(!verify("wrong", &a));
        assert!(!verify(&secret, "garbage"));
        assert!(!a.contains(&secret));
    }
}

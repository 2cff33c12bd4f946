//! The keys that seal the instances' secrets (XChaCha20-Poly1305), kept outside the database so
//! that a copy of the database alone reveals nothing.
//!
//! A key ring is one or more 256-bit keys, written in base64, one a line (`#` starts a comment):
//! the first seals, every one opens. It comes from `HERALD_SECRETS_KEY` (keys separated by commas)
//! or else from a key file (`--secrets-key-file`, by default `secrets.key` in the data directory,
//! created with mode 0600 on the first start). Every node sharing a PostgreSQL database needs the
//! same ring. Each sealed value records the id of its key (the first 8 hex digits of the key's
//! SHA-256), so a value sealed with a key the ring lacks is named as such rather than garbled.
//!
//! Rotation: put a new key on the first line of every node's ring (the old one below it),
//! restart them, run `herald secrets rotate` (every value sealed with another key is sealed again
//! with the first), then remove the old line.

use std::path::Path;

use base64::Engine as _;
use chacha20poly1305::aead::{Aead, KeyInit, Payload};
use chacha20poly1305::{Key, XChaCha20Poly1305, XNonce};
use sha2::{Digest, Sha256};

const NONCE_LEN: usize = 24;

// The stored form of a sealed secret belongs to the store, which keeps it without reading it.
pub use crate::store::tenant::Sealed;

#[derive(Clone)]
pub struct KeyRing {
    /// (id, cipher); the first seals.
    keys: Vec<(String, XChaCha20Poly1305)>,
}

impl std::fmt::Debug for KeyRing {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        // Never the keys themselves.
        f.debug_struct("KeyRing").field("ids", &self.ids()).finish()
    }
}

impl KeyRing {
    /// The ring written in `text` (base64 keys, one a line or separated by commas).
    pub fn parse(text: &str) -> Result<KeyRing, String> {
        let mut keys = Vec::new();
        let entries = text.lines().flat_map(|line| line.split('#').next().unwrap_or_default().split(','));
        for (n, entry) in entries.enumerate() {
            let entry = entry.trim();
            if entry.is_empty() {
                continue;
            }
            let bytes =
                base64::engine::general_purpose::STANDARD.decode(entry).map_err(|_| format!("secrets key {} is not base64", n + 1))?;
            if bytes.len() != 32 {
                return Err(format!("secrets key {} is {} bytes; a key is 32 bytes (256 bits) in base64", n + 1, bytes.len()));
            }
            keys.push((key_id(&bytes), XChaCha20Poly1305::new(Key::from_slice(&bytes))));
        }
        if keys.is_empty() {
            return Err("the secrets key ring holds no key".into());
        }
        Ok(KeyRing { keys })
    }

    /// A new random key, in base64.
    pub fn new_key() -> String {
        base64::engine::general_purpose::STANDARD.encode(rand::random::<[u8; 32]>())
    }

    /// The ring from `HERALD_SECRETS_KEY` when set (`from_env`), or else from `file`, which is
    /// created with one new key (readable by its owner only) when it does not exist.
    pub fn load(from_env: Option<&str>, file: &Path) -> anyhow::Result<KeyRing> {
        if let Some(text) = from_env.filter(|t| !t.trim().is_empty()) {
            return KeyRing::parse(text).map_err(|e| anyhow::anyhow!("HERALD_SECRETS_KEY: {e}"));
        }
        if !file.exists() {
            write_new_key_file(file)?;
            tracing::info!(file = %file.display(), "a new secrets key was created; every node sharing this database needs the same key file");
        }
        let text =
            std::fs::read_to_string(file).map_err(|e| anyhow::anyhow!("cannot read the secrets key file {}: {e}", file.display()))?;
        KeyRing::parse(&text).map_err(|e| anyhow::anyhow!("{}: {e}", file.display()))
    }

    pub fn ids(&self) -> Vec<&str> {
        self.keys.iter().map(|(id, _)| id.as_str()).collect()
    }

    /// The id of the key that seals.
    pub fn current_id(&self) -> &str {
        &self.keys[0].0
    }

    /// Seals `value`, bound to its instance and name (`context`): a sealed value moved to another
    /// name or instance does not open.
    pub fn seal(&self, context: &str, value: &str) -> Sealed {
        let (id, cipher) = &self.keys[0];
        let nonce: [u8; NONCE_LEN] = rand::random();
        let ciphertext = cipher
            .encrypt(XNonce::from_slice(&nonce), Payload { msg: value.as_bytes(), aad: context.as_bytes() })
            .expect("sealing a bounded value cannot fail");
        let mut bytes = nonce.to_vec();
        bytes.extend(ciphertext);
        Sealed { key_id: id.clone(), bytes }
    }

    /// Opens a value sealed by `seal` with the same `context`; the error is for the operator and
    /// never holds the value.
    pub fn open(&self, context: &str, sealed: &Sealed) -> Result<String, String> {
        let Some((_, cipher)) = self.keys.iter().find(|(id, _)| *id == sealed.key_id) else {
            return Err(format!(
                "it was sealed with key {}, which this node's secrets key ring ({}) does not hold",
                sealed.key_id,
                self.ids().join(", ")
            ));
        };
        if sealed.bytes.len() < NONCE_LEN {
            return Err("its stored form is damaged".into());
        }
        let (nonce, ciphertext) = sealed.bytes.split_at(NONCE_LEN);
        let plain = cipher
            .decrypt(XNonce::from_slice(nonce), Payload { msg: ciphertext, aad: context.as_bytes() })
            .map_err(|_| "it does not open with its key (the stored form was changed or moved)".to_string())?;
        String::from_utf8(plain).map_err(|_| "its stored form is damaged".into())
    }
}

fn key_id(key: &[u8]) -> String {
    Sha256::digest(key)[..4].iter().map(|b| format!("{b:02x}")).collect()
}

/// Writes a key file with one new key, created readable by its owner only, and never over an
/// existing file (two processes starting at once keep the first one's key).
fn write_new_key_file(file: &Path) -> anyhow::Result<()> {
    use std::io::Write as _;
    let mut options = std::fs::OpenOptions::new();
    options.write(true).create_new(true);
    #[cfg(unix)]
    std::os::unix::fs::OpenOptionsExt::mode(&mut options, 0o600);
    match options.open(file) {
        Ok(mut f) => {
            writeln!(f, "# Herald's secrets key ring: the first key seals, every key opens. Keep it out of backups of the database.")?;
            writeln!(f, "{}", KeyRing::new_key())?;
            f.sync_all()?;
            Ok(())
        }
        Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => Ok(()),
        Err(e) => Err(anyhow::anyhow!("cannot create the secrets key file {}: {e}", file.display())),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_sealed_value_opens_only_with_its_key_and_context() {
        let ring = KeyRing::parse(&KeyRing::new_key()).unwrap();
        let sealed = ring.seal("demo/CRM_KEY", "s3cr3t-value");
        assert!(!String::from_utf8_lossy(&sealed.bytes).contains("s3cr3t"), "the stored form does not show the value");
        assert_eq!(ring.open("demo/CRM_KEY", &sealed).unwrap(), "s3cr3t-value");
        assert!(ring.open("staging/CRM_KEY", &sealed).is_err(), "moved to another instance, it does not open");
        assert!(ring.open("demo/OTHER", &sealed).is_err(), "moved to another name, it does not open");
        let mut tampered = sealed.clone();
        *tampered.bytes.last_mut().unwrap() ^= 1;
        assert!(ring.open("demo/CRM_KEY", &tampered).is_err());
        let other = KeyRing::parse(&KeyRing::new_key()).unwrap();
        let e = other.open("demo/CRM_KEY", &sealed).unwrap_err();
        assert!(e.contains(&sealed.key_id) && !e.contains("s3cr3t"), "{e}");
    }

    #[test]
    fn the_first_key_seals_and_every_key_opens() {
        let (old, new) = (KeyRing::new_key(), KeyRing::new_key());
        let before = KeyRing::parse(&old).unwrap();
        let sealed = before.seal("c", "v");
        let ring = KeyRing::parse(&format!("# comment\n{new}\n{old} # the old one\n")).unwrap();
        assert_eq!(ring.ids().len(), 2);
        assert_eq!(ring.open("c", &sealed).unwrap(), "v");
        assert_eq!(ring.seal("c", "v").key_id, ring.current_id());
        assert_ne!(ring.current_id(), sealed.key_id);
        assert_eq!(KeyRing::parse(&format!("{new},{old}")).unwrap().ids(), ring.ids());
        assert!(KeyRing::parse("").unwrap_err().contains("no key"));
        assert!(KeyRing::parse("abc").unwrap_err().contains("32 bytes") || KeyRing::parse("abc").is_err());
        assert!(!format!("{ring:?}").contains(&new), "Debug never prints a key");
    }

    #[test]
    fn a_missing_key_file_is_created_once_and_private() {
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join("secrets.key");
        let first = KeyRing::load(None, &file).unwrap();
        let again = KeyRing::load(None, &file).unwrap();
        assert_eq!(first.ids(), again.ids());
        #[cfg(unix)]
        {
            use std::os::unix::fs::PermissionsExt;
            assert_eq!(std::fs::metadata(&file).unwrap().permissions().mode() & 0o777, 0o600);
        }
        let from_env = KeyRing::load(Some(&KeyRing::new_key()), &file).unwrap();
        assert_ne!(from_env.ids(), first.ids(), "the environment wins over the file");
    }
}

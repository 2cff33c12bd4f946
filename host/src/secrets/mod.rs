//! An instance's named secrets: set and deleted by the instance (API) or the operator (`herald
//! secrets`), listed by name and time only, read in clear by nothing but an authheader
//! extension's `secrets.get` (and `herald secrets rotate`, which seals them again). Values are
//! sealed with a key kept outside the database (`keys.rs`), bound to their instance and name.

pub mod keys;

use crate::store::tenant::SecretInfo;
use crate::store::StoreError;
use crate::tenants::Tenant;
pub use keys::KeyRing;

/// The longest value (bytes of UTF-8).
pub const MAX_VALUE_BYTES: usize = 8 * 1024;
/// The longest name.
const MAX_NAME: usize = 64;

/// A secret's name: letters, digits, `_`, `-` and `.`, starting with a letter (at most 64).
pub fn check_name(name: &str) -> Result<(), String> {
    let valid = !name.is_empty()
        && name.len() <= MAX_NAME
        && name.starts_with(|c: char| c.is_ascii_alphabetic())
        && name.chars().all(|c| c.is_ascii_alphanumeric() || matches!(c, '_' | '-' | '.'));
    if valid {
        Ok(())
    } else {
        Err(format!(
            "the secret name '{name}' must start with a letter and hold only letters, digits, '_', '-' and '.' (at most {MAX_NAME})"
        ))
    }
}

/// A value: not empty, at most `MAX_VALUE_BYTES`, no NUL. The message never repeats it.
pub fn check_value(value: &str) -> Result<(), String> {
    if value.is_empty() {
        return Err("the secret's value is empty".into());
    }
    if value.len() > MAX_VALUE_BYTES {
        return Err(format!("the secret's value is {} bytes; at most {MAX_VALUE_BYTES}", value.len()));
    }
    if value.contains('\0') {
        return Err("the secret's value holds a NUL character".into());
    }
    Ok(())
}

/// What seals a value to its instance and name.
fn context(customer_id: &str, name: &str) -> String {
    format!("herald-secret/{customer_id}/{name}")
}

#[derive(Debug, thiserror::Error)]
pub enum SecretError {
    #[error("{0}")]
    Invalid(String),
    /// Stored, but this node cannot open it (a key missing from its ring, a damaged value).
    #[error("secret {name} cannot be opened: {reason}")]
    Unopenable { name: String, reason: String },
    #[error(transparent)]
    Store(#[from] StoreError),
}

/// Sets secret `name` of `tenant`; true when it was new.
pub async fn set(ring: &KeyRing, tenant: &Tenant, name: &str, value: &str) -> Result<(SecretInfo, bool), SecretError> {
    check_name(name).map_err(SecretError::Invalid)?;
    check_value(value).map_err(SecretError::Invalid)?;
    let sealed = ring.seal(&context(tenant.customer_id(), name), value);
    Ok(tenant.db.put_secret(name, &sealed).await?)
}

/// The value of secret `name` of `tenant`, in clear (for an authheader extension only).
pub async fn get(ring: &KeyRing, tenant: &Tenant, name: &str) -> Result<Option<String>, SecretError> {
    let Some(sealed) = tenant.db.sealed_secret(name).await? else { return Ok(None) };
    ring.open(&context(tenant.customer_id(), name), &sealed)
        .map(Some)
        .map_err(|reason| SecretError::Unopenable { name: name.to_string(), reason })
}

/// Seals again with the ring's first key every secret of `tenant` sealed with another; the
/// number sealed again, and the names that could not be opened.
pub async fn rotate(ring: &KeyRing, tenant: &Tenant) -> Result<(usize, Vec<String>), SecretError> {
    let mut resealed = 0;
    let mut unopenable = Vec::new();
    for (name, sealed) in tenant.db.secrets_sealed_otherwise(ring.current_id()).await? {
        let context = context(tenant.customer_id(), &name);
        match ring.open(&context, &sealed) {
            Ok(value) => {
                if tenant.db.reseal_secret(&name, &sealed, &ring.seal(&context, &value)).await? {
                    resealed += 1;
                }
            }
            Err(_) => unopenable.push(name),
        }
    }
    Ok((resealed, unopenable))
}

/// Replaces every secret value that occurs in `text` with `[secret]` (a guest that logs what it
/// read, or puts it in an error, does not leak it into the execution's record).
pub fn redact(text: &str, values: &[String]) -> String {
    let mut out = text.to_string();
    // Longest first, so that a value inside another does not leave the rest of the longer.
    let mut values: Vec<&String> = values.iter().filter(|v| !v.is_empty()).collect();
    values.sort_by_key(|v| std::cmp::Reverse(v.len()));
    for value in values {
        if out.contains(value.as_str()) {
            out = out.replace(value.as_str(), "[secret]");
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_and_values_are_checked_without_repeating_the_value() {
        assert!(check_name("CRM_API-KEY.v2").is_ok());
        for bad in ["", "1KEY", "a b", "key/../x", &"K".repeat(65)] {
            assert!(check_name(bad).is_err(), "{bad}");
        }
        assert!(check_value("").is_err());
        let long = "s".repeat(MAX_VALUE_BYTES + 1);
        assert!(!check_value(&long).unwrap_err().contains("sss"));
        assert!(check_value("a\0b").is_err());
    }

    #[test]
    fn redaction_hides_every_occurrence() {
        let values = vec!["tok".to_string(), "tok-123456".to_string()];
        assert_eq!(redact("Bearer tok-123456 and tok-123456", &values), "Bearer [secret] and [secret]");
        assert_eq!(redact("a tok", &values), "a [secret]");
    }
}

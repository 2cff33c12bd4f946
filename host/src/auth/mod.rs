//! Who is calling: credentials (client id + secret), OAuth2 client-credentials tokens and Basic
//! authentication, and the scope a credential grants.

pub mod secret;
mod token;

use std::sync::Arc;
use std::time::{Duration, Instant};

use base64::engine::general_purpose::STANDARD;
use base64::Engine;
use rand::RngCore;

use crate::store::control::CredentialRecord;
use crate::store::read_cache::ReadCache;
use crate::store::{ControlDb, StoreResult};
use token::{Claims, Signer};

/// Access tokens are valid two hours (spec).
pub const TOKEN_LIFETIME_SECS: i64 = 7200;

/// How long a credential lookup is reused: a revoked credential stops working within this time.
const CREDENTIAL_CACHE_TTL: Duration = Duration::from_secs(30);

/// Tokens whose callers are kept (`Authenticator::tokens`): past this many the map starts again.
const KEPT_TOKENS: usize = 10_000;

/// What a credential may call.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Scope {
    /// Public Api: every public operation.
    Public,
    /// App Api: the Register API only.
    App,
}

impl Scope {
    pub fn parse(s: &str) -> Option<Scope> {
        match s {
            "public" => Some(Scope::Public),
            "app" => Some(Scope::App),
            _ => None,
        }
    }

    pub fn name(self) -> &'static str {
        match self {
            Scope::Public => "public",
            Scope::App => "app",
        }
    }
}

/// An authenticated caller.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Principal {
    pub customer_id: String,
    pub client_id: String,
    pub scope: Scope,
    /// When the token it came from expires (seconds since the Unix epoch); `i64::MAX` for a
    /// client id and secret, checked at every call.
    pub expires: i64,
}

pub struct Authenticator {
    control: ControlDb,
    signer: Signer,
    /// Looked up at every authenticated call (`ReadCache`); revocations made elsewhere show
    /// within its time to live.
    credentials: ReadCache<Arc<Option<CredentialRecord>>>,
    /// The caller each bearer token presented lately names, trusted as long as the lookup of
    /// its credential it came from (a revocation shows as soon as without it), and checked
    /// against the token's expiry at every use. A token's check was its MAC (four SHA-256
    /// blocks), two base64 decodings and its JSON claims at every call (issue 41); a token is
    /// found here only once it was verified, and the map's hash is seeded per process, so a
    /// forged token never reaches the comparison of its bytes with a verified one.
    tokens: ReadCache<Arc<Principal>>,
}

impl Authenticator {
    /// Loads the signing key, creating it on the very first start.
    pub async fn new(control: ControlDb) -> StoreResult<Authenticator> {
        let mut fresh = [0u8; 32];
        rand::thread_rng().fill_bytes(&mut fresh);
        let key = control.setting_or_insert("token_signing_key", &STANDARD.encode(fresh)).await?;
        let key = STANDARD.decode(key).map_err(|e| crate::store::StoreError::Db(sqlx::Error::Decode(Box::new(e))))?;
        let credentials = ReadCache::new(CREDENTIAL_CACHE_TTL, 100_000);
        let tokens = ReadCache::new(CREDENTIAL_CACHE_TTL, KEPT_TOKENS);
        Ok(Authenticator { control, signer: Signer::new(key), credentials, tokens })
    }

    /// The credential `client_id` names, with the time it was read from the database.
    async fn credential(&self, client_id: &str) -> StoreResult<(Instant, Arc<Option<CredentialRecord>>)> {
        // No credential has such an id: answered without the database (which may refuse the
        // text: PostgreSQL takes no NUL) and without a place in the cache.
        if client_id.is_empty() || client_id.len() > 256 || client_id.chars().any(char::is_control) {
            return Ok((Instant::now(), Arc::new(None)));
        }
        if let Some(c) = self.credentials.get_with_time(client_id) {
            return Ok(c);
        }
        let read = Instant::now();
        let found = Arc::new(self.control.credential(client_id).await?.filter(|c| !c.revoked));
        self.credentials.insert(client_id, found.clone(), read);
        Ok((read, found))
    }

    /// The caller a client id and secret authenticate, if they do.
    pub async fn check_secret(&self, client_id: &str, secret: &str) -> StoreResult<Option<Principal>> {
        let (_, cred) = self.credential(client_id).await?;
        Ok(cred.as_ref().as_ref().filter(|c| secret::verify(secret, &c.secret_hash)).and_then(principal))
    }

    /// Issues a token for a verified caller; returns it with its lifetime in seconds.
    pub fn issue(&self, who: &Principal) -> (String, i64) {
        let claims = Claims {
            c: who.client_id.clone(),
            i: who.customer_id.clone(),
            s: who.scope.name().into(),
            e: chrono::Utc::now().timestamp() + TOKEN_LIFETIME_SECS,
        };
        (self.signer.sign(&claims), TOKEN_LIFETIME_SECS)
    }

    /// The caller a bearer token names, if it is valid and its credential still is.
    pub async fn check_token(&self, token: &str) -> StoreResult<Option<Arc<Principal>>> {
        let now = chrono::Utc::now().timestamp();
        if let Some(known) = self.tokens.get(token) {
            return Ok((known.expires > now).then_some(known));
        }
        let Some(claims) = self.signer.verify(token, now) else {
            return Ok(None);
        };
        let (read, cred) = self.credential(&claims.c).await?;
        let found = cred.as_ref().as_ref().filter(|c| c.customer_id == claims.i && c.scope == claims.s).and_then(principal);
        let Some(mut found) = found else { return Ok(None) };
        found.expires = claims.e;
        let found = Arc::new(found);
        // Kept for as long as the credential's lookup is: a revocation shows no later.
        self.tokens.insert(token, Arc::clone(&found), read);
        Ok(Some(found))
    }

    /// Resolves an `Authorization` header value (Bearer or Basic).
    pub async fn check_header(&self, header: &str) -> StoreResult<Option<Arc<Principal>>> {
        let (scheme, rest) = header.trim().split_once(' ').unwrap_or((header, ""));
        let rest = rest.trim();
        if scheme.eq_ignore_ascii_case("bearer") {
            return self.check_token(rest).await;
        }
        if scheme.eq_ignore_ascii_case("basic") {
            let Some((id, secret)) = decode_basic(rest) else { return Ok(None) };
            return Ok(self.check_secret(&id, &secret).await?.map(Arc::new));
        }
        Ok(None)
    }
}

/// `base64(client_id:secret)` (RFC 7617).
pub fn decode_basic(value: &str) -> Option<(String, String)> {
    let bytes = STANDARD.decode(value.trim()).ok()?;
    let text = String::from_utf8(bytes).ok()?;
    let (id, secret) = text.split_once(':')?;
    Some((id.to_string(), secret.to_string()))
}

fn principal(c: &CredentialRecord) -> Option<Principal> {
    Some(Principal {
        customer_id: c.customer_id.clone(),
        client_id: c.client_id.clone(),
        scope: Scope::parse(&c.scope)?,
        expires: i64::MAX,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::{DataModel, Environment, InstanceSettings};
    use crate::store::Backend;

    /// An authenticator over a fresh control plane with one credential (`k`, secret `s`), the
    /// caller it authenticates and a token issued to it.
    struct Issued {
        _dir: tempfile::TempDir,
        control: ControlDb,
        auth: Authenticator,
        who: Principal,
        token: String,
    }

    async fn issued() -> Issued {
        let dir = tempfile::tempdir().unwrap();
        let control = ControlDb::open(&Backend::Sqlite { data_dir: dir.path().into() }).await.unwrap();
        let settings = InstanceSettings {
            customer_id: "demo".into(),
            environment: Environment::Staging,
            licensed_uar: None,
            daily_cap: None,
            cpu_weight: None,
        };
        control
            .put_instance(
                &settings,
                &serde_json::from_str::<DataModel>(
                    r#"{"recipient_id": "ID", "person_data": [{"name": "ID", "type": "STRING", "unique": true}]}"#,
                )
                .unwrap(),
            )
            .await
            .unwrap();
        control.insert_credential("k", "demo", &secret::hash("s"), "public", "").await.unwrap();
        let auth = Authenticator::new(control.clone()).await.unwrap();
        let who = auth.check_secret("k", "s").await.unwrap().expect("the credential");
        let (token, _) = auth.issue(&who);
        Issued { _dir: dir, control, auth, who, token }
    }

    #[tokio::test]
    async fn a_token_once_verified_is_known_until_it_expires_and_forgeries_never_are() {
        let Issued { _dir, auth, token, .. } = issued().await;
        let first = auth.check_token(&token).await.unwrap().expect("a valid token");
        assert_eq!((first.customer_id.as_str(), first.scope), ("demo", Scope::Public));
        assert!(first.expires > chrono::Utc::now().timestamp() + TOKEN_LIFETIME_SECS - 60, "the token's own expiry");
        let again = auth.check_token(&token).await.unwrap().expect("still valid");
        assert!(Arc::ptr_eq(&first, &again), "the second call finds the verified caller");
        // A token of the same payload with another MAC, once the genuine one is known.
        let (head, _) = token.rsplit_once('.').unwrap();
        assert_eq!(auth.check_token(&format!("{head}.AAAA")).await.unwrap(), None);
        assert_eq!(auth.check_token(&format!("{token}x")).await.unwrap(), None);
        // A known caller whose token has expired since is refused.
        let expired = Principal { expires: chrono::Utc::now().timestamp() - 1, ..(*first).clone() };
        auth.tokens.insert("v1.expired", Arc::new(expired), Instant::now());
        assert_eq!(auth.check_token("v1.expired").await.unwrap(), None);
    }

    #[tokio::test]
    async fn a_revoked_credential_is_refused_once_its_lookup_is_old() {
        let Issued { _dir, control, auth, who, token } = issued().await;
        assert!(auth.check_token(&token).await.unwrap().is_some());
        assert!(control.revoke_credential("k").await.unwrap());
        // Within the lookup's time to live the token still works (the documented delay); once
        // both lookups are older than it, the credential is read again.
        assert!(auth.check_token(&token).await.unwrap().is_some());
        let long_ago = Instant::now().checked_sub(CREDENTIAL_CACHE_TTL * 2).expect("the clock is past a minute");
        auth.tokens.insert(&token, Arc::new(who.clone()), long_ago);
        auth.credentials.insert("k", auth.credentials.get("k").unwrap(), long_ago);
        assert_eq!(auth.check_token(&token).await.unwrap(), None, "revoked");
    }
}

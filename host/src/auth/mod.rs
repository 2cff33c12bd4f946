//! Who is calling: credentials (client id + secret), OAuth2 client-credentials tokens and Basic
//! authentication, and the scope a credential grants.

pub mod secret;
mod token;

use std::sync::Arc;
use std::time::Duration;

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
}

pub struct Authenticator {
    control: ControlDb,
    signer: Signer,
    /// Looked up at every authenticated call (`ReadCache`); revocations made elsewhere show
    /// within its time to live.
    credentials: ReadCache<Arc<Option<CredentialRecord>>>,
}

impl Authenticator {
    /// Loads the signing key, creating it on the very first start.
    pub async fn new(control: ControlDb) -> StoreResult<Authenticator> {
        let mut fresh = [0u8; 32];
        rand::thread_rng().fill_bytes(&mut fresh);
        let key = control.setting_or_insert("token_signing_key", &STANDARD.encode(fresh)).await?;
        let key = STANDARD.decode(key).map_err(|e| crate::store::StoreError::Db(sqlx::Error::Decode(Box::new(e))))?;
        let credentials = ReadCache::new(CREDENTIAL_CACHE_TTL, 100_000);
        Ok(Authenticator { control, signer: Signer::new(key), credentials })
    }

    async fn credential(&self, client_id: &str) -> StoreResult<Arc<Option<CredentialRecord>>> {
        // No credential has such an id: answered without the database (which may refuse the
        // text: PostgreSQL takes no NUL) and without a place in the cache.
        if client_id.is_empty() || client_id.len() > 256 || client_id.chars().any(char::is_control) {
            return Ok(Arc::new(None));
        }
        if let Some(c) = self.credentials.get(client_id) {
            return Ok(c);
        }
        let read = std::time::Instant::now();
        let found = Arc::new(self.control.credential(client_id).await?.filter(|c| !c.revoked));
        self.credentials.insert(client_id, found.clone(), read);
        Ok(found)
    }

    /// The caller a client id and secret authenticate, if they do.
    pub async fn check_secret(&self, client_id: &str, secret: &str) -> StoreResult<Option<Principal>> {
        let cred = self.credential(client_id).await?;
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
    pub async fn check_token(&self, token: &str) -> StoreResult<Option<Principal>> {
        let Some(claims) = self.signer.verify(token, chrono::Utc::now().timestamp()) else {
            return Ok(None);
        };
        let cred = self.credential(&claims.c).await?;
        Ok(cred.as_ref().as_ref().filter(|c| c.customer_id == claims.i && c.scope == claims.s).and_then(principal))
    }

    /// Resolves an `Authorization` header value (Bearer or Basic).
    pub async fn check_header(&self, header: &str) -> StoreResult<Option<Principal>> {
        let (scheme, rest) = header.trim().split_once(' ').unwrap_or((header, ""));
        let rest = rest.trim();
        if scheme.eq_ignore_ascii_case("bearer") {
            return self.check_token(rest).await;
        }
        if scheme.eq_ignore_ascii_case("basic") {
            let Some((id, secret)) = decode_basic(rest) else { return Ok(None) };
            return self.check_secret(&id, &secret).await;
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
    Some(Principal { customer_id: c.customer_id.clone(), client_id: c.client_id.clone(), scope: Scope::parse(&c.scope)? })
}

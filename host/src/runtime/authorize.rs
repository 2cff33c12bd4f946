//! Authheader injection: an outbound call that an extension of an instance makes to a host that
//! one of the instance's authheader extensions is bound to (`bound_hosts`) gets the headers that
//! extension makes, added by Herald after the calling guest handed the request over: the caller
//! never holds the credential. Calls that authheader extensions make themselves (fetching a
//! token) get none, so an extension never recurses into itself.
//!
//! Headers that came with a lifetime are reused for every call to the same host of the same
//! instance until it ends (at most a day), and until the authheader extension is replaced or the
//! instance's secrets change on this node. While the first answer for a host is awaited, other
//! calls to that host wait for it rather than asking too (one token fetch, not one per call);
//! once an extension's headers have shown they come without a lifetime (a signature of each
//! call), calls to that host ask it each time, in parallel.

use std::sync::Arc;
use std::time::{Duration, Instant};

use axum::http::{HeaderName, HeaderValue};

use super::config::ExtensionConfig;
use super::{Answered, Call, ExtensionKind, Outbound, Runtime};
use crate::store::tenant::ExtensionRecord;
use crate::tenants::Tenant;

/// The longest lifetime honoured.
const MAX_AGE: Duration = Duration::from_secs(86_400);
/// How long an extension's headers are taken to come without a lifetime.
const PATH_SPECIFIC_FOR: Duration = Duration::from_secs(300);
/// The most headers, and bytes of them, one answer may add.
const MAX_HEADERS: usize = 32;
const MAX_HEADER_BYTES: usize = 16 * 1024;
/// Headers an authheader extension may not set: the connection's own, which the request's
/// framing decides.
const RESERVED: [&str; 9] =
    ["host", "content-length", "transfer-encoding", "connection", "upgrade", "te", "trailer", "keep-alive", "proxy-connection"];

/// (instance, host in lower case).
type Key = (String, String);
pub type Headers = Vec<(HeaderName, HeaderValue)>;

/// What an authheader extension answered, as cached.
#[derive(Clone)]
struct Grant {
    /// The content of the extension that made it: replaced, it is not reused.
    sha256: String,
    headers: Arc<Headers>,
    max_age: Option<Duration>,
}

struct GrantExpiry;

impl moka::Expiry<Key, Grant> for GrantExpiry {
    fn expire_after_create(&self, _key: &Key, grant: &Grant, _created_at: Instant) -> Option<Duration> {
        Some(grant.max_age.unwrap_or(Duration::ZERO))
    }
}

pub(crate) struct HeaderCache {
    grants: moka::future::Cache<Key, Grant>,
    /// One answer awaited per key at a time.
    fetching: moka::future::Cache<Key, Arc<tokio::sync::Mutex<()>>>,
    /// Keys whose extension answered without a lifetime lately.
    path_specific: moka::future::Cache<Key, ()>,
}

impl HeaderCache {
    pub(crate) fn new() -> HeaderCache {
        HeaderCache {
            grants: moka::future::Cache::builder().max_capacity(100_000).expire_after(GrantExpiry).support_invalidation_closures().build(),
            fetching: moka::future::Cache::builder().max_capacity(100_000).time_to_idle(Duration::from_secs(600)).build(),
            path_specific: moka::future::Cache::builder().max_capacity(100_000).time_to_live(PATH_SPECIFIC_FOR).build(),
        }
    }

    /// Forgets the headers made for an instance (its secrets changed).
    pub(crate) fn forget_instance(&self, customer_id: &str) {
        let customer_id = customer_id.to_string();
        if let Err(e) = self.grants.invalidate_entries_if(move |key, _| key.0 == customer_id) {
            tracing::warn!(error = %e, "cached authorization headers could not be forgotten");
            self.grants.invalidate_all();
        }
    }
}

/// Why an outbound call could not be given its headers (for the calling guest and both logs;
/// never a header value).
pub type Refusal = String;

impl Runtime {
    /// The headers the instance's authheader extension bound to `host` makes for this call:
    /// `Ok(None)` when none is bound, `Err` when it failed (the call must not go out without).
    pub(crate) async fn authorize(
        self: &Arc<Self>,
        tenant: &Arc<Tenant>,
        host: &str,
        method: &str,
        path_with_query: &str,
    ) -> Result<Option<Arc<Headers>>, Refusal> {
        let binding = match bound_extension(tenant, host).await {
            Ok(Some(binding)) => binding,
            Ok(None) => return Ok(None),
            Err(e) => {
                tracing::error!(instance = tenant.customer_id(), error = %e, "the authheader extensions could not be read");
                return Err("the instance's authheader extensions could not be read".into());
            }
        };
        let key: Key = (tenant.customer_id().to_string(), host.to_ascii_lowercase());
        let cache = &self.headers;
        let fresh = |grant: Option<Grant>| grant.filter(|g| g.sha256 == binding.sha256).map(|g| g.headers);
        if let Some(headers) = fresh(cache.grants.get(&key).await) {
            return Ok(Some(headers));
        }
        let outbound = Outbound { host: host.to_string(), method: method.to_string(), path_with_query: path_with_query.to_string() };
        if cache.path_specific.get(&key).await.is_some() {
            return self.ask(tenant, &binding, outbound).await.map(|g| Some(g.headers));
        }
        let lock = cache.fetching.get_with(key.clone(), async { Arc::default() }).await;
        let _turn = lock.lock().await;
        if let Some(headers) = fresh(cache.grants.get(&key).await) {
            return Ok(Some(headers));
        }
        let grant = self.ask(tenant, &binding, outbound).await?;
        match grant.max_age {
            Some(_) => cache.grants.insert(key, grant.clone()).await,
            None => cache.path_specific.insert(key, ()).await,
        }
        Ok(Some(grant.headers))
    }

    /// Calls the authheader extension and checks what it made.
    async fn ask(self: &Arc<Self>, tenant: &Arc<Tenant>, binding: &Binding, outbound: Outbound) -> Result<Grant, Refusal> {
        let name = &binding.id;
        let failed = |why: String| format!("the authheader extension '{name}' failed: {why}");
        let extension = match self.extension(tenant, name, ExtensionKind::Authheader).await {
            Ok(Some(extension)) => extension,
            Ok(None) => return Err(failed("it is gone".into())),
            Err(e) => return Err(failed(format!("it could not be loaded: {e:#}"))),
        };
        let call = Call {
            deadline: self.deadline(&extension.config),
            extension,
            id: name.clone(),
            tenant: Arc::clone(tenant),
            context: None,
            lineage: Default::default(),
            journal: None,
        };
        let made = match self.call_authheader(call, outbound).await {
            Answered::Ok(made) => made,
            Answered::Error(reason) => return Err(failed(reason)),
            Answered::Failed(failure) => return Err(failed(failure.to_string())),
        };
        let headers = checked_headers(made.headers).map_err(failed)?;
        let max_age = made.max_age_seconds.filter(|s| *s > 0).map(|s| Duration::from_secs(u64::from(s)).min(MAX_AGE));
        Ok(Grant { sha256: binding.sha256.clone(), headers: Arc::new(headers), max_age })
    }
}

/// Header names and values as HTTP allows them, none of the reserved ones, within bounds. The
/// message names the header, never its value.
fn checked_headers(made: Vec<(String, String)>) -> Result<Headers, String> {
    if made.len() > MAX_HEADERS {
        return Err(format!("it made {} headers; at most {MAX_HEADERS}", made.len()));
    }
    let bytes: usize = made.iter().map(|(n, v)| n.len() + v.len()).sum();
    if bytes > MAX_HEADER_BYTES {
        return Err(format!("its headers are {bytes} bytes; at most {MAX_HEADER_BYTES}"));
    }
    made.into_iter()
        .map(|(name, value)| {
            // Neither the name nor the value is quoted: both are the guest's text, which may hold
            // a secret in any form.
            let header = HeaderName::from_bytes(name.as_bytes()).map_err(|_| "one of its header names is not a valid one".to_string())?;
            if RESERVED.contains(&header.as_str()) {
                return Err(format!("it may not set the '{header}' header"));
            }
            let mut value =
                HeaderValue::from_str(&value).map_err(|_| format!("the value of header '{header}' is not a valid header value"))?;
            value.set_sensitive(true);
            Ok((header, value))
        })
        .collect()
}

/// The instance's authheader extension bound to a host.
struct Binding {
    id: String,
    sha256: String,
}

async fn bound_extension(tenant: &Tenant, host: &str) -> anyhow::Result<Option<Binding>> {
    for record in tenant.db.extensions_of_kind(ExtensionKind::Authheader.name()).await?.iter() {
        if stored_config(tenant, record).await?.binds_host(host) {
            let id = record.path.strip_suffix(".wasm").unwrap_or(&record.path).to_string();
            return Ok(Some(Binding { id, sha256: record.sha256.clone() }));
        }
    }
    Ok(None)
}

/// An extension's configuration as stored with its record, or else (a record stored before Herald
/// kept it) read from its component.
pub async fn stored_config(tenant: &Tenant, record: &ExtensionRecord) -> anyhow::Result<ExtensionConfig> {
    if let Some(text) = &record.config {
        return ExtensionConfig::from_stored(text).map_err(anyhow::Error::msg);
    }
    let content = tenant.db.extension_content(&record.sha256).await?.unwrap_or_default();
    Ok(super::config::read(&content).unwrap_or_default())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn made_headers_are_checked_and_never_quoted() {
        let ok = checked_headers(vec![("Authorization".into(), "Bearer abc".into())]).unwrap();
        assert_eq!(ok[0].0, "authorization");
        assert!(ok[0].1.is_sensitive());
        let e = checked_headers(vec![("bad name".into(), "Bearer abc".into())]).unwrap_err();
        assert!(e.contains("not a valid one") && !e.contains("bad name"), "{e}");
        let e = checked_headers(vec![("x-key".into(), "line\nbreak-secret".into())]).unwrap_err();
        assert!(e.contains("x-key") && !e.contains("secret"), "{e}");
        assert!(checked_headers(vec![("Host".into(), "evil".into())]).unwrap_err().contains("'host'"));
        assert!(checked_headers((0..33).map(|i| (format!("x-{i}"), "v".into())).collect()).is_err());
    }
}

//! What a store holds for one call: the instance it runs for (taken from the route or the
//! credential, never from the guest), an empty WASI context (no environment, no preopened
//! directories, no inherited stdio: output is captured, bounded), the wasi:http context with the
//! outbound policy, the resource table (capacity-limited) and the memory limits.

use std::future::Future;
use std::net::{IpAddr, SocketAddr};
use std::sync::Arc;

use wasmtime::component::ResourceTable;
use wasmtime::{ResourceLimiter, StoreLimits, StoreLimitsBuilder};
use wasmtime_wasi::{WasiCtx, WasiCtxView, WasiView};
use wasmtime_wasi_http::p2::bindings::Proxy;
use wasmtime_wasi_http::{WasiHttpCtx, WasiHttpCtxView, WasiHttpHooks, WasiHttpView};

use super::config::ExtensionConfig;
use super::output::CapturedOutput;
use super::RuntimeSettings;
use crate::clock::Clock;
use crate::tenants::Tenant;

/// The most resources (streams, requests, fields...) one call may hold at once.
pub const MAX_RESOURCES: usize = 10_000;
/// How much of a call's stdout and stderr is kept.
pub const MAX_CAPTURED_OUTPUT: usize = 64 * 1024;

pub struct CallState {
    /// The instance this call runs for: every platform function acts on it alone.
    pub tenant: Arc<Tenant>,
    /// The server's clock (events are achieved at its time; tests move it).
    pub clock: Arc<dyn Clock>,
    /// Messages of the `log` interface, bounded.
    pub log: Vec<String>,
    /// The contextual data of the triggering call (none for http calls).
    pub context: Option<String>,
    /// Starts the flows that an event achieved or a recipient created by this call triggers.
    pub triggers: Option<Arc<dyn crate::domain::triggers::Triggers>>,
    /// Where this call stands in a chain of events (a flow run's; an outside call's otherwise).
    pub lineage: crate::domain::triggers::Lineage,
    /// The secrets key ring: only for the calls of authheader extensions (`secrets.get`).
    pub secrets: Option<crate::secrets::KeyRing>,
    /// The same ring for the signature checks of http extensions (`signatures.rs`), which use a
    /// secret without giving it to the guest; and how many this call has made.
    pub signing: Option<crate::secrets::KeyRing>,
    pub signature_checks: u32,
    /// Credentials this call saw (secret values read, headers made): removed from its log and
    /// output before they are kept.
    pub revealed: Vec<String>,
    /// Where the platform functions note the changes the call makes, when its caller asked.
    pub journal: Option<super::journal::Journal>,
    wasi: WasiCtx,
    http: WasiHttpCtx,
    table: ResourceTable,
    pub limits: Limits,
    outbound: OutboundPolicy,
    pub stdout: CapturedOutput,
    pub stderr: CapturedOutput,
    /// The http guest's instance in this store, once made: a reused store (`warm.rs`) keeps it.
    pub(crate) proxy: Option<Arc<Proxy>>,
    /// Calls of `herald:platform` this call made, and the records its writes created, changed or
    /// deleted, for its receipt.
    pub host_calls: u64,
    pub rows_written: std::sync::atomic::AtomicU64,
}

impl CallState {
    pub fn new(
        tenant: Arc<Tenant>,
        clock: Arc<dyn Clock>,
        config: &Arc<ExtensionConfig>,
        settings: &RuntimeSettings,
        operator_hosts: &Arc<[String]>,
        authorizer: Option<Authorizer>,
    ) -> CallState {
        let stdout = CapturedOutput::new(MAX_CAPTURED_OUTPUT);
        let stderr = CapturedOutput::new(MAX_CAPTURED_OUTPUT);
        let wasi = WasiCtx::builder().stdout(stdout.clone()).stderr(stderr.clone()).build();
        let mut table = ResourceTable::new();
        table.set_max_capacity(MAX_RESOURCES);
        CallState {
            tenant,
            clock,
            log: Vec::new(),
            context: None,
            triggers: None,
            lineage: Default::default(),
            secrets: None,
            signing: None,
            signature_checks: 0,
            revealed: Vec::new(),
            journal: None,
            wasi,
            http: WasiHttpCtx::new(),
            table,
            limits: Limits {
                inner: StoreLimitsBuilder::new()
                    .memory_size(config.memory_bytes().unwrap_or(settings.memory_bytes).min(settings.max_memory_bytes))
                    .instances(20)
                    .tables(20)
                    .table_elements(100_000)
                    .build(),
                refused: false,
                bytes: 0,
                peak: 0,
            },
            outbound: OutboundPolicy {
                config: Arc::clone(config),
                operator: Arc::clone(operator_hosts),
                private: settings.outbound_private,
                authorizer,
                sent: Arc::default(),
            },
            stdout,
            stderr,
            proxy: None,
            host_calls: 0,
            rows_written: Default::default(),
        }
    }

    /// Makes a store that served a call ready for the next one of the same extension for the
    /// same instance (`warm.rs`): what belonged to the last call goes (its log, output, context,
    /// the credentials it saw); the guest's memory and instance stay, and so does what the limits
    /// counted.
    /// `runtime` is given when the call's outbound requests get authheaders' headers: the last
    /// call's authorizer is kept for it (with this call's tenant) when nothing of that call holds
    /// its notes any more.
    pub fn begin_next_call(&mut self, tenant: Arc<Tenant>, runtime: Option<&Arc<super::Runtime>>) {
        debug_assert_eq!(self.tenant.customer_id(), tenant.customer_id(), "a store serves one instance");
        self.tenant = tenant;
        self.log.clear();
        self.context = None;
        self.lineage = Default::default();
        self.revealed.clear();
        self.journal = None;
        self.stdout.clear();
        self.stderr.clear();
        self.host_calls = 0;
        self.rows_written = Default::default();
        self.limits.peak = self.limits.bytes;
        self.outbound.sent = Arc::default();
        let kept = self.outbound.authorizer.take();
        self.outbound.authorizer = runtime.map(|runtime| match kept {
            Some(mut kept) if Arc::strong_count(&kept.notes) == 1 => {
                kept.notes.lock().expect("notes lock").clear();
                kept.tenant = Arc::clone(&self.tenant);
                kept
            }
            _ => Authorizer::new(runtime, &self.tenant),
        });
    }
}

/// The store's memory, table and instance caps, noting whether one refused to grow: an instance
/// that reached a cap is never reused, even if its guest coped.
pub struct Limits {
    inner: StoreLimits,
    pub refused: bool,
    /// The bytes of linear memory the store's instances have now, and the most they had during
    /// this call (its receipt's peak).
    bytes: usize,
    pub peak: usize,
}

impl ResourceLimiter for Limits {
    fn memory_growing(&mut self, current: usize, desired: usize, maximum: Option<usize>) -> wasmtime::Result<bool> {
        let granted = self.inner.memory_growing(current, desired, maximum)?;
        self.refused |= !granted;
        if granted {
            self.bytes = self.bytes.saturating_add(desired.saturating_sub(current));
            self.peak = self.peak.max(self.bytes);
        }
        Ok(granted)
    }

    fn table_growing(&mut self, current: usize, desired: usize, maximum: Option<usize>) -> wasmtime::Result<bool> {
        let granted = self.inner.table_growing(current, desired, maximum)?;
        self.refused |= !granted;
        Ok(granted)
    }

    fn instances(&self) -> usize {
        self.inner.instances()
    }

    fn tables(&self) -> usize {
        self.inner.tables()
    }

    fn memories(&self) -> usize {
        self.inner.memories()
    }
}

/// The most `log` messages kept per call, and the longest message.
const MAX_LOG_LINES: usize = 200;
const MAX_LOG_LINE: usize = 2048;

impl CallState {
    /// What went wrong with the call's outbound requests on Herald's side (an authheader that
    /// failed), for its log.
    pub fn outbound_notes(&self) -> Vec<String> {
        self.outbound.authorizer.as_ref().map(|a| a.notes.lock().expect("notes lock").clone()).unwrap_or_default()
    }

    /// Notes a change to the instance's data in the call's journal, if it keeps one (the line is
    /// only made then).
    pub fn note_change(&self, line: impl FnOnce() -> String) {
        if let Some(journal) = &self.journal {
            journal.note(line());
        }
    }

    /// The outbound requests this call sent and the bytes of their bodies, both ways.
    pub fn outbound_sent(&self) -> (u64, u64) {
        self.outbound.sent.totals()
    }

    pub fn record_log(&mut self, level: &str, message: &str) {
        keep_log_line(&mut self.log, level, message);
    }
}

impl WasiView for CallState {
    fn ctx(&mut self) -> WasiCtxView<'_> {
        WasiCtxView { ctx: &mut self.wasi, table: &mut self.table }
    }
}

impl WasiHttpView for CallState {
    fn http(&mut self) -> WasiHttpCtxView<'_> {
        WasiHttpCtxView { ctx: &mut self.http, table: &mut self.table, hooks: &mut self.outbound }
    }
}

/// Outgoing requests go only to hosts that the extension declares and the operator allows, and
/// not to loopback, private, link-local or other special addresses unless the operator says so.
/// Others are refused to the guest with `HTTP-request-denied`, an error it can see and handle.
/// A host name is resolved first, and refused (`destination-IP-prohibited`) when any of its
/// addresses is special. (The connection resolves the name again; a DNS server that answers
/// differently within that moment is the operator's host list's to stop.)
///
/// Both lists are shared, not copied into every call's store.
struct OutboundPolicy {
    config: Arc<ExtensionConfig>,
    operator: Arc<[String]>,
    private: bool,
    /// Adds the headers of the instance's authheader extensions (none for an authheader's own
    /// calls).
    authorizer: Option<Authorizer>,
    /// What the call's requests sent and received (a response's body is read after the call's
    /// hook returns, so the count is shared with it).
    sent: Arc<Sent>,
}

/// Outbound requests and the bytes of their bodies (request and response), for a receipt.
#[derive(Default)]
pub struct Sent {
    requests: std::sync::atomic::AtomicU64,
    bytes: Arc<std::sync::atomic::AtomicU64>,
}

impl Sent {
    fn totals(&self) -> (u64, u64) {
        use std::sync::atomic::Ordering::Relaxed;
        (self.requests.load(Relaxed), self.bytes.load(Relaxed))
    }
}

/// `body`, its bytes counted into `bytes` as they pass.
fn counted(body: wasmtime_wasi_http::WasiBody, bytes: Arc<std::sync::atomic::AtomicU64>) -> wasmtime_wasi_http::WasiBody {
    use http_body_util::BodyExt;
    body.map_frame(move |frame| {
        if let Some(data) = frame.data_ref() {
            bytes.fetch_add(data.len() as u64, std::sync::atomic::Ordering::Relaxed);
        }
        frame
    })
    .boxed_unsync()
}

/// What a call needs to add authheader extensions' headers to its outbound requests.
#[derive(Clone)]
pub struct Authorizer {
    pub runtime: Arc<super::Runtime>,
    pub tenant: Arc<Tenant>,
    /// Failures of authheaders, for the calling execution's log.
    pub notes: Arc<std::sync::Mutex<Vec<String>>>,
}

impl Authorizer {
    pub fn new(runtime: &Arc<super::Runtime>, tenant: &Arc<Tenant>) -> Authorizer {
        Authorizer { runtime: Arc::clone(runtime), tenant: Arc::clone(tenant), notes: Arc::default() }
    }
}

impl OutboundPolicy {
    fn allows(&self, host: &str) -> bool {
        let by_operator = self.operator.iter().any(|h| h == "*") || super::config::any_host_matches(&self.operator, host);
        by_operator && self.config.allows_host(host) && (self.private || !is_special(host))
    }
}

/// Loopback, private, link-local, unique-local, unspecified, broadcast and documentation
/// addresses, and `localhost`.
pub fn is_special(host: &str) -> bool {
    let host = host.trim_start_matches('[').trim_end_matches(']');
    if host.eq_ignore_ascii_case("localhost") || host.to_ascii_lowercase().ends_with(".localhost") {
        return true;
    }
    host.parse::<IpAddr>().is_ok_and(is_special_ip)
}

fn is_special_ip(ip: IpAddr) -> bool {
    match ip {
        IpAddr::V4(ip) => {
            ip.is_loopback()
                || ip.is_private()
                || ip.is_link_local()
                || ip.is_unspecified()
                || ip.is_broadcast()
                || ip.is_documentation()
                || ip.octets()[0] == 100 && (64..128).contains(&ip.octets()[1]) // carrier-grade NAT
        }
        IpAddr::V6(ip) => {
            ip.is_loopback()
                || ip.is_unspecified()
                || (ip.segments()[0] & 0xfe00) == 0xfc00
                || (ip.segments()[0] & 0xffc0) == 0xfe80
                || ip.to_ipv4_mapped().is_some_and(|v4| is_special_ip(IpAddr::V4(v4)))
        }
    }
}

/// Whether a name's addresses may be called: none of them special, and at least one.
fn resolved_addresses_allowed(addresses: &[SocketAddr]) -> bool {
    !addresses.is_empty() && !addresses.iter().any(|a| is_special_ip(a.ip()))
}

type SendResult = wasmtime_wasi_http::Result<(
    axum::http::Response<wasmtime_wasi_http::WasiBody>,
    Box<dyn Future<Output = wasmtime_wasi_http::Result<()>> + Send>,
)>;

impl WasiHttpHooks for OutboundPolicy {
    fn send_request(
        &mut self,
        request: axum::http::Request<wasmtime_wasi_http::WasiBody>,
        options: Option<wasmtime_wasi_http::RequestOptions>,
        fut: Box<dyn Future<Output = wasmtime_wasi_http::Result<()>> + Send>,
    ) -> Box<dyn Future<Output = SendResult> + Send> {
        let allowed = request.uri().host().is_some_and(|h| self.allows(h));
        if !allowed {
            tracing::info!(host = ?request.uri().host(), "outgoing request refused: host not declared");
            return Box::new(async { Err(wasmtime_wasi_http::Error::HttpRequestDenied) });
        }
        let host = request.uri().host().unwrap_or_default().trim_start_matches('[').trim_end_matches(']').to_string();
        let (authorizer, private) = (self.authorizer.clone(), self.private);
        self.sent.requests.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        let bytes = Arc::clone(&self.sent.bytes);
        let request = request.map(|body| counted(body, Arc::clone(&bytes)));
        Box::new(async move {
            let mut request = request;
            if let Some(authorizer) = authorizer {
                let method = request.method().to_string();
                let path = request.uri().path_and_query().map_or("/", |p| p.as_str()).to_string();
                match authorizer.runtime.authorize(&authorizer.tenant, &host, &method, &path).await {
                    Ok(None) => {}
                    // Set, not appended: the caller's own header of that name does not go too.
                    Ok(Some(headers)) => {
                        for (name, value) in headers.iter() {
                            request.headers_mut().insert(name.clone(), value.clone());
                        }
                    }
                    Err(refusal) => {
                        let note = format!("outbound request to {host} not sent: {refusal}");
                        tracing::info!(instance = authorizer.tenant.customer_id(), "{note}");
                        authorizer.notes.lock().expect("notes lock").push(note);
                        return Err(wasmtime_wasi_http::Error::InternalError(Some(refusal)));
                    }
                }
            }
            // The default hooks send it: the same behaviour, on the allowed hosts only.
            if !private && host.parse::<IpAddr>().is_err() {
                let port = request.uri().port_u16().unwrap_or(if request.uri().scheme_str() == Some("https") { 443 } else { 80 });
                let addresses: Vec<SocketAddr> = match tokio::net::lookup_host((host.as_str(), port)).await {
                    Ok(found) => found.collect(),
                    Err(_) => {
                        return Err(wasmtime_wasi_http::Error::DnsError {
                            rcode: Some("the name does not resolve".into()),
                            info_code: None,
                        })
                    }
                };
                if !resolved_addresses_allowed(&addresses) {
                    tracing::info!(%host, "outgoing request refused: the name resolves to a private or special address");
                    return Err(wasmtime_wasi_http::Error::DestinationIpProhibited);
                }
            }
            let (response, io) = Box::into_pin(wasmtime_wasi_http::default_hooks().send_request(request, options, fut)).await?;
            Ok((response.map(|body| counted(body, bytes)), io))
        })
    }
}

/// Keeps `level: message` in `log`, within the bounds of a call's log (`MAX_LOG_LINES` lines of
/// `MAX_LOG_LINE` bytes at most).
pub(crate) fn keep_log_line(log: &mut Vec<String>, level: &str, message: &str) {
    if log.len() < MAX_LOG_LINES {
        let mut line = format!("{level}: {message}");
        cut_to_char_boundary(&mut line, MAX_LOG_LINE);
        log.push(line);
    }
}

/// Cuts `text` to at most `max` bytes, on a character's boundary: what a guest writes is any
/// UTF-8, and `String::truncate` inside a character panics. (`str::floor_char_boundary` does this
/// from Rust 1.91, above the crate's rust-version.)
pub fn cut_to_char_boundary(text: &mut String, max: usize) {
    let mut keep = text.len().min(max);
    while !text.is_char_boundary(keep) {
        keep -= 1;
    }
    text.truncate(keep);
}

#[cfg(test)]
mod tests {
    use super::{is_special, keep_log_line, resolved_addresses_allowed, MAX_LOG_LINE};

    #[test]
    fn a_long_line_of_any_utf8_is_cut_on_a_character_boundary() {
        // "error: " is 7 bytes: the bound falls inside a two-byte character (once a panic of the
        // host's, from a guest's log line).
        let mut log = Vec::new();
        keep_log_line(&mut log, "error", &"é".repeat(3000));
        assert_eq!(log[0].len(), MAX_LOG_LINE - 1);
        assert!(log[0].starts_with("error: é"));
    }

    #[test]
    fn a_name_is_refused_when_any_of_its_addresses_is_special() {
        let public: std::net::SocketAddr = "93.184.216.34:443".parse().unwrap();
        let private: std::net::SocketAddr = "10.0.0.7:443".parse().unwrap();
        let mapped: std::net::SocketAddr = "[::ffff:169.254.169.254]:80".parse().unwrap();
        assert!(resolved_addresses_allowed(&[public]));
        assert!(!resolved_addresses_allowed(&[public, private]), "one private address is enough to refuse");
        assert!(!resolved_addresses_allowed(&[mapped]));
        assert!(!resolved_addresses_allowed(&[]));
    }

    #[test]
    fn special_addresses() {
        for host in [
            "localhost",
            "127.0.0.1",
            "10.1.2.3",
            "172.16.0.1",
            "192.168.1.1",
            "169.254.169.254",
            "0.0.0.0",
            "[::1]",
            "fd00::1",
            "fe80::1",
            "100.64.0.1",
            "::ffff:127.0.0.1",
            "api.localhost",
        ] {
            assert!(is_special(host), "{host}");
        }
        for host in ["93.184.216.34", "api.example.com", "2606:4700::1", "172.32.0.1"] {
            assert!(!is_special(host), "{host}");
        }
    }
}

//! What a store holds for one call: the instance it runs for (taken from the route or the
//! credential, never from the guest), an empty WASI context (no environment, no preopened
//! directories, no inherited stdio: output is captured, bounded), the wasi:http context with the
//! outbound policy, the resource table (capacity-limited) and the memory limits.

use std::future::Future;
use std::sync::Arc;

use wasmtime::component::ResourceTable;
use wasmtime::{StoreLimits, StoreLimitsBuilder};
use wasmtime_wasi::p2::pipe::MemoryOutputPipe;
use wasmtime_wasi::{WasiCtx, WasiCtxView, WasiView};
use wasmtime_wasi_http::{WasiHttpCtx, WasiHttpCtxView, WasiHttpHooks, WasiHttpView};

use super::config::ExtensionConfig;
use super::engine::MAX_MEMORY_BYTES;
use crate::tenants::Tenant;

/// The most resources (streams, requests, fields...) one call may hold at once.
pub const MAX_RESOURCES: usize = 10_000;
/// How much of a call's stdout and stderr is kept.
pub const MAX_CAPTURED_OUTPUT: usize = 64 * 1024;

pub struct CallState {
    /// The instance this call runs for: every platform function acts on it alone.
    pub tenant: Arc<Tenant>,
    /// Messages of the `log` interface, bounded.
    pub log: Vec<String>,
    wasi: WasiCtx,
    http: WasiHttpCtx,
    table: ResourceTable,
    pub limits: StoreLimits,
    outbound: OutboundPolicy,
    pub stdout: MemoryOutputPipe,
    pub stderr: MemoryOutputPipe,
}

impl CallState {
    pub fn new(tenant: Arc<Tenant>, config: &ExtensionConfig) -> CallState {
        let stdout = MemoryOutputPipe::new(MAX_CAPTURED_OUTPUT);
        let stderr = MemoryOutputPipe::new(MAX_CAPTURED_OUTPUT);
        let wasi = WasiCtx::builder().stdout(stdout.clone()).stderr(stderr.clone()).build();
        let mut table = ResourceTable::new();
        table.set_max_capacity(MAX_RESOURCES);
        CallState {
            tenant,
            log: Vec::new(),
            wasi,
            http: WasiHttpCtx::new(),
            table,
            limits: StoreLimitsBuilder::new().memory_size(MAX_MEMORY_BYTES).instances(20).tables(20).table_elements(100_000).build(),
            outbound: OutboundPolicy { config: config.clone() },
            stdout,
            stderr,
        }
    }
}

/// The most `log` messages kept per call, and the longest message.
const MAX_LOG_LINES: usize = 200;
const MAX_LOG_LINE: usize = 2048;

impl CallState {
    pub fn record_log(&mut self, level: &str, message: &str) {
        if self.log.len() < MAX_LOG_LINES {
            let mut line = format!("{level}: {message}");
            line.truncate(MAX_LOG_LINE);
            self.log.push(line);
        }
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

/// Outgoing requests go only to the hosts the extension declares; others are refused to the guest
/// with `HTTP-request-denied`, an error it can see and handle.
struct OutboundPolicy {
    config: ExtensionConfig,
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
        let allowed = request.uri().host().is_some_and(|h| self.config.allows_host(h));
        if !allowed {
            tracing::info!(host = ?request.uri().host(), "outgoing request refused: host not declared");
            return Box::new(async { Err(wasmtime_wasi_http::Error::HttpRequestDenied) });
        }
        // The default hooks send it: the same behaviour, on the allowed hosts only.
        wasmtime_wasi_http::default_hooks().send_request(request, options, fut)
    }
}

//! The extension runtime on wasmtime: one `Engine` and one `Linker` per process; at upload,
//! validation (compile on the blocking pool) and a precompiled artifact cached on disk by content
//! hash, so a restart does not recompile; per extension version a `ProxyPre` cached in memory; per
//! call a fresh `Store` with the caller's instance, memory and resource caps and a deadline.

mod authorize;
mod call;
mod call_targets;
pub mod config;
pub mod config_section;
pub mod custom_section;
mod engine;
pub mod fair;
mod host;
pub mod input;
pub mod journal;
pub mod kind;
pub mod kinds;
mod logs;
pub mod oneshot;
pub mod outcome;
mod output;
mod prepared;
mod state;
pub mod validate;
mod warm;

use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use axum::body::Bytes;
use wasmtime::component::{Component, Linker};
use wasmtime::Engine;
use wasmtime_wasi_http::p2::bindings::ProxyPre;

use crate::assets::RelPath;
use crate::store::read_cache::ReadCache;
use crate::store::TenantDb;
use crate::tenants::Tenant;
pub use authorize::stored_config;
pub use call::{Answered, Call, CallFailure, Logged};
pub use config::ExtensionConfig;
pub use host::bindings::herald::platform::types::{Field as GuestField, Value as GuestValue};
pub use host::person_fields;
pub use input::RecordedInput;
pub use journal::Journal;
pub use kind::ExtensionKind;
pub use kinds::authheader::{Made, Outbound};
pub use kinds::http::HttpResponse;
pub use kinds::monitor::Report;
pub use oneshot::Ran;
pub use outcome::{HostFault, Outcome};
pub use prepared::{Prepared, PreparedComponent};
pub use state::{cut_to_char_boundary, CallState};
pub use validate::Validated;

/// The operator's settings for extension calls.
#[derive(Debug, Clone)]
pub struct RuntimeSettings {
    /// Deadline of a call whose extension sets none.
    pub default_timeout: Duration,
    /// The longest deadline an extension may set for itself.
    pub max_timeout: Duration,
    /// Hosts extensions may call at all (patterns as in `allowed_hosts`; `*` for any). An
    /// outgoing call must be allowed by the extension and by the operator.
    pub outbound_hosts: Vec<String>,
    /// Whether extensions may call loopback, private, link-local and similar addresses.
    pub outbound_private: bool,
    /// Where the key ring that seals the instances' secrets comes from.
    pub secrets_key: SecretsKey,
    /// The memory of a call whose extension asks for none (`memory_mb`), and the most one may
    /// ask for.
    pub memory_bytes: usize,
    pub max_memory_bytes: usize,
    /// Where compiled components are kept by content hash; by default `compiled` in the data
    /// directory. Processes may share one (an artifact is written aside and renamed).
    pub compiled_dir: Option<PathBuf>,
    /// The CPU budget of a call whose extension sets none (`cpu_ms`), and the most one may set.
    pub cpu_budget: Duration,
    pub max_cpu_budget: Duration,
    /// The guest threads (`fair/threads.rs`): how many (0: one per core), and how many nice
    /// steps below the API they run.
    pub guest_threads: usize,
    pub guest_nice: u8,
}

/// Where the secrets key ring comes from (`secrets::keys`).
#[derive(Clone, Default)]
pub struct SecretsKey {
    /// The ring itself (`HERALD_SECRETS_KEY`: base64 keys separated by commas), before any file.
    pub text: Option<String>,
    /// The key file; by default `secrets.key` in the data directory.
    pub file: Option<PathBuf>,
}

impl std::fmt::Debug for SecretsKey {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        // Never the keys.
        f.debug_struct("SecretsKey").field("text", &self.text.as_ref().map(|_| "<set>")).field("file", &self.file).finish()
    }
}

impl SecretsKey {
    /// The key ring, the key file created when needed.
    pub fn load(&self, data_dir: &Path) -> anyhow::Result<crate::secrets::KeyRing> {
        let file = self.file.clone().unwrap_or_else(|| data_dir.join("secrets.key"));
        crate::secrets::KeyRing::load(self.text.as_deref(), &file)
    }
}

impl Default for RuntimeSettings {
    fn default() -> RuntimeSettings {
        RuntimeSettings {
            default_timeout: Duration::from_secs(30),
            max_timeout: Duration::from_secs(300),
            outbound_hosts: vec!["*".into()],
            outbound_private: false,
            secrets_key: SecretsKey::default(),
            memory_bytes: engine::DEFAULT_MEMORY_BYTES,
            max_memory_bytes: engine::DEFAULT_MAX_MEMORY_BYTES,
            compiled_dir: None,
            cpu_budget: DEFAULT_CPU_BUDGET,
            max_cpu_budget: Duration::from_millis(config::MAX_CPU_MS),
            guest_threads: 0,
            guest_nice: DEFAULT_GUEST_NICE,
        }
    }
}

/// The CPU budget of a call whose extension sets none: generous for any language's start (a
/// JavaScript or Python component's first call takes tens of milliseconds), and a bound on what
/// one call can take from the node's share of its instance.
pub const DEFAULT_CPU_BUDGET: Duration = Duration::from_secs(10);
/// How many nice steps below the API the guest threads run (as queued work does).
pub const DEFAULT_GUEST_NICE: u8 = 10;

pub struct Runtime {
    engine: Engine,
    /// The server's clock, given to every call.
    clock: Arc<dyn crate::clock::Clock>,
    linker: Linker<CallState>,
    artifacts: PathBuf,
    prepared: moka::future::Cache<String, Prepared>,
    /// What `prepared` holds, for the lookup at every call without `moka`'s books (see
    /// `ReadCache`): `prepared` still loads each component once however many calls ask at the
    /// same time. A component's content never changes under its hash: nothing here goes stale.
    ready: ReadCache<Prepared>,
    pub(crate) settings: RuntimeSettings,
    compilations: AtomicU64,
    logs: logs::LogWriter,
    stop_ticker: Arc<AtomicBool>,
    pub pooling: bool,
    /// The flows, told of what extensions do (wired once the flows exist: they need the queue,
    /// which needs this runtime).
    triggers: std::sync::OnceLock<Arc<dyn crate::domain::triggers::Triggers>>,
    /// Seals and opens the instances' secrets.
    secrets: crate::secrets::KeyRing,
    /// The headers authheader extensions made, while they last.
    headers: authorize::HeaderCache,
    /// The idle instances of extensions that opted into reuse.
    warm: Arc<warm::WarmPool>,
    /// The operator's outbound hosts (`settings.outbound_hosts`), shared by every call's store.
    operator_hosts: Arc<[String]>,
    /// The http extensions calls named, by instance and path segment.
    call_targets: call_targets::CallTargets,
    /// The node's turns on the guest threads, shared between instances, and the threads.
    fair: Arc<fair::FairShare>,
    guests: fair::GuestThreads,
    /// Where each instance's usage is counted (wired by the server; none in local runs).
    usage: std::sync::OnceLock<Arc<crate::limits::usage::UsageBooks>>,
}

impl Drop for Runtime {
    fn drop(&mut self) {
        self.stop_ticker.store(true, Ordering::Relaxed);
    }
}

impl Runtime {
    pub fn new(data_dir: &Path, settings: RuntimeSettings, clock: Arc<dyn crate::clock::Clock>) -> anyhow::Result<Arc<Runtime>> {
        let (engine, pooling) = engine::build(settings.max_memory_bytes)?;
        let mut linker = Linker::new(&engine);
        wasmtime_wasi::p2::add_to_linker_async(&mut linker)?;
        wasmtime_wasi_http::p2::add_only_http_to_linker_async(&mut linker)?;
        host::add_to_linker(&mut linker)?;
        let secrets = settings.secrets_key.load(data_dir)?;
        let stop_ticker = Arc::new(AtomicBool::new(false));
        engine::spawn_ticker(engine.clone(), stop_ticker.clone());
        let warm = Arc::new(warm::WarmPool::default());
        warm.spawn_sweeper(stop_ticker.clone());
        let artifacts = settings.compiled_dir.clone().unwrap_or_else(|| data_dir.join("compiled"));
        std::fs::create_dir_all(&artifacts)?;
        let operator_hosts = Arc::from(settings.outbound_hosts.as_slice());
        let guests = fair::GuestThreads::start(settings.guest_threads, settings.guest_nice)?;
        let kick = engine.clone();
        let fair = Arc::new(fair::FairShare::new(guests.threads(), move || {
            kick.increment_epoch();
        }));
        Ok(Arc::new(Runtime {
            engine,
            clock,
            linker,
            artifacts,
            prepared: moka::future::Cache::builder().max_capacity(1000).build(),
            ready: ReadCache::new(Duration::MAX, 1000),
            settings,
            compilations: AtomicU64::new(0),
            logs: logs::LogWriter::spawn(),
            stop_ticker,
            pooling,
            triggers: std::sync::OnceLock::new(),
            secrets,
            headers: authorize::HeaderCache::new(),
            warm,
            operator_hosts,
            call_targets: Default::default(),
            fair,
            guests,
            usage: std::sync::OnceLock::new(),
        }))
    }

    /// Counts every production execution into `books` from now on.
    pub fn wire_usage(&self, books: Arc<crate::limits::usage::UsageBooks>) {
        let _ = self.usage.set(books);
    }

    /// The server's clock.
    pub fn clock(&self) -> &Arc<dyn crate::clock::Clock> {
        &self.clock
    }

    /// What starts flows when an extension achieves an event (once wired).
    pub fn triggers(&self) -> Option<&Arc<dyn crate::domain::triggers::Triggers>> {
        self.triggers.get()
    }

    /// The key ring of the instances' secrets.
    pub fn secrets(&self) -> &crate::secrets::KeyRing {
        &self.secrets
    }

    /// Forgets the authorization headers made for an instance (its secrets changed).
    pub fn forget_headers(&self, customer_id: &str) {
        self.headers.forget_instance(customer_id);
    }

    /// Lets extensions' achieved events and created recipients start flows.
    pub fn wire_triggers(&self, triggers: Arc<dyn crate::domain::triggers::Triggers>) {
        let _ = self.triggers.set(triggers);
    }

    /// Writes the successful executions' logs still gathering (a graceful stop, once the
    /// listeners have drained: `logs.rs`).
    pub async fn flush_execution_logs(&self) {
        self.logs.flush().await;
    }

    /// How many times this process compiled a component (a restart should need none).
    pub fn compilations(&self) -> u64 {
        self.compilations.load(Ordering::Relaxed)
    }

    fn artifact(&self, sha256: &str) -> PathBuf {
        self.artifacts.join(format!("{sha256}.cwasm"))
    }

    /// Checks an uploaded extension (compiling it on the blocking pool) and stores its
    /// precompiled artifact; the error is for the customer.
    pub async fn validate(
        self: &Arc<Self>,
        wasm: Bytes,
        kind: ExtensionKind,
        sha256: &str,
    ) -> anyhow::Result<Result<ExtensionConfig, String>> {
        let (runtime, sha256) = (Arc::clone(self), sha256.to_string());
        tokio::task::spawn_blocking(move || {
            // The same content compiled before (uploaded again, or by another instance) is
            // checked from its artifact: the checks read the component's type, not its code.
            let compiled = runtime.compiled(&sha256);
            let fresh = compiled.is_none();
            if fresh {
                runtime.compilations.fetch_add(1, Ordering::Relaxed);
            }
            match validate::validate(&runtime.engine, &runtime.linker, &wasm, kind, compiled) {
                Ok(validated) if validated.config.memory_bytes().is_some_and(|asked| asked > runtime.settings.max_memory_bytes) => {
                    Ok(Err(format!(
                        "'memory_mb' asks for {} MiB; this server lets an extension have at most {} MiB",
                        validated.config.memory_mb.unwrap_or_default(),
                        runtime.settings.max_memory_bytes >> 20
                    )))
                }
                Ok(validated) if validated.config.cpu_ms.is_some_and(|ms| Duration::from_millis(ms) > runtime.settings.max_cpu_budget) => {
                    Ok(Err(format!(
                        "'cpu_ms' asks for {} ms of processor time a call; this server lets an extension have at most {} ms",
                        validated.config.cpu_ms.unwrap_or_default(),
                        runtime.settings.max_cpu_budget.as_millis()
                    )))
                }
                Ok(validated) => {
                    if fresh {
                        runtime.write_artifact(&sha256, &validated.component)?;
                    }
                    Ok(Ok(validated.config))
                }
                Err(message) => Ok(Err(message)),
            }
        })
        .await?
    }

    /// The compiled component of this content, when its artifact is there.
    fn compiled(&self, sha256: &str) -> Option<Component> {
        // SAFETY: as in `load`: an artifact this runtime (or another sharing the directory)
        // wrote from a component it compiled itself, checked by wasmtime for its engine.
        #[allow(unsafe_code)]
        unsafe { Component::deserialize_file(&self.engine, self.artifact(sha256)) }.ok()
    }

    /// Keeps a compiled component by content hash, written aside and renamed so that a reader
    /// (this process, or another sharing the directory) never sees half of it. The aside name is
    /// the writer's own (process and write), as two runtimes of one process may share the folder.
    fn write_artifact(&self, sha256: &str, component: &Component) -> anyhow::Result<()> {
        static WRITES: AtomicU64 = AtomicU64::new(0);
        let write = WRITES.fetch_add(1, Ordering::Relaxed);
        let temp = self.artifacts.join(format!("{sha256}.tmp{}-{write}", std::process::id()));
        std::fs::write(&temp, component.serialize()?)?;
        std::fs::rename(&temp, self.artifact(sha256))?;
        Ok(())
    }

    /// The prepared extension of this content, from memory, or else from the artifact cache, or
    /// compiled as a last resort (an upload through another node, or a lost cache). The component
    /// comes from the instance's database, where every node finds it (`TenantDb::put_extension`
    /// stores it with the extension's record, in one transaction).
    pub async fn prepare(self: &Arc<Self>, sha256: &str, db: &TenantDb) -> anyhow::Result<Prepared> {
        if let Some(prepared) = self.ready.get(sha256) {
            return Ok(prepared);
        }
        // Boxed: see `crate::cold`.
        crate::cold::boxed(self.prepare_uncached(sha256, db)).await
    }

    /// `prepare` of a component not in the cache of ready ones.
    async fn prepare_uncached(self: &Arc<Self>, sha256: &str, db: &TenantDb) -> anyhow::Result<Prepared> {
        // Loaded once however many calls ask at the same time (or found in `prepared`).
        let (runtime, sha) = (Arc::clone(self), sha256.to_string());
        let prepared = self
            .prepared
            .try_get_with(sha256.to_string(), async move {
                let wasm = db
                    .extension_content(&sha)
                    .await?
                    .ok_or_else(|| anyhow::anyhow!("the component {sha} is missing from the instance's store"))?;
                tokio::task::spawn_blocking(move || runtime.load(&sha, &wasm)).await?
            })
            .await
            .map_err(|e: Arc<anyhow::Error>| anyhow::anyhow!("{e:#}"))?;
        self.ready.insert(sha256, prepared.clone(), Instant::now());
        Ok(prepared)
    }

    fn load(&self, sha256: &str, wasm: &[u8]) -> anyhow::Result<Prepared> {
        let artifact = self.artifact(sha256);
        // SAFETY: the artifact was written by this runtime (`validate` or below) into the
        // operator's data directory, from a component it compiled itself; wasmtime also checks
        // that it was produced by a compatible engine before using it.
        #[allow(unsafe_code)]
        let component = match unsafe { Component::deserialize_file(&self.engine, &artifact) } {
            Ok(c) => c,
            Err(_) => {
                self.compilations.fetch_add(1, Ordering::Relaxed);
                let c = Component::new(&self.engine, wasm)?;
                self.write_artifact(sha256, &c)?;
                c
            }
        };
        let config = config::read(wasm).map_err(anyhow::Error::msg)?;
        let instance = self.linker.instantiate_pre(&component)?;
        let http = ProxyPre::new(instance.clone()).ok();
        Ok(Prepared::new(config, instance, http, sha256))
    }

    /// A component given as a file (not an instance's upload), checked as an upload of its type
    /// would be, for a local run: its type is the one whose export it has, unless `kind` says.
    /// Its compiled artifact is kept like an upload's, so the next run of the same file starts
    /// at once.
    pub async fn load_file(
        self: &Arc<Self>,
        wasm: Vec<u8>,
        kind: Option<ExtensionKind>,
    ) -> anyhow::Result<Result<(Prepared, ExtensionKind), String>> {
        let sha256 = {
            use sha2::Digest as _;
            format!("{:x}", sha2::Sha256::digest(&wasm))
        };
        let kind = match kind {
            Some(kind) => kind,
            None => {
                let (runtime, bytes, sha) = (Arc::clone(self), wasm.clone(), sha256.clone());
                let found = tokio::task::spawn_blocking(move || runtime.kind_of(&bytes, &sha)).await??;
                match found {
                    Ok(kind) => kind,
                    Err(message) => return Ok(Err(message)),
                }
            }
        };
        if let Err(message) = self.validate(Bytes::from(wasm.clone()), kind, &sha256).await? {
            return Ok(Err(message));
        }
        let (runtime, sha) = (Arc::clone(self), sha256.clone());
        let prepared = tokio::task::spawn_blocking(move || runtime.load(&sha, &wasm)).await??;
        Ok(Ok((prepared, kind)))
    }

    /// The type of extension a component is, from the export it has (compiled once; its artifact
    /// is kept for `validate`).
    fn kind_of(&self, wasm: &[u8], sha256: &str) -> anyhow::Result<Result<ExtensionKind, String>> {
        if !wasmparser::Parser::is_component(wasm) {
            return Ok(Err("the file is not a WebAssembly component".into()));
        }
        let component = match self.compiled(sha256) {
            Some(component) => component,
            None => {
                let component = match Component::new(&self.engine, wasm) {
                    Ok(c) => c,
                    Err(e) => return Ok(Err(format!("the component does not compile: {e:#}"))),
                };
                self.compilations.fetch_add(1, Ordering::Relaxed);
                self.write_artifact(sha256, &component)?;
                component
            }
        };
        let exports: Vec<String> = component.component_type().exports(&self.engine).map(|(name, _)| name.to_string()).collect();
        let found = ExtensionKind::ALL.into_iter().find(|kind| exports.iter().any(|e| e.starts_with(kind.required_export())));
        Ok(found.ok_or_else(|| {
            format!(
                "the component exports none of the interfaces of an extension type ({}); it exports {}",
                ExtensionKind::names(),
                exports.join(", ")
            )
        }))
    }

    /// The deadline of a call to an extension with this configuration.
    pub fn deadline(&self, config: &ExtensionConfig) -> Duration {
        config.timeout_ms.map(Duration::from_millis).unwrap_or(self.settings.default_timeout).min(self.settings.max_timeout)
    }

    /// The CPU budget of a call to an extension with this configuration: its own `cpu_ms`, or the
    /// operator's default, within the operator's maximum.
    pub fn cpu_budget(&self, config: &ExtensionConfig) -> Duration {
        config.cpu_ms.map(Duration::from_millis).unwrap_or(self.settings.cpu_budget).min(self.settings.max_cpu_budget)
    }

    /// The deadline of an asynchronous execution: the extension's own timeout, or else the
    /// queue's execution limit, never beyond that limit.
    pub fn deadline_within(&self, config: &ExtensionConfig, limit: Duration) -> Duration {
        config.timeout_ms.map(Duration::from_millis).unwrap_or(limit).min(limit)
    }

    /// The prepared extension `id` (its decoded path under the extensions area, without `.wasm`)
    /// of the instance, if it exists and is of `kind`.
    pub async fn extension(self: &Arc<Self>, tenant: &Tenant, id: &str, kind: ExtensionKind) -> anyhow::Result<Option<Prepared>> {
        Ok(self.extension_read_at(tenant, id, kind).await?.map(|(extension, _)| extension))
    }

    /// `extension`, with when its record was read.
    async fn extension_read_at(
        self: &Arc<Self>,
        tenant: &Tenant,
        id: &str,
        kind: ExtensionKind,
    ) -> anyhow::Result<Option<(Prepared, Instant)>> {
        let file = format!("{id}.wasm");
        let Ok(path) = RelPath::normalized("extension", &file) else { return Ok(None) };
        let (Some(record), read) = tenant.db.extension_read_at(&path).await? else { return Ok(None) };
        if record.kind() != Some(kind) {
            return Ok(None);
        }
        Ok(Some((self.prepare(&record.sha256, &tenant.db).await?, read)))
    }

    /// The decoded id and the prepared http extension that a call's path segment `raw_id`
    /// named on an earlier call of the instance, while that still holds (`call_targets.rs`).
    pub fn http_call_target(&self, tenant: &Tenant, raw_id: &str) -> Option<(String, Prepared)> {
        self.call_targets.get(tenant, raw_id)
    }

    /// The http extension `id` that a call's path segment `raw_id` names (`id` is `raw_id`
    /// decoded), kept for the calls after it (`http_call_target`); `None` when there is no
    /// such http extension.
    pub async fn http_extension_named(self: &Arc<Self>, tenant: &Tenant, raw_id: &str, id: &str) -> anyhow::Result<Option<Prepared>> {
        // Taken before the record is read: a write meanwhile makes the entry stale at once.
        let stamp = tenant.db.extension_records_stamp();
        let Some((extension, read)) = self.extension_read_at(tenant, id, ExtensionKind::Http).await? else { return Ok(None) };
        if call_targets::is_plain_spelling(raw_id, id) {
            self.call_targets.insert(tenant, raw_id, stamp, read, id, &extension);
        }
        Ok(Some(extension))
    }

    /// The prepared http extension `id` of the instance; `None` when there is no such http
    /// extension.
    pub async fn http_extension(self: &Arc<Self>, tenant: &Tenant, id: &str) -> anyhow::Result<Option<Prepared>> {
        self.extension(tenant, id, ExtensionKind::Http).await
    }
}

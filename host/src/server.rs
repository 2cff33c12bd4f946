//! Starting and stopping a server: open the stores, create the demo on first start, bind the
//! listeners, serve until asked to stop, then drain in-flight requests.

use std::net::SocketAddr;
use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

use anyhow::Context;
use tokio::net::TcpListener;
use tokio::sync::watch;
use tokio::task::JoinHandle;

use crate::auth::Authenticator;
use crate::clock::Clock;
use crate::connections::{self, ConnectionSettings, InFlight};
use crate::flows::FlowEngine;
use crate::http::{api_router, extensions_router, ApiContext, ApiServices};
use crate::limits::CallsInFlightScope;
use crate::limits::{ConcurrencyLimiter, DailyCounters, Limits, RateSettings, CONCURRENT_CALLS_PER_INSTANCE};
use crate::queue::{JobKinds, Queue, QueueSettings, Workers};
use crate::runtime::{Runtime, RuntimeSettings};
use crate::store::node_pool::PoolSettings;
use crate::store::{Backend, ControlDb};
use crate::tenants::{demo, OpenInstances, Tenants};

/// What a server needs to start.
#[derive(Clone)]
pub struct ServerConfig {
    /// The media area, compiled extensions, and (without `database_url`) the SQLite databases.
    pub data_dir: PathBuf,
    /// A `postgres://` URL: the control plane and the instances' data live there, shared by
    /// every node that names it.
    pub database_url: Option<String>,
    /// Address of the REST API (`{base_url}`).
    pub listen: String,
    /// Optional second address for the open extensions endpoint (`{extensions_base_url}`).
    pub extensions_listen: Option<String>,
    /// Optional operator address: `/metrics`, `/healthz`, `/readyz` (`ops`). Metrics are recorded
    /// only when it is set.
    pub ops_listen: Option<String>,
    /// Create the demo instances on the first start on an empty store.
    pub demo: bool,
    /// How often instance definitions are checked for changes made by other processes.
    pub refresh_interval: Duration,
    /// The clock of paging documents and daily caps (a manual one in tests).
    pub clock: Arc<dyn Clock>,
    /// Rate smoothing.
    pub rate: RateSettings,
    /// Extension calls: default and maximum deadlines.
    pub runtime: RuntimeSettings,
    /// Asynchronous executions: workers, report threshold, execution limit, retention.
    pub queue: QueueSettings,
    /// Timeouts and the cap on open connections of each listener.
    pub connections: ConnectionSettings,
    /// Bytes each instance's media area may take (`assets::quota`).
    pub media_quota: u64,
    /// How many instances are open at once, and for how long an idle one stays open.
    pub open_instances: OpenInstances,
    /// PostgreSQL: the node's connections and how long a use waits for one.
    pub pool: PoolSettings,
    /// PostgreSQL: where an instance's 20 calls in flight are counted (`--calls-in-flight-scope`).
    pub calls_in_flight_scope: CallsInFlightScope,
    /// The largest body of a bulk import (`--import-max-mb`).
    pub import_max_bytes: u64,
}

/// The default media quota of an instance: 1 GiB.
pub const DEFAULT_MEDIA_QUOTA: u64 = 1024 * 1024 * 1024;

/// A server that is serving.
pub struct RunningServer {
    pub addr: SocketAddr,
    pub extensions_addr: Option<SocketAddr>,
    pub ops_addr: Option<SocketAddr>,
    /// Whether the demo instances and credentials exist on this server.
    pub demo: bool,
    shutdown: watch::Sender<bool>,
    servers: Vec<JoinHandle<std::io::Result<()>>>,
    background: Vec<JoinHandle<()>>,
    daily: Arc<DailyCounters>,
    usage: Arc<crate::limits::usage::UsageBooks>,
    runtime: Arc<Runtime>,
    queue: Arc<Queue>,
}

/// How often this node adds its usage counts to the books, and measures its open instances'
/// storage.
const USAGE_FLUSH: Duration = Duration::from_secs(5);
const STORAGE_SAMPLE: Duration = Duration::from_secs(600);

pub async fn start(config: ServerConfig) -> anyhow::Result<RunningServer> {
    std::fs::create_dir_all(&config.data_dir).with_context(|| format!("cannot create the data directory {}", config.data_dir.display()))?;
    let backend = Backend::new(&config.data_dir, config.database_url.as_deref())?.with_pool(config.pool.clone());
    let control = ControlDb::open(&backend).await.context("opening the control database")?;
    let demo = if config.demo { demo::ensure(&control).await? } else { false };
    let tenants = Tenants::load(control.clone(), config.open_instances.clone()).await?;
    if demo {
        demo::share_welcome(&tenants).await?;
    }
    let auth = Arc::new(Authenticator::new(control.clone()).await?);
    let daily = Arc::new(DailyCounters::new(control.clone()));
    let usage = Arc::new(crate::limits::usage::UsageBooks::new(control.clone()));
    let runtime = Runtime::new(&config.data_dir, config.runtime.clone(), config.clock.clone())?;
    runtime.wire_usage(usage.clone());
    let data_dir: Arc<std::path::Path> = Arc::from(config.data_dir.as_path());
    // The kinds of queued work: the queue runs flow runs and monitor runs, and they enqueue
    // through the queue, so they register once it exists.
    let job_kinds = JobKinds::default();
    // The API's calls in flight, counted by its listeners, which queued work gives way to.
    let api_calls = Arc::new(InFlight::new(config.queue.give_way_at));
    let workers = Workers { tenants: tenants.clone(), runtime: runtime.clone(), kinds: job_kinds.clone(), api_calls: api_calls.clone() };
    let (queue, queue_tasks) = Queue::start(control.clone(), config.clock.clone(), config.queue.clone(), workers).await?;
    // On PostgreSQL the limit of calls in flight is each instance's across every node.
    let mut concurrency = ConcurrencyLimiter::new(CONCURRENT_CALLS_PER_INSTANCE);
    if backend.is_postgres() && config.calls_in_flight_scope == CallsInFlightScope::Cluster {
        concurrency = concurrency.across_nodes(control.clone(), queue.node());
    }
    let limits = Arc::new(Limits { concurrency, daily: daily.clone(), rate: config.rate, usage: usage.clone() });
    let flows = Arc::new(FlowEngine {
        tenants: tenants.clone(),
        runtime: runtime.clone(),
        queue: queue.clone(),
        data_dir: data_dir.clone(),
        clock: config.clock.clone(),
        control: control.clone(),
    });
    job_kinds.register(crate::flows::JOB_KIND, flows.clone());
    let monitor_runs =
        crate::monitors::MonitorRuns { tenants: tenants.clone(), runtime: runtime.clone(), execution_limit: config.queue.execution_limit };
    job_kinds.register(crate::monitors::JOB_KIND, Arc::new(monitor_runs));
    runtime.wire_triggers(flows.clone());
    let schedule_every = (config.queue.poll_interval * 5).clamp(Duration::from_millis(100), Duration::from_secs(10));
    let scheduler = crate::flows::schedule::spawn(flows.clone(), schedule_every);
    let monitors = Arc::new(crate::monitors::MonitorScheduler {
        tenants: tenants.clone(),
        runtime: runtime.clone(),
        queue: queue.clone(),
        control: control.clone(),
        clock: config.clock.clone(),
    });
    let monitor_scheduler = crate::monitors::spawn(monitors, schedule_every);
    let ctx = ApiContext::new(ApiServices {
        data_dir,
        tenants: tenants.clone(),
        auth,
        clock: config.clock.clone(),
        limits,
        runtime: runtime.clone(),
        queue: queue.clone(),
        flows,
        open_on_api: config.extensions_listen.is_none(),
        media_quota: config.media_quota,
        import_max_bytes: config.import_max_bytes,
    });

    let (shutdown, signal) = watch::channel(false);
    let listener = TcpListener::bind(&config.listen).await.with_context(|| format!("cannot listen on {}", config.listen))?;
    let addr = listener.local_addr()?;
    if config.ops_listen.is_some() {
        // The recorder exists before the routers, which time calls only when it does.
        crate::ops::metrics::handle();
    }
    let mut servers = vec![serve(listener, api_router(ctx.clone()), config.connections, Some(api_calls.clone()), signal.clone())];
    let mut extensions_addr = None;
    if let Some(ext) = &config.extensions_listen {
        let listener = TcpListener::bind(ext).await.with_context(|| format!("cannot listen on {ext}"))?;
        extensions_addr = Some(listener.local_addr()?);
        servers.push(serve(listener, extensions_router(ctx), config.connections, Some(api_calls.clone()), signal.clone()));
    }
    let mut ops_addr = None;
    if let Some(ops) = &config.ops_listen {
        crate::ops::metrics::handle();
        let listener = TcpListener::bind(ops).await.with_context(|| format!("cannot listen on {ops}"))?;
        ops_addr = Some(listener.local_addr()?);
        let ops_ctx = crate::ops::OpsContext {
            control: control.clone(),
            tenants: tenants.clone(),
            daily: daily.clone(),
            usage: usage.clone(),
            clock: config.clock.clone(),
        };
        servers.push(serve(listener, crate::ops::router(ops_ctx), config.connections, None, signal.clone()));
    }
    let mut background = vec![
        tenants.spawn_refresher(config.refresh_interval),
        daily.spawn_flusher(Duration::from_secs(1)),
        usage.spawn_flusher(USAGE_FLUSH),
        crate::ops::usage::spawn_storage_sampler(tenants.clone(), usage.clone(), STORAGE_SAMPLE),
    ];
    background.extend(queue_tasks);
    background.push(scheduler);
    background.push(monitor_scheduler);
    tracing::info!(%addr, ?extensions_addr, ?ops_addr, instances = tenants.stats().known, pooling_allocator = runtime.pooling, "herald is serving");
    Ok(RunningServer { addr, extensions_addr, ops_addr, demo, shutdown, servers, background, daily, usage, runtime, queue })
}

fn serve<S: connections::App>(
    listener: TcpListener,
    app: S,
    settings: ConnectionSettings,
    in_flight: Option<Arc<InFlight>>,
    signal: watch::Receiver<bool>,
) -> JoinHandle<std::io::Result<()>> {
    tokio::spawn(connections::serve(listener, app, settings, in_flight, signal))
}

/// A server dropped without `stop` ends at once: it stops serving and its background work ends.
impl Drop for RunningServer {
    fn drop(&mut self) {
        self.servers.iter().for_each(|task| task.abort());
        self.background.iter().for_each(|task| task.abort());
    }
}

impl RunningServer {
    /// How many components this server compiled (a restart should serve from the cache).
    pub fn compilations(&self) -> u64 {
        self.runtime.compilations()
    }

    /// Stops accepting connections, lets in-flight requests finish, and returns.
    pub async fn stop(mut self) -> anyhow::Result<()> {
        let _ = self.shutdown.send(true);
        for s in std::mem::take(&mut self.servers) {
            s.await.context("server task")??;
        }
        for task in std::mem::take(&mut self.background) {
            task.abort();
        }
        // The calls answered before the stop have their logs kept, not only those written by
        // the time the process ends.
        self.runtime.flush_execution_logs().await;
        // Calls counted since the last flush still count after a restart.
        self.daily.flush().await.context("saving the daily call counts")?;
        self.usage.flush().await.context("saving the usage books")?;
        if let Err(e) = self.queue.leave().await {
            tracing::warn!(error = %e, "this node could not leave the list of live nodes");
        }
        Ok(())
    }
}

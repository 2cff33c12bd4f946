//! The command line: every setting is a flag and an environment variable.

pub mod authoring;
pub mod env_sample;
pub mod usage;

use std::path::PathBuf;

use clap::{Args, Parser, Subcommand, ValueEnum};

#[derive(Debug, Parser)]
#[command(name = "herald", version, about = "Herald: a marketing-automation platform server")]
pub struct Cli {
    #[command(subcommand)]
    pub command: Command,
    /// How log lines are written to standard error: `text` for people, `json` (one object a
    /// line, with the request id of the call it belongs to) for log shippers.
    #[arg(long, env = "HERALD_LOG_FORMAT", value_enum, default_value = "text", global = true)]
    pub log_format: LogFormat,
}

#[derive(Debug, Clone, Copy, ValueEnum)]
pub enum LogFormat {
    Text,
    Json,
}

#[derive(Debug, Args, Clone)]
pub struct StoreArgs {
    /// Where the embedded store and the media area live.
    #[arg(long, env = "HERALD_DATA_DIR", default_value = "data", global = true)]
    pub data_dir: PathBuf,
    /// A postgres:// URL; absent means the embedded SQLite store in the data directory.
    #[arg(long, env = "HERALD_DATABASE_URL", global = true)]
    pub database_url: Option<String>,
}

#[derive(Debug, Subcommand)]
pub enum Command {
    /// Serve the REST API (on the first start on an empty store, with the demo instances).
    Serve(ServeArgs),
    /// Define instances and their data model.
    Instance {
        #[command(subcommand)]
        command: InstanceCommand,
    },
    /// Manage API credentials.
    Credentials {
        #[command(subcommand)]
        command: CredentialsCommand,
    },
    /// Fill an instance with generated recipients (with a progress bar).
    Seed(SeedArgs),
    /// Write an instance's recipients (all, or those a filter selects) as CSV or NDJSON, with a
    /// progress bar.
    Export(ExportArgs),
    /// Import recipients from a CSV or NDJSON file (upserts by a key field), with a progress bar.
    Import(ImportArgs),
    /// What each instance's extensions used, per day: processor time, executions by outcome,
    /// outbound traffic, rows written, storage (what an operator bills from).
    Usage(usage::UsageArgs),
    /// Tools for extension authors.
    Extension {
        #[command(subcommand)]
        command: ExtensionCommand,
    },
    /// Manage an instance's secrets (read by its authheader extensions only; values are never
    /// shown).
    Secrets {
        #[command(subcommand)]
        command: SecretsCommand,
    },
}

#[derive(Debug, Subcommand)]
pub enum ExtensionCommand {
    /// Write (or show) a component's `herald:config` section: how an extension built by a tool that
    /// cannot add a custom section (componentize-js, componentize-py) is configured. Each option
    /// changes only what it names; a component without a section gets the safe defaults for the
    /// rest (secure, synchronous, no network, the operator's deadline).
    Config(ConfigArgs),
    /// Write a ready project for a new extension (build script, SDK, wit/, a test).
    New(authoring::NewArgs),
    /// Upload an extension file to a running Herald (create, or replace with --replace) and print
    /// the URL to call it at.
    Deploy(authoring::DeployArgs),
    /// Run an extension file locally against an instance of the data directory, with the
    /// production runtime: a step, condition, monitor or authheader once (the answer, its log
    /// and what it wrote, as JSON), an http extension once or as a local server.
    Run(authoring::RunArgs),
    /// Run a new version of an extension on the input of a recorded failed execution and show
    /// both outcomes (a dry run unless --apply).
    Replay(authoring::ReplayArgs),
}

#[derive(Debug, Args)]
pub struct ConfigArgs {
    /// The component.
    pub input: PathBuf,
    /// Where to write the configured component (required unless --show).
    #[arg(short, long, required_unless_present = "show")]
    pub output: Option<PathBuf>,
    /// Print the component's configuration (JSON) and write nothing.
    #[arg(long, conflicts_with = "output")]
    pub show: bool,
    /// Called through the open endpoint, without credentials. (Each flag changes only what it
    /// names: the component's other settings are kept.)
    #[arg(long)]
    pub open: bool,
    /// Answered 202 at once and run from the queue.
    #[arg(long = "async")]
    pub asynchronous: bool,
    /// A host it may call (repeat for several; `*.example.com` for subdomains); replaces the list.
    #[arg(long = "allowed-host")]
    pub allowed_hosts: Vec<String>,
    /// Its own deadline in milliseconds.
    #[arg(long)]
    pub timeout_ms: Option<u64>,
    /// The memory a call may use, in MiB (within the operator's maximum).
    #[arg(long)]
    pub memory_mb: Option<u64>,
    /// The processor time a call may use, in milliseconds (within the operator's maximum; time
    /// waiting for I/O does not count).
    #[arg(long)]
    pub cpu_ms: Option<u64>,
    /// An authheader's host (repeat for several).
    #[arg(long = "bound-host")]
    pub bound_hosts: Vec<String>,
    /// A monitor's schedule: `every 5m`, or five-field cron in UTC.
    #[arg(long)]
    pub schedule: Option<String>,
    /// A monitor's alert: the event achieved when its status changes...
    #[arg(long, requires = "alert_recipient")]
    pub alert_event: Option<String>,
    /// ... for the recipient with this Recipient Id.
    #[arg(long, requires = "alert_event")]
    pub alert_recipient: Option<String>,
    /// An http extension's opt-in to instance reuse: one instance serves up to this many calls.
    #[arg(long)]
    pub reuse_calls: Option<u64>,
    /// ... and is dropped after this many seconds without a call (default 60).
    #[arg(long, requires = "reuse_calls")]
    pub reuse_idle_seconds: Option<u64>,
}

impl ConfigArgs {
    /// The section's JSON, as an author would write it: `existing` (the component's configuration
    /// now) with only the members these flags name changed, so that setting one keeps the others.
    pub fn json(&self, existing: serde_json::Value) -> serde_json::Value {
        let mut json = match existing {
            serde_json::Value::Object(_) => existing,
            _ => serde_json::json!({}),
        };
        if self.open {
            json["open"] = true.into();
        }
        if self.asynchronous {
            json["async"] = true.into();
        }
        if !self.allowed_hosts.is_empty() {
            json["allowed_hosts"] = self.allowed_hosts.clone().into();
        }
        if let Some(ms) = self.timeout_ms {
            json["timeout_ms"] = ms.into();
        }
        if let Some(mb) = self.memory_mb {
            json["memory_mb"] = mb.into();
        }
        if let Some(ms) = self.cpu_ms {
            json["cpu_ms"] = ms.into();
        }
        if !self.bound_hosts.is_empty() {
            json["bound_hosts"] = self.bound_hosts.clone().into();
        }
        if let Some(schedule) = &self.schedule {
            json["schedule"] = schedule.clone().into();
        }
        if let (Some(event), Some(recipient)) = (&self.alert_event, &self.alert_recipient) {
            // A Recipient Id that reads as a number is one.
            let recipient = recipient
                .parse::<f64>()
                .ok()
                .and_then(serde_json::Number::from_f64)
                .map_or_else(|| recipient.clone().into(), serde_json::Value::Number);
            json["alert"] = serde_json::json!({"event": event, "recipient": recipient});
        }
        if let Some(calls) = self.reuse_calls {
            json["reuse_calls"] = calls.into();
        }
        if let Some(seconds) = self.reuse_idle_seconds {
            json["reuse_idle_seconds"] = seconds.into();
        }
        json
    }
}

/// Where the key ring that seals secrets is. The ring itself may instead be given in the
/// environment, `HERALD_SECRETS_KEY` (base64 keys separated by commas; never a flag, which
/// other users of the machine could read).
#[derive(Debug, Args, Clone)]
pub struct SecretsKeyArgs {
    /// The key file (one base64 key a line, the first seals); by default `secrets.key` in the
    /// data directory, created on the first start. Every node sharing a database needs the same.
    #[arg(long, env = "HERALD_SECRETS_KEY_FILE", global = true)]
    pub secrets_key_file: Option<PathBuf>,
}

impl SecretsKeyArgs {
    pub fn settings(&self) -> crate::runtime::SecretsKey {
        crate::runtime::SecretsKey { text: std::env::var("HERALD_SECRETS_KEY").ok(), file: self.secrets_key_file.clone() }
    }
}

/// The instance whose secrets a command acts on, and where its store and key ring are.
#[derive(Debug, Args)]
pub struct InstanceSecrets {
    #[command(flatten)]
    pub store: StoreArgs,
    #[command(flatten)]
    pub key: SecretsKeyArgs,
    /// The instance (customerId).
    #[arg(long)]
    pub instance: String,
}

#[derive(Debug, Subcommand)]
pub enum SecretsCommand {
    /// List an instance's secrets: names and when they were set.
    List(InstanceSecrets),
    /// Set a secret; its value is read from standard input (one line, or all of it), never
    /// from the command line.
    Set {
        #[command(flatten)]
        target: InstanceSecrets,
        name: String,
    },
    /// Delete a secret.
    Delete {
        #[command(flatten)]
        target: InstanceSecrets,
        name: String,
    },
    /// Seal again with the key ring's first key every secret of every instance sealed with
    /// another (after a new key was put first in every node's ring).
    Rotate {
        #[command(flatten)]
        store: StoreArgs,
        #[command(flatten)]
        key: SecretsKeyArgs,
    },
}

/// How extensions run: the same flags for the server and for an author's local runs, so that a
/// local run has exactly the production limits.
#[derive(Debug, Args)]
pub struct ExtensionRuntimeArgs {
    #[command(flatten)]
    pub secrets_key: SecretsKeyArgs,
    /// Hosts extensions may call (comma-separated, `*.domain` for subdomains, `*` for any);
    /// each extension must also declare the host it calls.
    #[arg(long, env = "HERALD_OUTBOUND_HOSTS", default_value = "*", value_delimiter = ',')]
    pub outbound_hosts: Vec<String>,
    /// MiB of memory a call of an extension may use when the extension asks for no other amount
    /// (`memory_mb` in its configuration).
    #[arg(long, env = "HERALD_EXTENSION_MEMORY_MB", default_value_t = 64, value_parser = clap::value_parser!(u64).range(1..=4096))]
    pub extension_memory_mb: u64,
    /// The most MiB an extension may ask for (an upload asking for more is refused).
    #[arg(long, env = "HERALD_MAX_EXTENSION_MEMORY_MB", default_value_t = 256, value_parser = clap::value_parser!(u64).range(1..=4096))]
    pub max_extension_memory_mb: u64,
    /// Milliseconds of processor time a call of an extension may use when the extension asks
    /// for no other budget (`cpu_ms` in its configuration); waiting for I/O does not count.
    #[arg(long, env = "HERALD_EXTENSION_CPU_MS", default_value_t = 10_000, value_parser = clap::value_parser!(u64).range(1..=300_000))]
    pub extension_cpu_ms: u64,
    /// The most milliseconds of processor time an extension may ask for (an upload asking for
    /// more is refused).
    #[arg(long, env = "HERALD_MAX_EXTENSION_CPU_MS", default_value_t = 300_000, value_parser = clap::value_parser!(u64).range(1..=300_000))]
    pub max_extension_cpu_ms: u64,
    /// Threads that run extensions, apart from the API's (0: one per core); each is one turn of
    /// the fair share between instances.
    #[arg(long, env = "HERALD_GUEST_THREADS", default_value_t = 0)]
    pub guest_threads: usize,
    /// How many nice steps below the API the threads that run extensions run (0 to 19).
    #[arg(long, env = "HERALD_GUEST_NICE", default_value_t = crate::runtime::DEFAULT_GUEST_NICE, value_parser = clap::value_parser!(u8).range(0..=19))]
    pub guest_nice: u8,
    /// Let extensions call loopback, private and link-local addresses.
    #[arg(long, env = "HERALD_OUTBOUND_PRIVATE")]
    pub outbound_private: bool,
    /// Where compiled extensions are kept, by their content's hash (default: `compiled` in the
    /// data directory). Servers and local runs on one machine may share one folder, so that a
    /// component compiled by one is not compiled again by the next.
    #[arg(long, env = "HERALD_COMPILED_DIR")]
    pub compiled_dir: Option<PathBuf>,
}

impl ExtensionRuntimeArgs {
    pub fn settings(&self) -> crate::runtime::RuntimeSettings {
        crate::runtime::RuntimeSettings {
            outbound_hosts: self.outbound_hosts.clone(),
            outbound_private: self.outbound_private,
            secrets_key: self.secrets_key.settings(),
            memory_bytes: (self.extension_memory_mb.min(self.max_extension_memory_mb) as usize) << 20,
            max_memory_bytes: (self.max_extension_memory_mb as usize) << 20,
            compiled_dir: self.compiled_dir.clone(),
            cpu_budget: std::time::Duration::from_millis(self.extension_cpu_ms.min(self.max_extension_cpu_ms)),
            max_cpu_budget: std::time::Duration::from_millis(self.max_extension_cpu_ms),
            guest_threads: self.guest_threads,
            guest_nice: self.guest_nice,
            ..Default::default()
        }
    }
}

#[derive(Debug, Args)]
pub struct ServeArgs {
    #[command(flatten)]
    pub store: StoreArgs,
    #[command(flatten)]
    pub extensions: ExtensionRuntimeArgs,
    /// Address of the REST API ({base_url}).
    #[arg(long, env = "HERALD_LISTEN", default_value = "127.0.0.1:8080")]
    pub listen: String,
    /// Optional second address for the open extensions endpoint ({extensions_base_url}).
    #[arg(long, env = "HERALD_EXTENSIONS_LISTEN")]
    pub extensions_listen: Option<String>,
    /// Optional operator address for `/metrics` (Prometheus), `/healthz` and `/readyz`; never
    /// serve it where the public can reach it.
    #[arg(long, env = "HERALD_OPS_LISTEN")]
    pub ops_listen: Option<String>,
    /// Do not create the demo instances on the first start.
    #[arg(long, env = "HERALD_NO_DEMO")]
    pub no_demo: bool,
    /// Sustained calls per second allowed to one credential; 0 (the default) smooths no credential
    /// (the specification's limits, calls in flight and the daily cap, still hold).
    #[arg(long, env = "HERALD_RATE_PER_CREDENTIAL", default_value_t = 0)]
    pub rate_per_credential: u32,
    /// Calls one credential may make in a burst.
    #[arg(long, env = "HERALD_BURST_PER_CREDENTIAL", default_value_t = 200, value_parser = clap::value_parser!(u32).range(1..))]
    pub burst_per_credential: u32,
    /// Sustained calls per second allowed to one client address on the token and open endpoints.
    #[arg(long, env = "HERALD_RATE_PER_ADDRESS", default_value_t = 10, value_parser = clap::value_parser!(u32).range(1..))]
    pub rate_per_address: u32,
    /// Calls one client address may make in a burst on the token and open endpoints.
    #[arg(long, env = "HERALD_BURST_PER_ADDRESS", default_value_t = 30, value_parser = clap::value_parser!(u32).range(1..))]
    pub burst_per_address: u32,
    /// Seconds a connection may take to send a complete request head; also how long an idle
    /// keep-alive connection stays open.
    #[arg(long, env = "HERALD_HEADER_TIMEOUT", default_value_t = 30, value_parser = clap::value_parser!(u64).range(1..=3600))]
    pub header_timeout: u64,
    /// Seconds a request body may go without sending a byte before the request fails.
    #[arg(long, env = "HERALD_BODY_TIMEOUT", default_value_t = 30, value_parser = clap::value_parser!(u64).range(1..=3600))]
    pub body_timeout: u64,
    /// Connections open at once on each listener; past it the server accepts no more until one
    /// closes (keep it below the process's file descriptor limit, `ulimit -n`).
    #[arg(long, env = "HERALD_MAX_CONNECTIONS", default_value_t = 4096, value_parser = clap::value_parser!(u64).range(1..=1_000_000))]
    pub max_connections: u64,
    /// Megabytes each instance's files (media area, committed templates, extension files) may
    /// take on this node's disk.
    #[arg(long, env = "HERALD_MEDIA_QUOTA_MB", default_value_t = 1024, value_parser = clap::value_parser!(u64).range(1..=16_777_216))]
    pub media_quota_mb: u64,
    /// Instances open at once on this node (their stores, caches and, on SQLite, up to four
    /// connections each: a thread and two file descriptors a connection). Past it the least
    /// recently used instance that nothing is using is put to sleep; the next call opens it
    /// again (about 2 ms). Any number of instances can exist: a sleeping one costs
    /// under 2 KiB of memory. Raise it with `ulimit -n` (9 descriptors an open instance).
    #[arg(long, env = "HERALD_MAX_OPEN_INSTANCES", default_value_t = crate::tenants::DEFAULT_MAX_OPEN as u64, value_parser = clap::value_parser!(u64).range(1..=100_000))]
    pub max_open_instances: u64,
    /// Seconds an open instance may go unused before it is put to sleep.
    #[arg(long, env = "HERALD_INSTANCE_IDLE_TIMEOUT", default_value_t = 60, value_parser = clap::value_parser!(u64).range(1..=86_400))]
    pub instance_idle_timeout: u64,
    /// PostgreSQL: connections this node opens, for the control plane (a quarter, at least 2)
    /// and every instance together (an instance takes at most three quarters of the rest at
    /// once). The default lets three nodes share a default PostgreSQL (`max_connections` 100).
    #[arg(long, env = "HERALD_DATABASE_MAX_CONNECTIONS", default_value_t = crate::store::node_pool::DEFAULT_MAX_CONNECTIONS, value_parser = clap::value_parser!(u32).range(3..=10_000))]
    pub database_max_connections: u32,
    /// PostgreSQL: seconds a call waits for a connection before it is answered 503 with
    /// `Retry-After`.
    #[arg(long, env = "HERALD_DATABASE_ACQUIRE_TIMEOUT", default_value_t = 5, value_parser = clap::value_parser!(u64).range(1..=600))]
    pub database_acquire_timeout: u64,
    /// Megabytes of request bodies one instance may have waiting in the asynchronous queue; past
    /// it asynchronous calls answer 429 until its jobs have run.
    #[arg(long, env = "HERALD_ASYNC_BACKLOG_MB", default_value_t = 1024, value_parser = clap::value_parser!(u64).range(1..=16_777_216))]
    pub async_backlog_mb: u64,
    /// Asynchronous extension executions at once in this process.
    #[arg(long, env = "HERALD_ASYNC_WORKERS", default_value_t = 16, value_parser = clap::value_parser!(u32).range(1..=1024))]
    pub async_workers: u32,
    /// How many steps of scheduling priority (nice) below the API the threads of queued work run:
    /// asynchronous executions, flow runs and sweeps, monitors. When both want a core, a call
    /// being answered gets it first; 0 runs them at the API's priority. On PostgreSQL, an
    /// import's database backend takes the same priority while it applies a batch, when the
    /// database runs on this machine and Herald has `CAP_SYS_NICE` (as root does).
    #[arg(long, env = "HERALD_BACKGROUND_NICE", default_value_t = 10, value_parser = clap::value_parser!(u8).range(0..=19))]
    pub background_nice: u8,
    /// Where the threads of queued work run: `shared` (the default) on any core; `own` on cores
    /// of their own (the last half of those the process may use, always leaving one or more to
    /// the API), so that a call being answered never wakes behind a sweep's thread. On two cores
    /// `own` halved a sweep's rate and took a little off the API's tail (BENCHMARKS.md).
    #[arg(long, env = "HERALD_BACKGROUND_CORES", value_enum, default_value = "shared")]
    pub background_cores: BackgroundCores,
    /// From how many API calls being answered at once queued work (asynchronous executions, flow
    /// runs and sweeps, monitors) pauses before its next job or flow node, for 1 to 2 ms at most
    /// (a 1 ms timer), so that those calls' threads find a core free; 0 never pauses. The default is the
    /// cores left to the API (half of them, at least one): 1 on two cores (BENCHMARKS.md).
    #[arg(long, env = "HERALD_BACKGROUND_GIVE_WAY", value_parser = clap::value_parser!(u32).range(0..=1_000_000))]
    pub background_give_way: Option<u32>,
    /// Seconds a status call answers 202 before it reports an unfinished execution (400).
    #[arg(long, env = "HERALD_ASYNC_REPORT_AFTER", default_value_t = 60, value_parser = clap::value_parser!(u64).range(1..))]
    pub async_report_after: u64,
    /// Seconds an asynchronous execution may run before it is ended.
    #[arg(long, env = "HERALD_ASYNC_EXECUTION_LIMIT", default_value_t = 300, value_parser = clap::value_parser!(u64).range(1..))]
    pub async_execution_limit: u64,
    /// Seconds the result of an asynchronous execution is kept.
    #[arg(long, env = "HERALD_ASYNC_RETENTION", default_value_t = 86400, value_parser = clap::value_parser!(u64).range(1..))]
    pub async_retention: u64,
    /// Seconds a node may stay silent before the executions it was running are queued again
    /// by the other nodes sharing its PostgreSQL database.
    #[arg(long, env = "HERALD_NODE_TIMEOUT", default_value_t = 15, value_parser = clap::value_parser!(u64).range(1..))]
    pub node_timeout: u64,
    /// On PostgreSQL, where each instance's 20 calls in flight are counted: `cluster` (across
    /// every node, a lease in the database per call) or `node` (each node alone, which admits 20
    /// per node; for measuring the cost of the other).
    #[arg(long, env = "HERALD_CALLS_IN_FLIGHT_SCOPE", value_enum, default_value = "cluster")]
    pub calls_in_flight_scope: crate::limits::CallsInFlightScope,
    /// Megabytes a bulk import's file may have (`POST /recipients/:import`): the one body not
    /// bound by the 20 MB payload limit. It is stored as it arrives, never held in memory.
    #[arg(long, env = "HERALD_IMPORT_MAX_MB", default_value_t = 1024, value_parser = clap::value_parser!(u64).range(1..=1_048_576))]
    pub import_max_mb: u64,
}

/// Where the threads of queued work run (`--background-cores`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum BackgroundCores {
    Own,
    Shared,
}

#[derive(Debug, Subcommand)]
pub enum InstanceCommand {
    /// Create or update the instances of a definition file (TOML). Idempotent; changes that
    /// would lose data are refused.
    Apply {
        #[command(flatten)]
        store: StoreArgs,
        /// The definition file.
        file: PathBuf,
    },
    /// List the instances.
    List {
        #[command(flatten)]
        store: StoreArgs,
    },
}

#[derive(Debug, Clone, Copy, ValueEnum)]
pub enum ScopeArg {
    /// Public Api: every public operation.
    Public,
    /// App Api: the Register API only (for devices).
    App,
}

#[derive(Debug, Subcommand)]
pub enum CredentialsCommand {
    /// Create a credential; prints the client id and secret once (only a hash is stored). With
    /// several `--instance`, one credential each, a line per instance:
    /// `instance=<customerId> client_id=<id> client_secret=<secret>`.
    Create {
        #[command(flatten)]
        store: StoreArgs,
        /// The instance (customerId); repeat it for a credential in each of several instances.
        #[arg(long, required = true)]
        instance: Vec<String>,
        #[arg(long, value_enum)]
        scope: ScopeArg,
        /// What the credential is for.
        #[arg(long, default_value = "")]
        description: String,
    },
    /// Revoke a credential (takes effect within 30 seconds on every node).
    Revoke {
        #[command(flatten)]
        store: StoreArgs,
        client_id: String,
    },
}

#[derive(Debug, Args)]
pub struct ExportArgs {
    #[command(flatten)]
    pub store: StoreArgs,
    /// The instance (customerId).
    #[arg(long)]
    pub instance: String,
    /// An RSQL filter over Person Data fields (everyone when absent).
    #[arg(long)]
    pub filter: Option<String>,
    /// The Person Data fields to write, comma-separated, in that order (every field when absent).
    #[arg(long)]
    pub fields: Option<String>,
    /// csv or ndjson.
    #[arg(long, default_value = "csv")]
    pub format: String,
    /// The file to write (standard output when absent).
    #[arg(long, short)]
    pub output: Option<PathBuf>,
}

#[derive(Debug, Args)]
pub struct ImportArgs {
    #[command(flatten)]
    pub store: StoreArgs,
    /// The instance (customerId).
    #[arg(long)]
    pub instance: String,
    /// The unique Person Data field that names each row's recipient (the Recipient Id when
    /// absent).
    #[arg(long)]
    pub key: Option<String>,
    /// csv or ndjson (by default, from the file's extension).
    #[arg(long)]
    pub format: Option<String>,
    /// Go on with an import that was interrupted (its id, as printed when it started).
    #[arg(long, conflicts_with = "file")]
    pub resume: Option<String>,
    /// The file: a header row of Person Data field names then a row per recipient (CSV), or a
    /// `{"personData": {...}}` a line (NDJSON).
    pub file: Option<PathBuf>,
}

#[derive(Debug, Args)]
pub struct SeedArgs {
    #[command(flatten)]
    pub store: StoreArgs,
    /// The instance (customerId).
    #[arg(long)]
    pub instance: String,
    /// How many recipients to add.
    #[arg(long)]
    pub count: u64,
}

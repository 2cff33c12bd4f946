//! The subcommands other than `serve`'s server itself: thin wrappers that open the store and call
//! the library.

pub mod authoring;
mod export;
mod import;
mod secrets;
mod usage;

use std::time::Duration;

use anyhow::{bail, Context};

use crate::auth::secret;
use crate::cli::{Command, CredentialsCommand, ExtensionCommand, InstanceCommand, ScopeArg, StoreArgs};
use crate::model::{DefinitionFile, Model};
use crate::server::{self, ServerConfig};
use crate::store::control::NewCredential;
use crate::store::{Backend, ControlDb};
use crate::tenants::{self, demo};

/// The store the flags name: SQLite under the data directory, or PostgreSQL.
pub(crate) fn backend(store: &StoreArgs) -> anyhow::Result<Backend> {
    std::fs::create_dir_all(&store.data_dir).with_context(|| format!("cannot create the data directory {}", store.data_dir.display()))?;
    Backend::new(&store.data_dir, store.database_url.as_deref())
}

pub(crate) async fn control(store: &StoreArgs) -> anyhow::Result<ControlDb> {
    ControlDb::open(&backend(store)?).await.context("opening the control database")
}

/// The control database; on an empty store with the demo instances first, as `serve` would
/// create them, so that a newcomer's first command (seed, a secret, a local run) works in a fresh
/// data directory. A store with instances of its own gets no demo.
pub(crate) async fn control_with_demo(store: &StoreArgs) -> anyhow::Result<ControlDb> {
    let db = control(store).await?;
    demo::ensure(&db).await?;
    Ok(db)
}

/// The instance `customer_id` with its model and store.
pub(crate) async fn open_instance(
    store: &crate::cli::StoreArgs,
    customer_id: &str,
) -> anyhow::Result<(crate::store::ControlDb, crate::tenants::Tenant)> {
    let db = control_with_demo(store).await?;
    let record = db.instance(customer_id).await?.with_context(|| format!("no instance '{customer_id}'"))?;
    let model = crate::model::Model::new(record.model.clone()).map_err(anyhow::Error::msg)?;
    // The store's tables are the server's to create (a server of this version has run on it);
    // these commands only read and write rows.
    let tenant_db = db.open_tenant(customer_id).await?;
    Ok((db, crate::tenants::Tenant::new(record.settings, model, tenant_db, record.revision)))
}

pub async fn run(command: Command) -> anyhow::Result<()> {
    match command {
        Command::Serve(args) => {
            let running = server::start(ServerConfig {
                data_dir: args.store.data_dir.clone(),
                database_url: args.store.database_url.clone(),
                listen: args.listen,
                extensions_listen: args.extensions_listen,
                ops_listen: args.ops_listen,
                demo: !args.no_demo,
                refresh_interval: Duration::from_secs(2),
                clock: std::sync::Arc::new(crate::clock::SystemClock),
                runtime: args.extensions.settings(),
                queue: crate::queue::QueueSettings {
                    workers: args.async_workers as usize,
                    nice: args.background_nice,
                    own_cores: args.background_cores == crate::cli::BackgroundCores::Own,
                    give_way_at: (args.background_give_way)
                        .map_or_else(|| crate::queue::QueueSettings::default().give_way_at, |calls| calls as usize),
                    report_after: Duration::from_secs(args.async_report_after),
                    execution_limit: Duration::from_secs(args.async_execution_limit),
                    retention: Duration::from_secs(args.async_retention),
                    node_timeout: Duration::from_secs(args.node_timeout),
                    max_backlog_bytes: args.async_backlog_mb * 1024 * 1024,
                    ..Default::default()
                },
                connections: crate::connections::ConnectionSettings {
                    header_timeout: Duration::from_secs(args.header_timeout),
                    body_timeout: Duration::from_secs(args.body_timeout),
                    max_connections: args.max_connections as usize,
                },
                media_quota: args.media_quota_mb * 1024 * 1024,
                calls_in_flight_scope: args.calls_in_flight_scope,
                import_max_bytes: args.import_max_mb * 1024 * 1024,
                open_instances: crate::tenants::OpenInstances {
                    max_open: args.max_open_instances as usize,
                    idle_after: Duration::from_secs(args.instance_idle_timeout),
                },
                pool: crate::store::node_pool::PoolSettings {
                    max_connections: args.database_max_connections,
                    acquire_timeout: Duration::from_secs(args.database_acquire_timeout),
                },
                rate: crate::limits::RateSettings {
                    per_credential_per_second: args.rate_per_credential,
                    per_credential_burst: args.burst_per_credential,
                    per_address_per_second: args.rate_per_address,
                    per_address_burst: args.burst_per_address,
                },
            })
            .await?;
            if running.demo {
                print!("{}", demo::banner(&format!("http://{}", running.addr)));
            }
            shutdown_signal().await;
            tracing::info!("shutting down");
            running.stop().await
        }
        Command::Instance { command: InstanceCommand::Apply { store, file } } => {
            let text = std::fs::read_to_string(&file).with_context(|| format!("cannot read {}", file.display()))?;
            let def = DefinitionFile::from_toml(&text).map_err(|e| anyhow::anyhow!("{}: {e}", file.display()))?;
            let db = control(&store).await?;
            for applied in tenants::apply(&db, &def).await? {
                if applied.created {
                    println!("{}: created", applied.customer_id);
                } else if applied.changes.is_empty() {
                    println!("{}: unchanged data model", applied.customer_id);
                } else {
                    println!("{}: {} change(s)", applied.customer_id, applied.changes.len());
                    for c in &applied.changes {
                        println!("  {c:?}");
                    }
                }
            }
            Ok(())
        }
        Command::Instance { command: InstanceCommand::List { store } } => {
            use std::io::Write;
            let db = control(&store).await?;
            // Settings only (no model is read): fast with any number of instances.
            let mut out = std::io::BufWriter::new(std::io::stdout().lock());
            for (settings, revision) in db.instance_settings().await? {
                writeln!(
                    out,
                    "{}\t{}\tdaily cap {}\trevision {}",
                    settings.customer_id,
                    settings.environment.name(),
                    settings.effective_daily_cap(),
                    revision
                )?;
            }
            out.flush()?;
            Ok(())
        }
        Command::Credentials { command: CredentialsCommand::Create { store, instance, scope, description } } => {
            let db = control(&store).await?;
            // Every instance is checked before any credential is made.
            let known: std::collections::HashSet<String> = db.revisions().await?.into_iter().map(|(id, _, _)| id).collect();
            if let Some(missing) = instance.iter().find(|id| !known.contains(id.as_str())) {
                bail!("no instance '{missing}'");
            }
            let scope = match scope {
                ScopeArg::Public => "public",
                ScopeArg::App => "app",
            };
            let made: Vec<(String, String, String)> = instance
                .iter()
                .map(|_| {
                    let (id, secret) = secret::generate();
                    let hash = secret::hash(&secret);
                    (id, secret, hash)
                })
                .collect();
            let rows: Vec<NewCredential> = instance
                .iter()
                .zip(&made)
                .map(|(customer_id, (client_id, _, secret_hash))| NewCredential {
                    client_id,
                    customer_id,
                    secret_hash,
                    scope,
                    description: &description,
                })
                .collect();
            // One transaction: a thousand credentials cost one commit, and none is made if one fails.
            db.insert_credentials(&rows).await?;
            for (customer_id, (id, secret, _)) in instance.iter().zip(&made) {
                if instance.len() == 1 {
                    println!("client_id={id}\nclient_secret={secret}");
                } else {
                    println!("instance={customer_id} client_id={id} client_secret={secret}");
                }
            }
            println!("(the secrets are shown once; only their hashes are stored)");
            Ok(())
        }
        Command::Credentials { command: CredentialsCommand::Revoke { store, client_id } } => {
            let db = control(&store).await?;
            if !db.revoke_credential(&client_id).await? {
                bail!("no active credential '{client_id}'");
            }
            println!("{client_id}: revoked");
            Ok(())
        }
        Command::Extension { command: ExtensionCommand::Config(args) } => {
            let bytes = std::fs::read(&args.input).with_context(|| format!("cannot read {}", args.input.display()))?;
            if args.show {
                let config = crate::runtime::config::read(&bytes).map_err(anyhow::Error::msg)?;
                println!("{}", serde_json::to_string_pretty(&config.to_json())?);
                return Ok(());
            }
            // What the component carries now (a section written by its build, or none), with
            // only what the flags name changed.
            let existing = crate::runtime::config::read(&bytes).map_err(anyhow::Error::msg)?.to_json();
            let config = crate::runtime::config::from_json(&args.json(existing))
                .map_err(|e| anyhow::anyhow!("the configuration is not valid: {e}"))?;
            let written = crate::runtime::config_section::write(&bytes, &config).map_err(anyhow::Error::msg)?;
            let output = args.output.as_ref().expect("clap requires it without --show");
            std::fs::write(output, written).with_context(|| format!("cannot write {}", output.display()))?;
            println!("{}: {}", output.display(), config.to_json());
            Ok(())
        }
        Command::Extension { command: ExtensionCommand::New(args) } => authoring::new::run(&args),
        Command::Extension { command: ExtensionCommand::Deploy(args) } => authoring::deploy::run(args).await,
        Command::Extension { command: ExtensionCommand::Run(args) } => authoring::run::run(args).await,
        Command::Extension { command: ExtensionCommand::Replay(args) } => authoring::replay::run(args).await,
        Command::Secrets { command } => secrets::run(command).await,
        Command::Export(args) => export::run(args).await,
        Command::Import(args) => import::run(args).await,
        Command::Usage(args) => usage::run(args).await,
        Command::Seed(args) => {
            let db = control_with_demo(&args.store).await?;
            let record = db.instance(&args.instance).await?.with_context(|| format!("no instance '{}'", args.instance))?;
            let model = Model::new(record.model).map_err(anyhow::Error::msg)?;
            let tenant = db.open_tenant(&args.instance).await?;
            let added = crate::seed::seed(&tenant, &model, args.count, true).await?;
            println!("{}: added {added} recipients ({} in all)", args.instance, tenant.count_recipients().await?);
            Ok(())
        }
    }
}

async fn shutdown_signal() {
    let ctrl_c = async {
        let _ = tokio::signal::ctrl_c().await;
    };
    #[cfg(unix)]
    let terminate = async {
        match tokio::signal::unix::signal(tokio::signal::unix::SignalKind::terminate()) {
            Ok(mut s) => {
                s.recv().await;
            }
            Err(_) => std::future::pending::<()>().await,
        }
    };
    #[cfg(not(unix))]
    let terminate = std::future::pending::<()>();
    tokio::select! {
        _ = ctrl_c => {},
        _ = terminate => {},
    }
}

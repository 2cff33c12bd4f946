//! `herald import`: a CSV or NDJSON file into an instance's recipients, straight into the store,
//! with a progress bar on standard error and its outcome on standard output. The same import as `POST /recipients/:import`
//! (`crate::imports`): the file is stored first, then written in batches from where the import
//! stands, so an interrupted run goes on with `--resume <importId>`. Creations start no flows
//! here (no queue runs in this process): import through the API for `triggers=created`.

use std::sync::Arc;
use std::time::Duration;

use anyhow::Context;
use indicatif::{ProgressBar, ProgressStyle};
use tokio::io::AsyncReadExt;

use super::open_instance;
use crate::cli::ImportArgs;
use crate::connections::InFlight;
use crate::imports::receive::{receive, Refused};
use crate::imports::{run_import, Format, ImportPlan, ImportWork, Stretch};
use crate::store::tenant::ImportState;

/// Bytes read from the file at a time.
const READ_BYTES: usize = 256 * 1024;

/// The rejected rows shown at the end (all are in `GET /imports/{id}/errors`).
const SHOWN_ERRORS: i64 = 10;

pub async fn run(args: ImportArgs) -> anyhow::Result<()> {
    let (_, tenant) = open_instance(&args.store, &args.instance).await?;
    let tenant = Arc::new(tenant);
    let id = match &args.resume {
        Some(id) => id.clone(),
        None => store_file(&tenant, &args).await?,
    };
    let import = tenant.db.import(&id).await?.with_context(|| format!("no import '{id}' in instance {}", args.instance))?;
    let bar = ProgressBar::new(import.size.max(0) as u64);
    bar.set_style(
        ProgressStyle::with_template("{spinner} [{elapsed_precise}] {wide_bar} {bytes}/{total_bytes} ({bytes_per_sec}) {msg}")
            .expect("valid template"),
    );
    // Nothing else is served by this process: it never pauses for API calls, and its database
    // backend runs at its own priority.
    let api_calls = InFlight::new(0);
    let work = ImportWork { triggers: None, api_calls: &api_calls, budget: Duration::from_millis(500), backend_nice: 0 };
    loop {
        let next = run_import(&work, &tenant, &id).await?;
        if let Some(now) = tenant.db.import(&id).await? {
            bar.set_position(now.next_offset.max(0) as u64);
            bar.set_message(format!("{} rows", now.counts.rows_read));
        }
        match next {
            Stretch::Over => break,
            Stretch::Again(after) => tokio::time::sleep(after).await,
        }
    }
    bar.finish_and_clear();
    let done = tenant.db.import(&id).await?.context("the import is gone")?;
    let c = done.counts;
    println!(
        "{}: import {id} {}: {} rows read, {} created, {} updated, {} rejected",
        args.instance,
        done.state.name(),
        c.rows_read,
        c.created,
        c.updated,
        c.rejected
    );
    for rejected in tenant.db.import_errors(&id, 0, SHOWN_ERRORS).await? {
        println!("  row {}: {}", rejected.row, rejected.message);
    }
    match done.state {
        ImportState::Completed => Ok(()),
        state => anyhow::bail!("the import is {}: {}", state.name(), done.message.unwrap_or_default()),
    }
}

/// Stores the file as a new import; its id.
async fn store_file(tenant: &crate::tenants::Tenant, args: &ImportArgs) -> anyhow::Result<String> {
    let path = args.file.as_ref().context("name the file to import (or --resume an import)")?;
    let format = match args.format.as_deref() {
        Some(name) => Format::parse(name).with_context(|| format!("--format is csv or ndjson, not '{name}'"))?,
        None => match path.extension().and_then(|e| e.to_str()).map(str::to_ascii_lowercase).as_deref() {
            Some("csv") => Format::Csv,
            Some("ndjson" | "jsonl") => Format::Ndjson,
            _ => anyhow::bail!("say --format csv or --format ndjson: {} does not end in .csv or .ndjson", path.display()),
        },
    };
    let plan = ImportPlan::new(&tenant.model, format, args.key.as_deref(), None).map_err(anyhow::Error::msg)?;
    let file = tokio::fs::File::open(path).await.with_context(|| format!("cannot open {}", path.display()))?;
    let chunks = futures_util::stream::unfold(file, |mut file| async move {
        let mut buf = vec![0u8; READ_BYTES];
        match file.read(&mut buf).await {
            Ok(0) => None,
            Ok(n) => {
                buf.truncate(n);
                Some((Ok::<_, std::io::Error>(bytes::Bytes::from(buf)), file))
            }
            Err(e) => Some((Err(e), file)),
        }
    });
    let new = plan.new_import(&tenant.model, crate::queue::Queue::new_id());
    eprintln!("storing {} as import {}", path.display(), new.id);
    receive(tenant, &new, &plan, Box::pin(chunks), u64::MAX).await.map_err(|refused| match refused {
        Refused::Empty => anyhow::anyhow!("{} is empty", path.display()),
        Refused::TooLarge(_) => anyhow::anyhow!("{} is too large", path.display()),
        Refused::Invalid(message) | Refused::Broken(message) => anyhow::anyhow!("{}: {message}", path.display()),
        Refused::Store(e) => anyhow::Error::from(e),
    })?;
    Ok(new.id)
}

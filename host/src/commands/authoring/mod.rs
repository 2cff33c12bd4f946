//! Tools for extension authors: `herald extension new` (a ready project), `run` (an extension
//! file against an instance of a local data directory, through the production runtime) and
//! `replay` (a new version on a recorded failed execution's input).
//!
//! A dry run writes to a copy of the instance's store (`Backend::snapshot_tenant`), lists the
//! changes from the call's journal, and throws the copy away: the real data is never opened for
//! writing, and the execution reads its own writes as it would in production.

pub mod deploy;
pub mod new;
pub mod replay;
pub mod run;

use std::sync::Arc;

use anyhow::Context;
use serde_json::{json, Value as Json};

use crate::cli::authoring::LocalArgs;
use crate::model::Model;
use crate::runtime::{Call, ExtensionKind, Journal, Prepared, Ran, Runtime};
use crate::tenants::Tenant;

/// An instance of the local data directory, opened for a run, with the production runtime.
pub(crate) struct Local {
    pub runtime: Arc<Runtime>,
    pub tenant: Arc<Tenant>,
    /// Where a dry run's copy lives (removed with it).
    _copy: Option<tempfile::TempDir>,
}

impl Local {
    /// Opens `args.instance` (creating the demo instances in an empty data directory); `dry`:
    /// on a copy of its store.
    pub async fn open(args: &LocalArgs, dry: bool) -> anyhow::Result<Local> {
        let backend = crate::commands::backend(&args.store)?;
        let control = crate::commands::control_with_demo(&args.store).await?;
        let record = control.instance(&args.instance).await?.with_context(|| {
            format!("no instance '{}' in {} (`herald instance list` shows them)", args.instance, args.store.data_dir.display())
        })?;
        let model = Model::new(record.model).map_err(anyhow::Error::msg)?;
        let (db, copy) = if dry {
            let copy = tempfile::tempdir().context("creating a directory for the dry run's copy")?;
            (backend.snapshot_tenant(&args.instance, &copy.path().join("data.db")).await?, Some(copy))
        } else {
            (backend.open_tenant(&args.instance).await?, None)
        };
        let tenant = Arc::new(Tenant::new(record.settings, model, db, record.revision));
        let runtime = Runtime::new(&args.store.data_dir, args.runtime.settings(), Arc::new(crate::clock::SystemClock))?;
        Ok(Local { runtime, tenant, _copy: copy })
    }

    /// Loads an extension file (its type from its exports unless `kind` says).
    pub async fn load(&self, file: &std::path::Path, kind: Option<ExtensionKind>) -> anyhow::Result<(Prepared, ExtensionKind)> {
        let wasm = std::fs::read(file).with_context(|| format!("cannot read {}", file.display()))?;
        self.runtime.load_file(wasm, kind).await?.map_err(|message| anyhow::anyhow!("{}: {message}", file.display()))
    }

    /// A call of `extension` for this instance, with a journal.
    pub fn call(&self, extension: Prepared, id: &str, journal: &Journal) -> Call {
        Call {
            deadline: self.runtime.deadline(&extension.config),
            extension,
            id: id.to_string(),
            tenant: Arc::clone(&self.tenant),
            context: None,
            lineage: Default::default(),
            journal: Some(journal.clone()),
        }
    }
}

/// What a run shows: its outcome, how long it took, its log and output, and what it wrote. The
/// headers an authheader extension made are credentials: shown by name and length only.
pub(crate) fn report(kind: ExtensionKind, ran: &Ran, journal: &Journal, dry_run: bool) -> Json {
    let mut shown = ran.to_json();
    if kind == ExtensionKind::Authheader {
        if let Some(headers) = shown["value"]["headers"].as_array_mut() {
            for header in headers {
                let length = header[1].as_str().map_or(0, str::len);
                header[1] = json!(format!("[secret: {length} characters]"));
            }
        }
    }
    let record = journal.record();
    if let Some(record) = &record {
        shown["durationMs"] = json!(record.duration_ms);
        if let Some(usage) = &record.usage {
            shown["usage"] = json!(usage);
        }
        shown["log"] = json!(record.log);
        if !record.stdout.is_empty() {
            shown["stdout"] = json!(record.stdout);
        }
        if !record.stderr.is_empty() {
            shown["stderr"] = json!(record.stderr);
        }
    }
    shown["changes"] = json!(journal.lines());
    shown["dryRun"] = json!(dry_run);
    shown
}

/// The id a local run's extension goes by: its file name without `.wasm`.
pub(crate) fn file_id(file: &std::path::Path) -> String {
    file.file_stem().map_or_else(|| "extension".to_string(), |s| s.to_string_lossy().into_owned())
}

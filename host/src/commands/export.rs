//! `herald export`: an instance's recipients (all, or those a filter selects) as CSV or NDJSON,
//! straight from the store, to a file or standard output, with a progress bar on standard error.
//! The same formats as `POST /recipients/:export` (`domain::export`).

use std::io::Write;

use anyhow::Context;
use indicatif::{ProgressBar, ProgressStyle};

use super::open_instance;
use crate::cli::ExportArgs;
use crate::domain::export::{self, ExportFormat};

/// Bytes gathered before a write.
const CHUNK_BYTES: usize = 64 * 1024;

pub async fn run(args: ExportArgs) -> anyhow::Result<()> {
    let (_, tenant) = open_instance(&args.store, &args.instance).await?;
    let model = &tenant.model;
    let names: Option<Vec<String>> = args.fields.as_deref().map(|f| f.split(',').map(|n| n.trim().to_string()).collect());
    let fields = export::fields(model, names.as_deref()).map_err(anyhow::Error::msg)?;
    let format = ExportFormat::parse(&args.format).map_err(anyhow::Error::msg)?;
    let condition = crate::domain::filter(args.filter.as_deref(), &model.def, &tenant).map_err(|e| anyhow::anyhow!("the filter: {e}"))?;
    let mut out: Box<dyn Write> = match &args.output {
        Some(path) => {
            Box::new(std::io::BufWriter::new(std::fs::File::create(path).with_context(|| format!("cannot create {}", path.display()))?))
        }
        None => Box::new(std::io::BufWriter::new(std::io::stdout().lock())),
    };
    // Without a filter the total is known; with one, the bar counts what it has written.
    let bar = match condition {
        None => ProgressBar::new(tenant.db.count_recipients().await?.max(0) as u64),
        Some(_) => ProgressBar::no_length(),
    };
    bar.set_style(
        ProgressStyle::with_template("{spinner} [{elapsed_precise}] {wide_bar} {pos}/{len} recipients ({per_sec})")
            .expect("valid template"),
    );
    let mut batches = tenant.db.recipient_batches(model, condition.as_ref());
    let mut buf = Vec::with_capacity(CHUNK_BYTES + 4096);
    export::header(format, model, &fields, &mut buf);
    let mut written = 0u64;
    while let Some(batch) = batches.recv().await {
        for r in &batch? {
            export::row(format, model, &fields, r, &mut buf);
            written += 1;
        }
        if buf.len() >= CHUNK_BYTES {
            out.write_all(&buf)?;
            buf.clear();
            bar.set_position(written);
        }
    }
    out.write_all(&buf)?;
    out.flush()?;
    bar.finish_and_clear();
    eprintln!("{}: exported {written} recipients", args.instance);
    Ok(())
}

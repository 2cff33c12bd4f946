//! `herald extension replay NEW.wasm --extension ID`: the input of a recorded failed execution
//! of extension ID (kept with its log, `runtime::input`) given to a new version of it, on a copy
//! of the instance's data unless `--apply`; both outcomes printed as JSON.

use anyhow::Context;
use serde_json::json;

use super::{report, Local};
use crate::cli::authoring::ReplayArgs;
use crate::runtime::{Journal, Outcome, RecordedInput};

pub async fn run(args: ReplayArgs) -> anyhow::Result<()> {
    let dry_run = !args.apply;
    let local = Local::open(&args.local, dry_run).await?;
    let entries = local.tenant.db.execution_logs(&args.extension, 100).await?;
    let recorded =
        entries.iter().filter(|e| e.input.is_some()).find(|e| args.at.is_none_or(|at| e.at == at)).with_context(|| match args.at {
            Some(at) => format!("extension '{}' has no recorded execution at {at} with its input", args.extension),
            None => format!(
                "extension '{}' of instance '{}' has no failed execution recorded with its input (only failed ones keep it)",
                args.extension,
                local.tenant.customer_id()
            ),
        })?;
    let input: RecordedInput =
        serde_json::from_str(recorded.input.as_deref().unwrap_or_default()).context("the recorded input cannot be read")?;
    let (extension, kind) = local.load(&args.file, None).await?;
    let journal = Journal::new();
    let call = local.call(extension, &args.extension, &journal);
    let ran = local.runtime.run_input(call, kind, input.clone()).await.map_err(anyhow::Error::msg)?;
    let (before, reason) = Outcome::read_stored(&recorded.outcome);
    let before = before.name();
    let shown = json!({
        "execution": {"at": recorded.at, "outcome": before, "reason": reason, "log": recorded.log},
        "input": input,
        "replayed": report(kind, &ran, &journal, dry_run),
        "difference": if before == ran.name() { format!("same outcome: {before}") } else { format!("{before} before, {} now", ran.name()) },
    });
    println!("{}", serde_json::to_string_pretty(&shown)?);
    Ok(())
}

//! The flags of `herald usage`.

use clap::Args;

use super::StoreArgs;

/// What each instance's extensions used, per UTC day, from the usage books: processor time,
/// executions by outcome, outbound traffic, rows written, storage.
#[derive(Debug, Args)]
pub struct UsageArgs {
    #[command(flatten)]
    pub store: StoreArgs,
    /// One instance only (default: every instance with usage).
    #[arg(long)]
    pub instance: Option<String>,
    /// The first day, YYYY-MM-DD (UTC; default: the last 30 days).
    #[arg(long)]
    pub since: Option<String>,
    /// JSON, a line of the books each, instead of a table.
    #[arg(long)]
    pub json: bool,
}

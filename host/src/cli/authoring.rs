//! The flags of `herald extension new`, `deploy`, `run` and `replay`.

use std::path::PathBuf;

use clap::{Args, ValueEnum};

use super::{ExtensionRuntimeArgs, StoreArgs};

#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum Language {
    Rust,
    Js,
    Python,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum TypeArg {
    Http,
    Step,
    Condition,
    Monitor,
    Authheader,
}

impl TypeArg {
    pub fn kind(self) -> crate::runtime::ExtensionKind {
        use crate::runtime::ExtensionKind as K;
        match self {
            TypeArg::Http => K::Http,
            TypeArg::Step => K::Step,
            TypeArg::Condition => K::Condition,
            TypeArg::Monitor => K::Monitor,
            TypeArg::Authheader => K::Authheader,
        }
    }
}

#[derive(Debug, Args)]
pub struct NewArgs {
    /// The extension's name: letters, digits, `-` and `_` (its file is NAME.wasm).
    pub name: String,
    #[arg(long, value_enum)]
    pub lang: Language,
    #[arg(long = "type", value_enum)]
    pub kind: TypeArg,
    /// Where to write the project (a new or empty directory); by default ./NAME.
    #[arg(long)]
    pub dir: Option<PathBuf>,
    /// An http extension called through the open endpoint, without credentials (a webhook).
    #[arg(long)]
    pub open: bool,
}

/// Where a running Herald is, and with which credential an extension is uploaded to it.
#[derive(Debug, Args)]
pub struct DeployArgs {
    /// The extension file (`NAME.wasm`: its id is NAME, in --folder if given).
    pub file: PathBuf,
    /// The server's base URL (`{base_url}`).
    #[arg(long, env = "HERALD_URL", default_value = "http://127.0.0.1:8080")]
    pub url: String,
    /// The instance's Public Api credential: its client id...
    #[arg(long, env = "HERALD_CLIENT_ID")]
    pub client_id: String,
    /// ... and its secret (from the environment rather than the command line, which other users
    /// of the machine can read).
    #[arg(long, env = "HERALD_CLIENT_SECRET", hide_env_values = true)]
    pub client_secret: String,
    /// The extension's type; by default the one whose export the component has.
    #[arg(long = "type", value_enum)]
    pub kind: Option<TypeArg>,
    /// The folder it goes in (`shop`, `shop/hooks`); the top by default.
    #[arg(long)]
    pub folder: Option<String>,
    /// Replace the extension if it exists (without it, an existing one is an error).
    #[arg(long)]
    pub replace: bool,
}

/// Which instance of which data directory a local run uses, and with what limits.
#[derive(Debug, Args)]
pub struct LocalArgs {
    #[command(flatten)]
    pub store: StoreArgs,
    #[command(flatten)]
    pub runtime: ExtensionRuntimeArgs,
    /// The instance whose data the extension reads and writes (an empty data directory gets the
    /// demo instances first, as `herald serve` does).
    #[arg(long, env = "HERALD_INSTANCE", default_value = "demo")]
    pub instance: String,
}

#[derive(Debug, Args)]
pub struct RunArgs {
    /// The component.
    pub file: PathBuf,
    #[command(flatten)]
    pub local: LocalArgs,
    /// Its type, when the component's exports do not tell (they always do for Herald's worlds).
    #[arg(long = "type", value_enum)]
    pub kind: Option<TypeArg>,
    /// Write to a copy of the instance's data, list the changes, and throw the copy away.
    #[arg(long)]
    pub dry_run: bool,
    /// The input as a recorded execution has it (`input` of `GET /extensions/logs/{id}`), from a
    /// JSON file (`-` for standard input); replaces the options below.
    #[arg(long)]
    pub input: Option<PathBuf>,
    /// Step or condition: the recipient with this Recipient Id, read from the instance...
    #[arg(long, conflicts_with = "recipient")]
    pub recipient_id: Option<f64>,
    /// ... or given as JSON Person Data (`{"USER_ID": 7, "AGE": 40}`).
    #[arg(long)]
    pub recipient: Option<String>,
    /// Step or condition: the contextual data (JSON).
    #[arg(long)]
    pub context: Option<String>,
    /// http: the method of the request (authheader: of the outbound call).
    #[arg(long, default_value = "GET")]
    pub method: String,
    /// http: the path and query of the request (authheader: of the outbound call).
    #[arg(long, default_value = "/")]
    pub path: String,
    /// http: a header `Name: value` (repeat for several).
    #[arg(long = "header")]
    pub headers: Vec<String>,
    /// http: the request body (`@FILE` reads a file).
    #[arg(long)]
    pub body: Option<String>,
    /// authheader: the host of the outbound call.
    #[arg(long, default_value = "api.example.com")]
    pub host: String,
    /// http: serve the extension here (every path) until interrupted, instead of one request.
    #[arg(long, conflicts_with = "input")]
    pub listen: Option<String>,
}

#[derive(Debug, Args)]
pub struct ReplayArgs {
    /// The new version of the extension.
    pub file: PathBuf,
    #[command(flatten)]
    pub local: LocalArgs,
    /// The extension whose recorded execution is replayed: its id written plainly, with its
    /// folder's `/` as it is (`shop/webhook`, not the `shop%252Fwebhook` of a URL).
    #[arg(long)]
    pub extension: String,
    /// The execution (its `at`, in milliseconds); by default the newest one recorded with its input.
    #[arg(long)]
    pub at: Option<i64>,
    /// Keep what the replay writes (by default it writes to a copy that is thrown away).
    #[arg(long)]
    pub apply: bool,
}

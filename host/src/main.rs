//! The `herald` binary: parse the command line, set up logging, run the subcommand.

use std::io::IsTerminal;

use clap::Parser;

// Every extension call allocates and frees a Store, an instance's bookkeeping, its request and
// its response, often on different threads; with mimalloc the extension benchmark served 5% more
// calls per second than with glibc's allocator (bench/extensions.sh: 11993 -> 12570).
#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;

fn main() -> std::process::ExitCode {
    // Errors are reported by their messages, never with a backtrace, yet with RUST_BACKTRACE set
    // every error captures one; wasmtime makes (and drops) an error each time a call's store is
    // dropped, and capturing its backtrace was about 7% of an extension call (perf). Panics still print
    // their backtrace (that follows RUST_BACKTRACE alone). Set before any thread exists.
    if std::env::var_os("RUST_LIB_BACKTRACE").is_none() {
        std::env::set_var("RUST_LIB_BACKTRACE", "0");
    }
    // The threads that answer calls take a core promptly when they wake (scheduling.rs).
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .on_thread_start(herald_host::scheduling::prompt_turns)
        .enable_all()
        .build()
        .expect("the tokio runtime starts");
    runtime.block_on(run())
}

async fn run() -> std::process::ExitCode {
    let cli = herald_host::cli::Cli::parse();
    let json = matches!(cli.log_format, herald_host::cli::LogFormat::Json);
    herald_host::ops::logs::init(json, std::io::stderr().is_terminal());
    match herald_host::commands::run(cli.command).await {
        Ok(()) => std::process::ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("error: {e:#}");
            std::process::ExitCode::FAILURE
        }
    }
}

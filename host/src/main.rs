//! The `herald` binary: parse the command line, set up logging, run the subcommand.

use std::io::IsTerminal;

use clap::Parser;

// Every extension call allocates and frees a Store, an instance's bookkeeping, its request and
// its response, often on different threads; with mimalloc the extension benchmark served 5% more
// calls per second than with glibc's allocator (bench/extensions.sh: 11993 -> 12570).
#[global_allocator]
static ALLOCATOR: Mimalloc = Mimalloc;

/// mimalloc, asked for an alignment only when a type needs more than every block has. The
/// `mimalloc` crate's allocator passes every layout's alignment to `mi_malloc_aligned`, whose
/// fast path (mimalloc 3) takes a small block only when the next free one happens to be aligned
/// and otherwise over-allocates, marking the page as holding interior pointers: an extension call
/// made about 78 allocations, 12 of them over-allocated, for about 4,600 instructions
/// (`bench/instructions.sh`). Every mimalloc block is a multiple of a word from a page aligned to
/// 16 bytes, so plain `mi_malloc` meets any alignment up to a word's.
struct Mimalloc;

/// The alignment every block of `mi_malloc` has.
const WORD: usize = std::mem::size_of::<usize>();

// SAFETY: each function hands the layout's size (and, past a word, its alignment) to mimalloc's
// matching function, and mimalloc frees what it allocated whatever function made it.
#[allow(unsafe_code)]
unsafe impl std::alloc::GlobalAlloc for Mimalloc {
    #[inline]
    unsafe fn alloc(&self, layout: std::alloc::Layout) -> *mut u8 {
        if layout.align() <= WORD {
            libmimalloc_sys::mi_malloc(layout.size()).cast()
        } else {
            libmimalloc_sys::mi_malloc_aligned(layout.size(), layout.align()).cast()
        }
    }

    #[inline]
    unsafe fn alloc_zeroed(&self, layout: std::alloc::Layout) -> *mut u8 {
        if layout.align() <= WORD {
            libmimalloc_sys::mi_zalloc(layout.size()).cast()
        } else {
            libmimalloc_sys::mi_zalloc_aligned(layout.size(), layout.align()).cast()
        }
    }

    #[inline]
    unsafe fn dealloc(&self, ptr: *mut u8, _layout: std::alloc::Layout) {
        libmimalloc_sys::mi_free(ptr.cast());
    }

    #[inline]
    unsafe fn realloc(&self, ptr: *mut u8, layout: std::alloc::Layout, new_size: usize) -> *mut u8 {
        if layout.align() <= WORD {
            libmimalloc_sys::mi_realloc(ptr.cast(), new_size).cast()
        } else {
            libmimalloc_sys::mi_realloc_aligned(ptr.cast(), new_size, layout.align()).cast()
        }
    }
}

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

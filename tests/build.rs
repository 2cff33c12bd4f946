//! Builds the Rust guest examples (guest-examples/rust) into WebAssembly components for the tests,
//! from source, whenever they change. Each becomes a constant path: `GUEST_ECHO`, `GUEST_SPIN`...
//! The nested cargo gets its own target directory, so it never waits on the outer build's lock.

use std::path::PathBuf;
use std::process::Command;

const GUESTS: [&str; 26] = ["echo", "open-webhook", "spin", "bomb", "panic", "sleepy", "fetch", "crm-webhook", "recipient-finder", "open-reader", "step-tagger", "condition-adult", "monitor-ok", "authheader-key", "store-locator", "async-open", "async-secure", "recipient-admin", "hello", "flow-probe", "recent-buyer", "nearest-store", "authheader-oauth", "authheader-leaky", "monitor-http", "crm-call"];

fn main() {
    let manifest = PathBuf::from(std::env::var("CARGO_MANIFEST_DIR").unwrap());
    let guests = manifest.join("../guest-examples/rust");
    let target_dir = PathBuf::from(std::env::var("OUT_DIR").unwrap()).join("guests");
    println!("cargo:rerun-if-changed={}", guests.display());
    // The guests build on the SDK and the WIT package too.
    println!("cargo:rerun-if-changed={}", manifest.join("../sdk").display());
    println!("cargo:rerun-if-changed={}", manifest.join("../wit").display());
    let cargo = std::env::var("CARGO").unwrap_or_else(|_| "cargo".into());
    let mut build = Command::new(cargo);
    build
        .args(["build", "--release", "--target", "wasm32-wasip2", "--manifest-path"])
        .arg(guests.join("Cargo.toml"))
        .arg("--target-dir")
        .arg(&target_dir);
    // The outer build's settings are for the host, not for the guests.
    for var in ["RUSTFLAGS", "CARGO_ENCODED_RUSTFLAGS", "CARGO_TARGET_DIR", "CARGO_BUILD_TARGET", "RUSTC_WORKSPACE_WRAPPER"] {
        build.env_remove(var);
    }
    let status = build.status().expect("cargo runs");
    if !status.success() {
        panic!("building the guest examples failed (is the target installed? `rustup target add wasm32-wasip2`)");
    }
    for guest in GUESTS {
        let wasm = target_dir.join("wasm32-wasip2/release").join(format!("{}.wasm", guest.replace('-', "_")));
        assert!(wasm.exists(), "{} was not built", wasm.display());
        println!("cargo:rustc-env=GUEST_{}={}", guest.replace('-', "_").to_uppercase(), wasm.display());
    }
}

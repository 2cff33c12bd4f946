//! Builds the Rust guest examples (guest-examples/rust) into WebAssembly components for the tests,
//! from source, whenever they change. Each becomes a constant path: `GUEST_ECHO`, `GUEST_SPIN`...
//! The nested cargo gets its own target directory, so it never waits on the outer build's lock.
//! Then the JavaScript and Python examples (guest-examples/js, guest-examples/python) are built
//! with componentize-js and componentize-py (installed by scripts/guest-tools.sh, pinned), each
//! against its world of `wit/`: `GUEST_JS_SHOP_WEBHOOK`, `GUEST_PY_SHOP_WEBHOOK`... A scripted guest
//! whose inputs did not change since its last build is not built again.

use std::collections::hash_map::DefaultHasher;
use std::hash::{Hash, Hasher};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};

/// The host's one writer of custom sections (a build script cannot depend on the host crate).
#[path = "../host/src/runtime/custom_section.rs"]
mod custom_section;

const GUESTS: [&str; 30] = [
    "echo",
    "open-webhook",
    "spin",
    "bomb",
    "panic",
    "sleepy",
    "fetch",
    "crm-webhook",
    "recipient-finder",
    "open-reader",
    "step-tagger",
    "condition-adult",
    "monitor-ok",
    "monitor-bare",
    "authheader-key",
    "store-locator",
    "async-open",
    "async-secure",
    "recipient-admin",
    "hello",
    "flow-probe",
    "recent-buyer",
    "nearest-store",
    "authheader-oauth",
    "authheader-leaky",
    "monitor-http",
    "crm-call",
    "counter",
    "signature-probe",
    "busy",
];

fn main() {
    let manifest = PathBuf::from(std::env::var("CARGO_MANIFEST_DIR").unwrap());
    let guests = manifest.join("../guest-examples/rust");
    let target_dir = PathBuf::from(std::env::var("OUT_DIR").unwrap()).join("guests");
    println!("cargo:rerun-if-changed={}", guests.display());
    // The guests build on the SDK and the WIT package too.
    println!("cargo:rerun-if-changed={}", manifest.join("../sdk").display());
    println!("cargo:rerun-if-changed={}", manifest.join("../wit").display());
    println!("cargo:rerun-if-changed={}", manifest.join("../host/src/runtime/custom_section.rs").display());
    for scripted in ["../guest-examples/js", "../guest-examples/python", "../scripts/guest-tools.sh"] {
        println!("cargo:rerun-if-changed={}", manifest.join(scripted).display());
    }
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
    build_scripted(&manifest.join(".."), &PathBuf::from(std::env::var("OUT_DIR").unwrap()).join("scripted"));
}

/// (language, example, world, open): the JavaScript and Python examples.
const SCRIPTED: [(&str, &str, &str, bool); 8] = [
    ("js", "shop-webhook", "open-http-extension", true),
    ("js", "recipient-finder", "http-extension", false),
    ("js", "adult-condition", "condition-extension", false),
    ("js", "tagger-step", "step-extension", false),
    ("py", "shop_webhook", "open-http-extension", true),
    ("py", "recipient_finder", "http-extension", false),
    ("py", "adult_condition", "condition-extension", false),
    ("py", "tagger_step", "step-extension", false),
];

fn build_scripted(root: &Path, out: &Path) {
    std::fs::create_dir_all(out).unwrap();
    let tools = Command::new("bash").arg(root.join("scripts/guest-tools.sh")).stderr(Stdio::inherit()).output().expect("bash runs");
    assert!(
        tools.status.success(),
        "installing componentize-js and componentize-py failed (scripts/guest-tools.sh): is Node with npm and Python 3 with venv there?"
    );
    let tools = PathBuf::from(String::from_utf8(tools.stdout).unwrap().trim());
    // The tests that build the projects `herald extension new` writes use the same tools.
    println!("cargo:rustc-env=GUEST_TOOLS={}", tools.display());
    // Every guest whose inputs changed is built at once (each tool is mostly one process).
    let mut building: Vec<(String, PathBuf, PathBuf, u64, bool, Child)> = Vec::new();
    for (language, example, world, open) in SCRIPTED {
        let name = format!("{language}_{}", example.replace('-', "_"));
        let wasm = out.join(format!("{name}.wasm"));
        let stamp = out.join(format!("{name}.inputs"));
        let dir = root.join(if language == "js" { "guest-examples/js" } else { "guest-examples/python" }).join(example);
        let sdk = root.join(if language == "js" { "sdk/js" } else { "sdk/python" });
        let inputs = fingerprint(&[&dir, &sdk, &root.join("wit"), &root.join("scripts/guest-tools.sh")], world);
        println!("cargo:rustc-env=GUEST_{}={}", name.to_uppercase(), wasm.display());
        if wasm.exists() && std::fs::read_to_string(&stamp).ok().as_deref() == Some(inputs.to_string().as_str()) {
            continue;
        }
        let world = format!("herald:platform/{world}");
        let child = if language == "js" {
            // Run from the repository's root: the engine resolves the example's relative imports
            // of sdk/js inside the directory it runs from.
            Command::new(tools.join("js/node_modules/.bin/componentize-js"))
                .current_dir(root)
                .args(["--wit", "wit", "--world-name", &world, "--out"])
                .arg(&wasm)
                .arg(format!("guest-examples/js/{example}/app.js"))
                .stdout(Stdio::piped())
                .stderr(Stdio::piped())
                .spawn()
        } else {
            Command::new(tools.join("py/bin/componentize-py"))
                .current_dir(&dir)
                .arg("-d")
                .arg(root.join("wit"))
                .args(["-w", &world, "componentize", "-p"])
                .arg(&sdk)
                .args(["-p", ".", "app", "-o"])
                .arg(&wasm)
                .stdout(Stdio::piped())
                .stderr(Stdio::piped())
                .spawn()
        }
        .expect("the guest tool runs");
        building.push((name, wasm, stamp, inputs, open, child));
    }
    for (name, wasm, stamp, inputs, open, child) in building {
        let done = child.wait_with_output().expect("the guest tool ends");
        assert!(
            done.status.success(),
            "building {name} failed:\n{}{}",
            String::from_utf8_lossy(&done.stdout),
            String::from_utf8_lossy(&done.stderr)
        );
        if open {
            // What `herald extension config --open` writes, done here without the binary (a build
            // script runs before it exists): a custom section appended at the top level.
            append_config(&wasm, br#"{"open": true}"#);
        }
        std::fs::write(&stamp, inputs.to_string()).unwrap();
    }
}

/// A hash of every file under `paths` (names and contents) and of `extra`.
fn fingerprint(paths: &[&Path], extra: &str) -> u64 {
    fn walk(path: &Path, hasher: &mut DefaultHasher) {
        if path.is_dir() {
            let mut entries: Vec<PathBuf> = std::fs::read_dir(path).unwrap().map(|e| e.unwrap().path()).collect();
            entries.sort();
            for entry in entries.iter().filter(|e| !e.ends_with("__pycache__")) {
                walk(entry, hasher);
            }
        } else if let Ok(bytes) = std::fs::read(path) {
            path.hash(hasher);
            bytes.hash(hasher);
        }
    }
    let mut hasher = DefaultHasher::new();
    for path in paths {
        walk(path, &mut hasher);
    }
    extra.hash(&mut hasher);
    hasher.finish()
}

fn append_config(wasm: &Path, json: &[u8]) {
    let bytes = std::fs::read(wasm).unwrap();
    let bytes = custom_section::set_custom_section(&bytes, "herald:config", json).unwrap();
    std::fs::write(wasm, bytes).unwrap();
}

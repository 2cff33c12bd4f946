#!/usr/bin/env bash
# Runs every test of the project: the format and lint checks (scripts/lint.sh for the guest
# examples, SDKs and templates), the unit tests, the end-to-end suite (real servers on real
# sockets, the CLI as the real `herald` binary, guest components built from source) twice: on
# SQLite in temporary data directories, and on PostgreSQL, each server in a database of its own.
# PostgreSQL is the machine's on 127.0.0.1:5432 when one answers, otherwise a private cluster
# that scripts/postgres.sh installs and starts (and this script stops). Between the two, the API
# against its own OpenAPI documents and the reference page in Chromium (scripts/contract.sh, which
# installs schemathesis, Playwright and Debian's Chromium when they are missing); after the
# PostgreSQL suite, schemathesis again on a server over PostgreSQL (`DATABASE_URL=...
# scripts/contract.sh`).
set -euo pipefail
cd "$(dirname "$0")/.."

# Each part's heading says how long the run has taken so far, so that a slow CI run shows which
# part grew.
run_time() { echo "$((SECONDS / 60))m$((SECONDS % 60))s"; }
section() { echo "== $* (at $(run_time))"; }
elapsed() { echo "== test.sh ended after $(run_time)"; }
trap elapsed EXIT

# What the tests need besides the Rust toolchain: the guest examples build into WebAssembly
# components (tests/build.rs), so the wasm32-wasip2 target (idempotent when it is there).
section "the wasm32-wasip2 target"
if ! rustup target list --installed | grep -qx wasm32-wasip2; then
    rustup target add wasm32-wasip2
fi

# The code's form, before anything runs: rustfmt (rustfmt.toml) and clippy with every warning an
# error, on every target (the tests too). Both are rustup components, added when missing.
# The web console's committed build (host/console/, embedded in the binary) must be what its
# sources (console/) build: npm installs the pinned packages and Vite builds them into a scratch
# folder, compared file by file.
# Commit messages since the rule: a subject of at most 72 characters, a blank line before the body.
section "commit messages"
scripts/commit-subjects.sh

section "the console's build"
scripts/console.sh --check

section "format, lints and the build"
for component in rustfmt clippy; do
    if ! rustup component list --installed | grep -q "^$component"; then
        rustup component add "$component"
    fi
done
cargo fmt --all --check
# Clippy runs inside the build of every target (scripts/clippy-rustc.sh: the same lints as `cargo
# clippy --workspace --all-targets -- -D warnings`), so that the dependencies and the guest examples
# are compiled once rather than once for clippy and once for the tests. Every cargo command below
# keeps the wrapper: Cargo counts it in the workspace crates' fingerprints, and a command without it
# would build them again.
export RUSTC_WORKSPACE_WRAPPER="$PWD/scripts/clippy-rustc.sh"
cargo test --workspace --all-targets --locked --no-run
# The `testing` feature (an unauthenticated route) is the tests' own: a build of the workspace
# without its tests (`cargo build --workspace --release`) must not switch it on.
if cargo tree --workspace --locked -e features,no-dev -i herald-host | grep -q 'feature "testing"'; then
    echo "test.sh: a build of the workspace without its tests switches on herald-host's testing feature" >&2
    exit 1
fi
# The guest examples, the SDKs and the templates of new projects: rustfmt, clippy, ruff, biome.
scripts/lint.sh

section "unit tests and the end-to-end suite on SQLite"
# One folder of compiled components for every server and `herald` process of the run, on both
# backends (`--compiled-dir`): a guest uploaded by many tests is compiled once, not once per test
# server (a JavaScript or Python component takes seconds of both cores).
export HERALD_COMPILED_DIR="$PWD/target/compiled-components"
env -u HERALD_TEST_POSTGRES cargo test --workspace --locked "$@"

section "the API against its OpenAPI documents (schemathesis) and the reference page (Chromium)"
scripts/contract.sh target/debug/herald

section "the end-to-end suite on PostgreSQL"
# The tests of several nodes (tests/it/cluster.rs) put three servers behind HAProxy, from
# Debian's packages.
if ! command -v haproxy >/dev/null 2>&1; then
    sudo=""; [ "$(id -u)" = 0 ] || sudo=sudo
    $sudo apt-get update -qq
    DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq haproxy
fi
url=$(scripts/postgres.sh)
# A second, small private cluster (max_connections 30) for the test of two nodes serving 300
# instances within their connection settings (tests/it/tenancy.rs).
small_cluster() { HERALD_PG_PRIVATE=1 HERALD_PG_DIR="$PWD/target/postgres-small" HERALD_PG_PORT=55433 HERALD_PG_MAX_CONNECTIONS=30 scripts/postgres.sh "$@"; }
trap 'scripts/postgres.sh stop; small_cluster stop; elapsed' EXIT
small=$(small_cluster)
echo "PostgreSQL for the tests: $url (and $small, with max_connections 30)"
HERALD_TEST_POSTGRES="$url" HERALD_TEST_POSTGRES_SMALL="$small" cargo test --locked -p herald-tests "$@"

section "the API against its OpenAPI documents on PostgreSQL (schemathesis)"
DATABASE_URL="$url" scripts/contract.sh target/debug/herald

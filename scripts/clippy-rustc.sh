#!/bin/sh
# The compiler of the workspace's own crates in scripts/test.sh (Cargo's RUSTC_WORKSPACE_WRAPPER):
# clippy's driver, which is rustc with clippy's lints added, with every warning an error. The build
# the tests run is then also the clippy check: `cargo clippy --workspace --all-targets -- -D
# warnings` would compile every dependency a second time (as metadata only) and build the guest
# examples a second time (tests/build.rs runs in either). Dependencies are compiled by plain rustc
# (Cargo applies a workspace wrapper to the workspace's members only).
exec clippy-driver "$@" -D warnings

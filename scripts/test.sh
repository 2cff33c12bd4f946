#!/usr/bin/env bash
# Runs every test of the project: unit tests, the end-to-end suite (real servers on real sockets
# over temporary SQLite data directories) and the CLI tests (the real `herald` binary).
set -euo pipefail
cd "$(dirname "$0")/.."
cargo test --workspace --locked "$@"

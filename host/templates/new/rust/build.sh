#!/usr/bin/env bash
# Builds {{name}}.wasm (a component for wasm32-wasip2; its configuration is in src/lib.rs).
set -euo pipefail
cd "$(dirname "$0")"
rustup target list --installed 2>/dev/null | grep -qx wasm32-wasip2 || rustup target add wasm32-wasip2
cargo build --release --target wasm32-wasip2 --quiet
cp "${CARGO_TARGET_DIR:-target}/wasm32-wasip2/release/{{crate}}.wasm" {{name}}.wasm
echo "built {{name}}.wasm"

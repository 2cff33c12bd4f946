#!/usr/bin/env bash
# Builds the extension and runs it once through Herald's production runtime on a copy of the demo
# instance's data (a data directory of its own, .herald-data, made on the first run); fails
# unless the outcome is `ok`. HERALD: the herald binary (default: the one on PATH).
set -euo pipefail
cd "$(dirname "$0")"
HERALD=${HERALD:-herald}
DATA=${HERALD_DATA_DIR:-.herald-data}
./build.sh
{{prepare}}
"$HERALD" extension run {{name}}.wasm --data-dir "$DATA" --dry-run {{run_flags}}

#!/usr/bin/env bash
# Builds {{name}}.wasm with componentize-py (`pip install componentize-py==0.25.1`;
# COMPONENTIZE_PY names another), then writes its Herald configuration with `herald extension
# config`.
set -euo pipefail
cd "$(dirname "$0")"
"${COMPONENTIZE_PY:-componentize-py}" -d herald/wit -w herald:platform/{{world}} componentize -p herald/sdk -p . app -o {{name}}.wasm >/dev/null
"${HERALD:-herald}" extension config {{name}}.wasm -o {{name}}.wasm {{config_flags}} >/dev/null
echo "built {{name}}.wasm"

#!/usr/bin/env bash
# Builds {{name}}.wasm with componentize-js (installed by `npm install`; COMPONENTIZE_JS names
# another), then writes its Herald configuration with `herald extension config`.
set -euo pipefail
cd "$(dirname "$0")"
if [ -z "${COMPONENTIZE_JS:-}" ]; then
    [ -x node_modules/.bin/componentize-js ] || npm install --silent --no-audit --no-fund
    COMPONENTIZE_JS=node_modules/.bin/componentize-js
fi
"$COMPONENTIZE_JS" --wit herald/wit --world-name herald:platform/{{world}} --out {{name}}.wasm app.js >/dev/null
"${HERALD:-herald}" extension config {{name}}.wasm -o {{name}}.wasm {{config_flags}} >/dev/null
echo "built {{name}}.wasm"

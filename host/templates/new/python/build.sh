#!/usr/bin/env bash
# Builds {{name}}.wasm with componentize-py, then writes its Herald configuration with `herald
# extension config`. componentize-py is the one COMPONENTIZE_PY names, else the one on PATH, else
# the project's own: installed on the first build (from PyPI, pinned) into .venv here.
set -euo pipefail
cd "$(dirname "$0")"
if [ -z "${COMPONENTIZE_PY:-}" ]; then
    if command -v componentize-py >/dev/null 2>&1; then
        COMPONENTIZE_PY=componentize-py
    else
        if [ ! -x .venv/bin/componentize-py ]; then
            echo "installing componentize-py {{componentize_py}} into .venv (once)" >&2
            python3 -m venv .venv
            .venv/bin/pip install --quiet --disable-pip-version-check "componentize-py=={{componentize_py}}"
        fi
        COMPONENTIZE_PY=.venv/bin/componentize-py
    fi
fi
"$COMPONENTIZE_PY" -d herald/wit -w herald:platform/{{world}} componentize -p herald/sdk -p . app -o {{name}}.wasm >/dev/null
"${HERALD:-herald}" extension config {{name}}.wasm -o {{name}}.wasm {{config_flags}} >/dev/null
echo "built {{name}}.wasm"

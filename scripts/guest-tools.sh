#!/usr/bin/env bash
# Installs the tools that build the JavaScript and Python guest examples into target/guest-tools
# (idempotent: a no-op when the pinned versions are there). componentize-py comes from PyPI into a
# virtual environment, componentize-js from npm; both ship their engines in their packages, so
# once installed the builds need no network. tests/build.rs calls this before it builds guests.
set -euo pipefail
cd "$(dirname "$0")/.."
COMPONENTIZE_PY=0.25.1
COMPONENTIZE_JS=0.23.0
TOOLS=${HERALD_GUEST_TOOLS:-$PWD/target/guest-tools}
mkdir -p "$TOOLS"

if [ "$("$TOOLS/py/bin/componentize-py" --version 2>/dev/null)" != "componentize-py $COMPONENTIZE_PY" ]; then
    echo "guest tools: installing componentize-py $COMPONENTIZE_PY (PyPI) into $TOOLS/py" >&2
    rm -rf "$TOOLS/py"
    python3 -m venv "$TOOLS/py"
    "$TOOLS/py/bin/pip" install --quiet --disable-pip-version-check "componentize-py==$COMPONENTIZE_PY"
fi

installed_js=$(node -p "require('$TOOLS/js/node_modules/@bytecodealliance/componentize-js/package.json').version" 2>/dev/null || true)
if [ "$installed_js" != "$COMPONENTIZE_JS" ]; then
    echo "guest tools: installing componentize-js $COMPONENTIZE_JS (npm) into $TOOLS/js" >&2
    rm -rf "$TOOLS/js"
    mkdir -p "$TOOLS/js"
    npm install --silent --no-audit --no-fund --prefix "$TOOLS/js" "@bytecodealliance/componentize-js@$COMPONENTIZE_JS"
fi
echo "$TOOLS"

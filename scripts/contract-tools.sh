#!/usr/bin/env bash
# Installs the tools that check the API's OpenAPI document into target/contract-tools (idempotent:
# a no-op when the pinned versions are there): openapi-spec-validator, which the tests run on the
# served documents, and schemathesis, which tests a running server against them. Both from PyPI
# into a virtual environment; once installed they need no network. Prints the environment's bin/.
set -euo pipefail
cd "$(dirname "$0")/.."
VALIDATOR=0.9.0
SCHEMATHESIS=4.32.5
TOOLS=${HERALD_CONTRACT_TOOLS:-$PWD/target/contract-tools}
mkdir -p "$TOOLS"
if ! "$TOOLS/py/bin/python" -c "import importlib.metadata as m; assert m.version('openapi-spec-validator') == '$VALIDATOR' and m.version('schemathesis') == '$SCHEMATHESIS'" 2>/dev/null; then
    echo "contract tools: installing openapi-spec-validator $VALIDATOR and schemathesis $SCHEMATHESIS (PyPI) into $TOOLS/py" >&2
    rm -rf "$TOOLS/py"
    python3 -m venv "$TOOLS/py"
    "$TOOLS/py/bin/pip" install --quiet --disable-pip-version-check "openapi-spec-validator==$VALIDATOR" "schemathesis==$SCHEMATHESIS"
fi
echo "$TOOLS/py/bin"

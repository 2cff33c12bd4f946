#!/usr/bin/env bash
# Installs what the browser tests need (idempotent): Debian's Chromium (/usr/bin/chromium) and
# Playwright for Python (PyPI) in a virtual environment under target/browser-tools, which drives
# that Chromium (no browser is downloaded). Prints the environment's python.
set -euo pipefail
cd "$(dirname "$0")/.."
PLAYWRIGHT=1.65.2
TOOLS=${HERALD_BROWSER_TOOLS:-$PWD/target/browser-tools}
if [ ! -x /usr/bin/chromium ]; then
    echo "browser tools: installing Chromium (Debian)" >&2
    sudo=""
    [ "$(id -u)" = 0 ] || sudo=sudo
    $sudo apt-get update -qq >&2
    DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq chromium >&2
fi
if ! "$TOOLS/py/bin/python" -c "import importlib.metadata as m; assert m.version('playwright') == '$PLAYWRIGHT'" 2>/dev/null; then
    echo "browser tools: installing playwright $PLAYWRIGHT (PyPI) into $TOOLS/py" >&2
    rm -rf "$TOOLS/py"
    python3 -m venv "$TOOLS/py"
    "$TOOLS/py/bin/pip" install --quiet --disable-pip-version-check "playwright==$PLAYWRIGHT"
fi
echo "$TOOLS/py/bin/python"

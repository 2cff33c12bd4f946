#!/usr/bin/env bash
# The code that extension authors read and copy, under the gates of its own language, as the
# host's code is under rustfmt and clippy (test.sh): the guest examples (guest-examples/), the
# SDKs (sdk/) and the templates of `herald extension new` (host/templates/new/).
#
# - Rust: rustfmt (rustfmt.toml) on the guest examples' workspace, the files they include and the
#   templates; clippy with every warning an error on the guest examples, for wasm32-wasip2 (its
#   own target folder, target/guests-clippy). The templates' clippy runs where they are built,
#   in the test of generated projects (tests/it/author_tools.rs).
# - Python: ruff check and ruff format --check (ruff.toml), ruff from PyPI into target/lint-tools.
# - JavaScript: biome ci (biome.json: its linter's recommended rules and its formatter), from npm
#   (the binary comes as a package of its own) into target/lint-tools.
#
# Idempotent: the pinned tools are installed once. `scripts/lint.sh --fix` formats and applies the
# safe fixes instead of checking.
set -euo pipefail
cd "$(dirname "$0")/.."
RUFF=0.17.6
BIOME=2.6.8
TOOLS=${HERALD_LINT_TOOLS:-$PWD/target/lint-tools}
fix=${1:-}
python_code=(sdk/python guest-examples/python host/templates/new/python)
rust_files=(guest-examples/rust/*.rs host/templates/new/rust/*.rs)

mkdir -p "$TOOLS"
if ! [ -x "$TOOLS/py/bin/ruff" ] || [ "$("$TOOLS/py/bin/ruff" --version)" != "ruff $RUFF" ]; then
    echo "lint: installing ruff $RUFF (PyPI) into $TOOLS/py" >&2
    rm -rf "$TOOLS/py"
    python3 -m venv "$TOOLS/py"
    "$TOOLS/py/bin/pip" install --quiet --disable-pip-version-check "ruff==$RUFF"
fi
biome=$TOOLS/js/node_modules/.bin/biome
if ! [ -x "$biome" ] || [ "$("$biome" --version)" != "Version: $BIOME" ]; then
    command -v npm >/dev/null || { echo "lint.sh: npm is missing (Node.js 20.19 or later)" >&2; exit 1; }
    echo "lint: installing @biomejs/biome $BIOME (npm) into $TOOLS/js" >&2
    rm -rf "$TOOLS/js" && mkdir -p "$TOOLS/js"
    echo '{"private": true}' > "$TOOLS/js/package.json"
    (cd "$TOOLS/js" && npm install --ignore-scripts --no-audit --no-fund --loglevel=error --save-exact "@biomejs/biome@$BIOME")
fi

if [ "$fix" = --fix ]; then
    cargo fmt --manifest-path guest-examples/rust/Cargo.toml --all
    rustfmt --edition 2021 "${rust_files[@]}"
    "$TOOLS/py/bin/ruff" check --fix "${python_code[@]}"
    "$TOOLS/py/bin/ruff" format "${python_code[@]}"
    "$biome" check --write .
    exit 0
fi
echo "lint: rustfmt and clippy on the guest examples and templates"
cargo fmt --manifest-path guest-examples/rust/Cargo.toml --all --check
rustfmt --edition 2021 --check "${rust_files[@]}"
cargo clippy --manifest-path guest-examples/rust/Cargo.toml --workspace --release --locked --target wasm32-wasip2 \
    --target-dir target/guests-clippy --quiet -- -D warnings
echo "lint: ruff on the Python SDK, guest examples and templates"
"$TOOLS/py/bin/ruff" check --quiet "${python_code[@]}"
"$TOOLS/py/bin/ruff" format --check --quiet "${python_code[@]}"
echo "lint: biome on the JavaScript SDK, guest examples and templates"
"$biome" ci --reporter=summary .

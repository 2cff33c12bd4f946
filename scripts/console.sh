#!/usr/bin/env bash
# Builds the web console (console/: Preact, uPlot and cronstrue, type-checked with TypeScript,
# bundled by Vite; exact versions in console/package-lock.json, from the npm registry) into host/console/,
# which the herald binary embeds and serves at /console/. The built files are committed, so
# building Herald needs neither Node nor the network; run this after changing console/, then
# commit host/console/ with the sources.
#
#   scripts/console.sh           build into host/console/
#   scripts/console.sh --check   build into a scratch folder and fail when host/console/ differs
#                                (the test command runs this: the binary must serve what the
#                                sources say)
set -euo pipefail
cd "$(dirname "$0")/.."
out=$PWD/host/console
scratch=
if [ "${1:-}" = --check ]; then
    scratch=$(mktemp -d)
    trap 'rm -rf "$scratch"' EXIT
    out=$scratch/console
fi
command -v npm >/dev/null || { echo "console.sh: npm is missing (Node.js 20.19 or later)" >&2; exit 1; }
(
    cd console
    # Install scripts are not needed (esbuild's binary comes as a package of its own).
    if ! cmp -s package-lock.json node_modules/.herald-installed-lock 2>/dev/null; then
        npm ci --ignore-scripts --no-audit --no-fund --loglevel=error
        cp package-lock.json node_modules/.herald-installed-lock
    fi
    npx --no-install tsc --noEmit
    npx --no-install vite build --logLevel warn --outDir "$out" --emptyOutDir
)
{
    echo "The console bundles these packages (from the npm registry), under these licenses."
    for package in cronstrue preact uplot; do
        version=$(node -p "require('./console/node_modules/$package/package.json').version")
        printf '\n== %s %s\n\n' "$package" "$version"
        cat "console/node_modules/$package/LICENSE"
    done
} > "$out/LICENSES.txt"
if [ -n "$scratch" ]; then
    if ! diff -r host/console "$out" >/dev/null; then
        diff -r host/console "$out" | head -20 >&2 || true
        echo "console.sh: host/console/ is not what console/ builds: run scripts/console.sh and commit host/console/" >&2
        exit 1
    fi
    echo "console.sh: host/console/ is what console/ builds"
else
    echo "console.sh: built into host/console/"
fi

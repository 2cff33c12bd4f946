#!/usr/bin/env bash
# The API against its own description: starts `herald serve` on the embedded default (a fresh
# SQLite data directory, the demo instances), validates the two documents it serves
# (`/openapi.json`, and `/discovery/openapi.json` for the demo instance) with
# openapi-spec-validator, then runs schemathesis on each, authenticated with the demo instance's
# Public Api credential: every operation, the examples, coverage, fuzzing and stateful phases,
# and the checks that no answer is a server error, that every status code, content type, header
# and body is the one the document gives; and renders the reference page (/reference/) in
# headless Chromium with no network but the server's (tests/browser/reference.py: its
# operations, one opened, "Authorize" with the demo credentials and a call tried) and the web
# console (tests/browser/console.py: every page, an upload and a call tried, another instance's
# credential) and against hostile content (tests/browser/hostile.py: another instance's webapp
# opened in a signed-in console's tab gets nothing; HTML and script in data show as text),
# keeping screenshots. Any failure fails the script.
#
#   scripts/contract.sh [HERALD_BINARY]     (default: target/debug/herald, built when missing)
#
# With DATABASE_URL (a PostgreSQL server's URL, as scripts/postgres.sh prints it) the server
# runs on a database of its own there, created for the run and dropped after it, and the
# reports go under postgres/; the reference page (the same files on either backend) is checked
# on SQLite only.
#
# The server's log is kept as server.log beside the reports.
#
# SEED (default fixed, so that a run can be repeated) and EXAMPLES (test cases per operation
# and phase) tune the run; SEED=random draws one, which schemathesis prints.
set -euo pipefail
cd "$(dirname "$0")/.."
herald=${1:-target/debug/herald}
if [ ! -x "$herald" ]; then
    cargo build --locked -p herald-host
    herald=target/debug/herald
fi
tools=$(scripts/contract-tools.sh)
browser_python=
[ -n "${DATABASE_URL:-}" ] || browser_python=$(scripts/browser-tools.sh)
reports=${CONTRACT_REPORTS:-$PWD/target/contract-reports}
seed=${SEED:-20261124}
examples=${EXAMPLES:-50}

dir=$(mktemp -d)
database=()
contract_db=
if [ -n "${DATABASE_URL:-}" ]; then
    contract_db="herald_contract_$$"
    psql "$DATABASE_URL" -qc "CREATE DATABASE $contract_db"
    database=(--database-url "${DATABASE_URL%/*}/$contract_db")
    reports="$reports/postgres"
fi
port=$(python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
base="http://127.0.0.1:$port"
"$herald" serve "${database[@]}" --data-dir "$dir/data" --listen "127.0.0.1:$port" --secrets-key-file "$dir/secrets.key" >"$dir/server.log" 2>&1 &
server=$!
cleanup() {
    kill $server 2>/dev/null || true
    wait $server 2>/dev/null || true
    mkdir -p "$reports" && cp "$dir/server.log" "$reports/server.log" 2>/dev/null || true
    rm -rf "$dir"
    if [ -n "$contract_db" ]; then psql "$DATABASE_URL" -qc "DROP DATABASE IF EXISTS $contract_db WITH (FORCE)" || true; fi
}
trap cleanup EXIT
for _ in $(seq 1 120); do
    curl -sf "$base/openapi.json" -o "$dir/platform.json" && break
    sleep 0.5
done
[ -s "$dir/platform.json" ] || { cat "$dir/server.log"; echo "contract: the server did not start" >&2; exit 1; }
basic="Authorization: Basic $(printf '%s' demo-public-key:demo-public-secret | base64)"
curl -sf -H "$basic" "$base/discovery/openapi.json" -o "$dir/instance.json"

echo "contract: openapi-spec-validator"
"$tools/openapi-spec-validator" "$dir/platform.json" "$dir/instance.json"

seed_flag=(--seed "$seed")
[ "$seed" = random ] && seed_flag=()
for doc in openapi.json discovery/openapi.json; do
    echo "contract: schemathesis on $base/$doc"
    "$tools/schemathesis" run "$base/$doc" -H "$basic" --no-color "${seed_flag[@]}" --max-examples "$examples" \
        --checks not_a_server_error,status_code_conformance,content_type_conformance,response_headers_conformance,response_schema_conformance \
        --report junit --report-dir "$reports/$(echo "$doc" | tr / _)" \
        | grep -v '^  - ' 
done
if [ -z "$contract_db" ]; then
    echo "contract: the reference page in Chromium"
    "$browser_python" tests/browser/reference.py "$base" "$reports/screenshots"
    echo "contract: the console in Chromium"
    # The guests as the tests built them, or built here when the tests have not run.
    echo_wasm=$(ls -t target/debug/build/herald-tests-*/out/guests/wasm32-wasip2/release/echo.wasm 2>/dev/null | head -n1 || true)
    if [ -z "$echo_wasm" ]; then
        cargo build --quiet --release --target wasm32-wasip2 --manifest-path guest-examples/rust/Cargo.toml \
            -p echo -p async-secure -p monitor-ok -p flow-probe -p open-webhook -p bomb --target-dir target/contract-guests
        echo_wasm=target/contract-guests/wasm32-wasip2/release/echo.wasm
    fi
    "$browser_python" tests/browser/console.py "$base" "$reports/screenshots" "$(dirname "$echo_wasm")"
    echo "contract: hostile content against the console in Chromium"
    "$browser_python" tests/browser/hostile.py "$base" "$reports/screenshots" "$(dirname "$echo_wasm")"
fi
if grep -q "panicked" "$dir/server.log"; then
    grep -B2 -A10 "panicked" "$dir/server.log" >&2
    echo "contract: the server panicked" >&2
    exit 1
fi

#!/usr/bin/env bash
# Neighbours (issue 72): what busy instances within their limits take from a quiet one. One
# `herald serve` (release; SQLite, or PostgreSQL with DATABASE_URL as for bench/lib.sh) with 51
# production instances of one small model, the busy guest (guest-examples/rust/busy: `?spins=K`
# is a fixed loop, calibrated to take 50 ms alone; no query answers at once) uploaded to each. The quiet instance
# paces 200 calls a second on one connection (bench/paced_latency.py): its extension call that
# answers at once, then `GET /recipients/1` (no extension at all); alone, then beside 1, 5 and 50
# busy instances each keeping 20 calls in flight, their 20 allowed (bench/neighbours.py). Also the
# busy instances' completed calls a second without the quiet one and beside it, and the cost of
# reading the thread's CPU clock against the monotonic clock (what `runtime/fair/meter.rs` avoids
# on short polls). With BASE_BIN (a build from before the fair share), the uncontended call of
# each build, alternated (`bench/compare.sh fresh` and `reuse`: requests/s and CPU a call).
# Prints Markdown tables (BENCHMARKS.md keeps the figures).
#
#   bench/neighbours.sh
#   SECONDS_EACH=5 COUNTS=0,1,5 bench/neighbours.sh
#   BASE_BIN=/tmp/herald-base HERALD_BIN=target/release/herald bench/neighbours.sh
set -euo pipefail
cd "$(dirname "$0")/.."
PROFILE=${PROFILE:-release}
PORT=${PORT:-18780}
SECONDS_EACH=${SECONDS_EACH:-10}
COUNTS=${COUNTS:-0,1,5,50}
INSTANCES=${INSTANCES:-50}

if [ -n "${HERALD_BIN:-}" ]; then
  BIN=$HERALD_BIN
else
  cargo build -q --profile "$PROFILE" -p herald-host
  case "$PROFILE" in dev) BIN=target/debug/herald ;; *) BIN=target/$PROFILE/herald ;; esac
fi
rustup target add wasm32-wasip2 >/dev/null 2>&1 || true
cargo build -q --release --target wasm32-wasip2 --manifest-path guest-examples/rust/Cargo.toml -p busy
WASM=guest-examples/rust/target/wasm32-wasip2/release/busy.wasm

WORK=$(mktemp -d)
PID=
DB=
cleanup() {
  [ -n "$PID" ] && { kill "$PID" 2>/dev/null; wait "$PID" 2>/dev/null || true; }
  [ -n "$DB" ] && psql "$DATABASE_URL" -qc "DROP DATABASE IF EXISTS $DB WITH (FORCE)" >/dev/null 2>&1 || true
  rm -rf "$WORK"
}
trap cleanup EXIT
unset HERALD_DATABASE_URL
if [ -n "${DATABASE_URL:-}" ]; then
  DB="herald_neighbours_$$"
  psql "$DATABASE_URL" -qc "CREATE DATABASE $DB"
  export HERALD_DATABASE_URL="${DATABASE_URL%/*}/$DB"
fi
B=http://127.0.0.1:$PORT

echo "== $((INSTANCES + 1)) instances" >&2
{
  printf '[[instance]]\ncustomer_id = "quiet"\nenvironment = "production"\ndaily_cap = 1000000000\n\n'
  for i in $(seq 1 "$INSTANCES"); do
    printf '[[instance]]\ncustomer_id = "busy%02d"\nenvironment = "production"\ndaily_cap = 1000000000\n\n' "$i"
  done
  printf '[model]\nrecipient_id = "ID"\nperson_data = [{ name = "ID", type = "NUMBER", unique = true }, { name = "EMAIL", type = "STRING" }]\n'
} >"$WORK/instances.toml"
HERALD_DATA_DIR="$WORK/data" "$BIN" instance apply "$WORK/instances.toml" >/dev/null
# shellcheck disable=SC2046
HERALD_DATA_DIR="$WORK/data" "$BIN" credentials create --scope public --instance quiet \
  $(for i in $(seq 1 "$INSTANCES"); do printf -- '--instance busy%02d ' "$i"; done) >"$WORK/credentials"
HERALD_DATA_DIR="$WORK/data" "$BIN" serve --no-demo --listen 127.0.0.1:$PORT \
  --rate-per-address 1000000 --burst-per-address 1000000 --rate-per-credential 1000000 --burst-per-credential 1000000 \
  ${SERVE_ARGS:-} >"$WORK/server.log" 2>&1 &
PID=$!
until curl -s -o /dev/null "$B/oauth2/token"; do sleep 0.05; done

# A token per instance, the quiet one first; the busy guest uploaded to each; recipient 1.
: >"$WORK/tokens"
while read -r line; do
  id=$(echo "$line" | sed -n 's/.*client_id=\([^ ]*\).*/\1/p'); secret=$(echo "$line" | sed -n 's/.*client_secret=\([^ ]*\).*/\1/p')
  [ -z "$id" ] && continue
  token=$(curl -s -X POST "$B/oauth2/token" -d grant_type=client_credentials -d client_id="$id" -d client_secret="$secret" |
    sed -nE 's/.*"access_token":"([^"]+)".*/\1/p')
  code=$(curl -s -o /dev/null -w '%{http_code}' -X POST "$B/assets/extensions" -H "Authorization: Bearer $token" \
    -F "file=@$WASM;filename=busy.wasm" -F type=http)
  [ "$code" = 201 ] || { echo "upload: $code" >&2; exit 1; }
  echo "$token" >>"$WORK/tokens"
done <"$WORK/credentials"
QUIET=$(head -n1 "$WORK/tokens")
curl -s -o /dev/null -X PUT -H "Authorization: Bearer $QUIET" -H "Content-Type: application/json" "$B/recipients/1" -d '{"personData": {}}'
for path in /extensions/secure/busy /recipients/1; do
  [ "$(curl -s -o /dev/null -w '%{http_code}' -H "Authorization: Bearer $QUIET" "$B$path")" = 200 ] || { echo "$path does not answer 200" >&2; exit 1; }
done

python3 bench/neighbours.py "$B" "$WORK/tokens" "$SECONDS_EACH" "$COUNTS" >"$WORK/rows"
kill "$PID"; wait "$PID" 2>/dev/null || true
PID=

echo
echo "## Neighbours: $(nproc) cores, ${DATABASE_URL:+PostgreSQL}${DATABASE_URL:-SQLite}, $SECONDS_EACH s a measure, $(basename "$BIN")"
echo
echo "| busy instances (20 calls of 50 ms of CPU in flight each) | quiet extension call p50 / p99 (ms) | calls made (of $((200 * ${SECONDS_EACH%.*}))) | quiet GET /recipients/1 p50 / p99 (ms) | busy calls/s without the quiet one / beside it | busy calls not 200 |"
echo "|---|---|---|---|---|---|"
awk '{ printf "| %s | %s / %s | %s | %s / %s | %s / %s | %s |\n", $1, $2, $3, $4, $5, $6, $8, $9, $10 }' "$WORK/rows"
awk 'NR == 1 { e = $3; g = $6 } NR > 1 && $1 > 0 {
       printf "\nbeside %s busy: extension p99 %.1fx alone, GET p99 %.1fx alone, busy throughput beside the quiet one %.0f%% of without", $1, $3 / e, $6 / g, ($8 > 0 ? 100 * $9 / $8 : 0) }
     END { print "" }' "$WORK/rows"

echo
echo "## Clock reads on this machine"
echo
python3 - <<'EOF'
import time
n = 200000
for name, clock in [("thread CPU clock (CLOCK_THREAD_CPUTIME_ID)", time.CLOCK_THREAD_CPUTIME_ID), ("monotonic clock (vDSO)", time.CLOCK_MONOTONIC)]:
    start = time.perf_counter()
    for _ in range(n):
        time.clock_gettime_ns(clock)
    print(f"- {name}: {(time.perf_counter() - start) / n * 1e9:.0f} ns a read (Python's loop included)")
EOF

if [ -n "${BASE_BIN:-}" ]; then
  for what in fresh reuse; do
    echo
    echo "## The uncontended call ($what), $(basename "$BASE_BIN") against $(basename "$BIN"), alternated"
    echo
    bench/compare.sh "$what" "$BASE_BIN" "$BIN" "${ROUNDS:-3}"
  done
fi

#!/usr/bin/env bash
# The reused row of bench/extensions.sh on its own, alternated (issue 41): the Rust hello built
# with its reuse opt-in (reuse_calls 1000) through Herald's open endpoint, and `wasmtime serve
# -O pooling-allocator --max-instance-reuse-count 1000` on the same component. Both servers start
# once; then $ROUNDS rounds of wrk -t1 -c$CONNS for $DURATION s on each in turn, with each
# server's CPU time over its load (user and system, all threads, from /proc) and its context
# switches. On a machine whose speed drifts within minutes, the ratio of each round is the
# comparable figure; the medians close the table.
#
#   bench/reused.sh                      # release build, 5 rounds
#   HERALD_BIN=/tmp/herald ROUNDS=7 bench/reused.sh
#   WORKERS=1 bench/reused.sh            # both servers on one runtime thread (TOKIO_WORKER_THREADS)
#
# WORKERS=1 tells what a call costs when nothing it writes moves between cores: against the
# default (a thread a core), the difference is the price of the lines the two cores share.
set -euo pipefail
cd "$(dirname "$0")/.."
PROFILE=${PROFILE:-release}
PORT=${PORT:-18992}
WASMTIME_PORT=${WASMTIME_PORT:-18991}
DURATION=${DURATION:-5}
CONNS=${CONNS:-16}
ROUNDS=${ROUNDS:-5}
TOOLS=${TOOLS:-$PWD/bench/.tools}
WASMTIME_VERSION=48.0.8
export CARGO_PROFILE_RELEASE_DEBUG=${CARGO_PROFILE_RELEASE_DEBUG:-line-tables-only}
unset RUST_BACKTRACE RUST_LIB_BACKTRACE
if [ -n "${WORKERS:-}" ]; then export TOKIO_WORKER_THREADS=$WORKERS; fi
if [ ! -x "$TOOLS/bin/wasmtime" ]; then
  echo "installing wasmtime-cli $WASMTIME_VERSION into $TOOLS (a release build: minutes)" >&2
  cargo install -q wasmtime-cli --version "$WASMTIME_VERSION" --locked --root "$TOOLS"
fi
FEATURES=testing
SERVE_ARGS="--rate-per-address 100000000 --burst-per-address 100000000"
source bench/lib.sh
need_wrk
bench_instance
rustup target add wasm32-wasip2 >/dev/null 2>&1 || true
cargo build -q --release --target wasm32-wasip2 --manifest-path guest-examples/rust/Cargo.toml -p hello --features reuse
cp guest-examples/rust/target/wasm32-wasip2/release/hello.wasm "$DIR/hello-reuse.wasm"
[ "$(upload_extension "$DIR/hello-reuse.wasm" hello.wasm)" = 201 ] || { echo "upload failed" >&2; exit 1; }
HERALD_PID=$PID
HERALD_URL=$B/extensions/open/bench/hello
"$TOOLS/bin/wasmtime" serve --addr 127.0.0.1:$WASMTIME_PORT -S cli=y -O pooling-allocator \
  --max-instance-reuse-count 1000 "$DIR/hello-reuse.wasm" >"$DIR/wasmtime.log" 2>&1 &
WASMTIME_PID=$!
trap 'kill $WASMTIME_PID 2>/dev/null; wait $WASMTIME_PID 2>/dev/null || true; cleanup' EXIT
WASMTIME_URL=http://127.0.0.1:$WASMTIME_PORT/
for _ in $(seq 1 100); do curl -s -o /dev/null "$WASMTIME_URL" && break; sleep 0.2; done
for url in "$HERALD_URL" "$WASMTIME_URL"; do
  [ "$(curl -s "$url")" = hello ] || { echo "$url does not answer hello" >&2; exit 1; }
  wrk -t1 -c"$CONNS" -d2s "$url" >/dev/null
done

# One load on one server: prints requests/s, CPU a call (us) and switches a call.
load() { # pid url
  PID=$1
  local cpu0 sw0 rps calls
  cpu0=$(cpu_us); sw0=$(switches)
  rps=$(wrk -t1 -c"$CONNS" -d"${DURATION}s" "$2" | awk '/Requests\/sec/ {printf "%.0f", $2}')
  calls=$(( rps * DURATION ))
  echo "$rps $(( ($(cpu_us) - cpu0) / calls )) $(echo "($(switches) - $sw0) / $calls" | bc -l)"
}
median() { sort -n | awk '{ v[NR] = $1 } END { print (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2 }'; }

echo "## Reused Rust hello: Herald against wasmtime serve, wrk -t1 -c$CONNS, $DURATION s a load${WORKERS:+, $WORKERS runtime thread(s) each}"
echo
echo "| round | Herald requests/s | CPU a call | switches a call | wasmtime requests/s | CPU a call | switches a call | ratio |"
echo "|---|---|---|---|---|---|---|---|"
: >"$DIR/ratios"; : >"$DIR/herald_cpu"; : >"$DIR/wasmtime_cpu"
for round in $(seq 1 "$ROUNDS"); do
  read -r h_rps h_cpu h_sw < <(load "$HERALD_PID" "$HERALD_URL")
  read -r w_rps w_cpu w_sw < <(load "$WASMTIME_PID" "$WASMTIME_URL")
  ratio=$(echo "$h_rps / $w_rps" | bc -l)
  echo "$ratio" >>"$DIR/ratios"; echo "$h_cpu" >>"$DIR/herald_cpu"; echo "$w_cpu" >>"$DIR/wasmtime_cpu"
  printf '| %d | %s | %s us | %.3f | %s | %s us | %.3f | %.2fx |\n' "$round" "$h_rps" "$h_cpu" "$h_sw" "$w_rps" "$w_cpu" "$w_sw" "$ratio"
done
PID=$HERALD_PID
echo
printf 'medians: ratio %.2fx; CPU a call: Herald %s us, wasmtime serve %s us\n' \
  "$(median <"$DIR/ratios")" "$(median <"$DIR/herald_cpu")" "$(median <"$DIR/wasmtime_cpu")"

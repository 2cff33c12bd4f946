#!/usr/bin/env bash
# Extension benchmark (issue 3): one trivial plain wasi:http component (guest-examples/rust/hello,
# answers "hello") measured three ways on this machine, in one run, with the same load
# (wrk -t1 -c$CONNS for $DURATION s after a 2 s warm-up each):
#   native   GET /testing/open/bench/hello: an axum route of the same server behind the same
#            admission as open extensions (rate smoothing, concurrency slot, daily count);
#   herald   GET /extensions/open/bench/hello: the component through Herald's open endpoint;
#   wasmtime `wasmtime serve -S cli=y -O pooling-allocator` on the same component (wasmtime-cli
#            from crates.io, installed into $TOOLS by this script when missing).
# CONNS defaults to 16 because an instance admits 20 calls at once (more would be 429s).
# Where perf is installed, a second load per Wasm server measures its CPU time, page faults and
# context switches per call (perf stat on the server process).
#
#   bench/extensions.sh                  # release build
#   DURATION=5 CONNS=16 bench/extensions.sh
set -euo pipefail
cd "$(dirname "$0")/.."
PROFILE=${PROFILE:-release}
PORT=${PORT:-18996}
WASMTIME_PORT=${WASMTIME_PORT:-18995}
DURATION=${DURATION:-10}
CONNS=${CONNS:-16}
TOOLS=${TOOLS:-$PWD/bench/.tools}
WASMTIME_VERSION=48.0.8
if [ ! -x "$TOOLS/bin/wasmtime" ]; then
  echo "installing wasmtime-cli $WASMTIME_VERSION into $TOOLS (a release build: minutes)" >&2
  cargo install -q wasmtime-cli --version "$WASMTIME_VERSION" --locked --root "$TOOLS"
fi
# The same environment for all three: RUST_BACKTRACE makes every error capture a backtrace, and
# wasmtime makes one per store it drops (Herald turns error backtraces off itself; wasmtime serve
# would pay for them).
unset RUST_BACKTRACE RUST_LIB_BACKTRACE
FEATURES=testing
SERVE_ARGS="--rate-per-address 100000000 --burst-per-address 100000000"
source bench/lib.sh
need_wrk
WASM=$(guest_wasm hello)
bench_instance
[ "$(upload_extension "$WASM" hello.wasm)" = 201 ] || { echo "upload failed" >&2; exit 1; }

"$TOOLS/bin/wasmtime" serve --addr 127.0.0.1:$WASMTIME_PORT -S cli=y -O pooling-allocator "$WASM" >"$DIR/wasmtime.log" 2>&1 &
WASMTIME_PID=$!
trap 'kill $WASMTIME_PID 2>/dev/null; wait $WASMTIME_PID 2>/dev/null || true; cleanup' EXIT
for _ in $(seq 1 50); do curl -s -o /dev/null http://127.0.0.1:$WASMTIME_PORT/ && break; sleep 0.2; done

measure() { # name url
  [ "$(curl -s "$2")" = hello ] || { echo "$1 does not answer hello" >&2; exit 1; }
  wrk -t1 -c"$CONNS" -d2s "$2" >/dev/null
  wrk -t1 -c"$CONNS" -d"${DURATION}s" --latency "$2" >"$DIR/$1.txt"
  eval "RPS_$1=$(awk '/Requests\/sec/ {printf "%.0f", $2}' "$DIR/$1.txt")"
  eval "P50_$1=$(to_ms "$(awk '$1 == "50%" {print $2}' "$DIR/$1.txt")")"
  eval "P99_$1=$(to_ms "$(awk '$1 == "99%" {print $2}' "$DIR/$1.txt")")"
  eval "BAD_$1=$(awk '/Non-2xx/ {print $NF}' "$DIR/$1.txt" | grep . || echo 0)"
}
# Per-call costs of a server process under the same load (perf stat over 6 s of an 8 s run; the
# calls in that window estimated from wrk's rate): CPU time, page faults, context switches.
counters() { # name pid url
  command -v perf >/dev/null || return 0
  wrk -t1 -c"$CONNS" -d8s "$3" >"$DIR/$1.counted.txt" & local load=$!
  sleep 1
  perf stat -x, -e task-clock,page-faults,context-switches -p "$2" -- sleep 6 2>"$DIR/$1.perf.txt" || true
  wait $load
  local calls
  calls=$(awk '/Requests\/sec/ {printf "%.0f", $2 * 6}' "$DIR/$1.counted.txt")
  awk -F, -v calls="$calls" -v name="$1" '
    $3 == "task-clock" { cpu = $1 * 1000 / calls }
    $3 == "page-faults" { faults = $1 / calls }
    $3 == "context-switches" { switches = $1 / calls }
    END { if (cpu) printf "| %s | %.0f us | %.2f | %.2f |\n", name, cpu, faults, switches }' "$DIR/$1.perf.txt" >>"$DIR/counters.md"
}

measure native "$B/testing/open/bench/hello"
measure herald "$B/extensions/open/bench/hello"
measure wasmtime "http://127.0.0.1:$WASMTIME_PORT/"
counters herald "$PID" "$B/extensions/open/bench/hello"
counters wasmtime "$WASMTIME_PID" "http://127.0.0.1:$WASMTIME_PORT/"

echo
echo "## Extension benchmark: wrk -t1 -c$CONNS, ${DURATION} s each, profile $PROFILE, wasmtime-cli $WASMTIME_VERSION"
echo
echo "| server | requests/s | p50 | p99 | non-2xx |"
echo "|---|---|---|---|---|"
for s in native herald wasmtime; do
  eval "echo \"| $s | \$RPS_$s | \$P50_$s ms | \$P99_$s ms | \$BAD_$s |\""
done
printf '\nherald / wasmtime serve: %.2fx throughput; herald / native route: %.2fx\n' \
  "$(echo "$RPS_herald / $RPS_wasmtime" | bc -l)" "$(echo "$RPS_herald / $RPS_native" | bc -l)"
if [ -s "$DIR/counters.md" ]; then
  echo
  echo "| per call (perf stat, 6 s) | CPU time | page faults | context switches |"
  echo "|---|---|---|---|"
  cat "$DIR/counters.md"
fi

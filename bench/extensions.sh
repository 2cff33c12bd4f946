#!/usr/bin/env bash
# Extension benchmark (issues 3 and 17): trivial plain wasi:http components that answer "hello"
# (guest-examples/rust/hello, and its JavaScript and Python twins guest-examples/js/hello and
# guest-examples/python/hello, built with the pinned componentize-js and componentize-py of
# scripts/guest-tools.sh) measured on this machine, in one run, with the same load
# (wrk -t1 -c$CONNS for $DURATION s after a 2 s warm-up each):
#   native   GET /testing/open/bench/hello: an axum route of the same server behind the same
#            admission as open extensions (rate smoothing, concurrency slot, daily count);
#   herald   GET /extensions/open/bench/hello-<language>: each component through Herald's open
#            endpoint;
#   wasmtime `wasmtime serve -S cli=y -O pooling-allocator` on the same component (wasmtime-cli
#            from crates.io, installed into $TOOLS by this script when missing).
# For each component also: its size, its upload time (Herald compiles it then) and the size of
# the compiled artifact Herald keeps.
# Instance reuse, Rust only: the same hello built with its opt-in (`--features reuse`:
# reuse_calls 1000) through Herald, against `wasmtime serve --max-instance-reuse-count $REUSE`.
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
REUSE=${REUSE:-1000}
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
cp "$(guest_wasm hello)" "$DIR/hello-rust.wasm"
WASM_rust=$DIR/hello-rust.wasm
cargo build -q --release --target wasm32-wasip2 --manifest-path guest-examples/rust/Cargo.toml -p hello --features reuse
cp guest-examples/rust/target/wasm32-wasip2/release/hello.wasm "$DIR/hello-reuse.wasm"
GUEST_TOOLS=$(bash scripts/guest-tools.sh)
WASM_js=$DIR/hello-js.wasm
WASM_python=$DIR/hello-python.wasm
"$GUEST_TOOLS/js/node_modules/.bin/componentize-js" --wit wit --world-name wasi:http/proxy@0.2.10 --out "$WASM_js" guest-examples/js/hello/app.js >/dev/null
(cd guest-examples/python/hello && "$GUEST_TOOLS/py/bin/componentize-py" -d ../../../wit -w wasi:http/proxy@0.2.10 componentize -p . app -o "$WASM_python" >/dev/null)
bench_instance
LANGS="rust js python"
for lang in $LANGS; do
  eval "wasm=\$WASM_$lang"
  # Herald serves it open once its configuration says so (the Rust one carries its own).
  [ "$lang" = rust ] || "$BIN" extension config "$wasm" -o "$DIR/open-$lang.wasm" --open >/dev/null
  [ "$lang" = rust ] || wasm="$DIR/open-$lang.wasm"
  started=$(date +%s.%N)
  [ "$(upload_extension "$wasm" "hello-$lang.wasm")" = 201 ] || { echo "upload of hello-$lang failed" >&2; exit 1; }
  eval "UPLOAD_$lang=$(echo "$(date +%s.%N) - $started" | bc -l | awk '{printf "%.1f", $1}')"
  eval "SIZE_$lang=$(( $(stat -c %s "$wasm") / 1024 ))"
  eval "COMPILED_$lang=$(( $(ls -t "$DIR"/compiled/*.cwasm | head -1 | xargs stat -c %s) / 1024 ))"
done

[ "$(upload_extension "$DIR/hello-reuse.wasm" hello-reuse.wasm)" = 201 ] || { echo "upload of hello-reuse failed" >&2; exit 1; }

WASMTIME_PIDS=""
trap 'kill $WASMTIME_PIDS 2>/dev/null; wait $WASMTIME_PIDS 2>/dev/null || true; cleanup' EXIT
port=$WASMTIME_PORT
for lang in $LANGS; do
  eval "wasm=\$WASM_$lang"
  "$TOOLS/bin/wasmtime" serve --addr 127.0.0.1:$port -S cli=y -O pooling-allocator "$wasm" >"$DIR/wasmtime-$lang.log" 2>&1 &
  eval "WASMTIME_PID_$lang=$!"
  WASMTIME_PIDS="$WASMTIME_PIDS $!"
  eval "WASMTIME_URL_$lang=http://127.0.0.1:$port/"
  for _ in $(seq 1 100); do curl -s -o /dev/null http://127.0.0.1:$port/ && break; sleep 0.2; done
  port=$((port - 1))
done
"$TOOLS/bin/wasmtime" serve --addr 127.0.0.1:$port -S cli=y -O pooling-allocator --max-instance-reuse-count "$REUSE" "$WASM_rust" >"$DIR/wasmtime-reuse.log" 2>&1 &
WASMTIME_PID_reuse=$!
WASMTIME_PIDS="$WASMTIME_PIDS $!"
WASMTIME_URL_reuse=http://127.0.0.1:$port/
for _ in $(seq 1 100); do curl -s -o /dev/null "$WASMTIME_URL_reuse" && break; sleep 0.2; done

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
for lang in $LANGS; do
  eval "url=\$WASMTIME_URL_$lang; wpid=\$WASMTIME_PID_$lang"
  measure "herald_$lang" "$B/extensions/open/bench/hello-$lang"
  measure "wasmtime_$lang" "$url"
  counters "herald $lang" "$PID" "$B/extensions/open/bench/hello-$lang"
  counters "wasmtime $lang" "$wpid" "$url"
done
measure herald_reuse "$B/extensions/open/bench/hello-reuse"
measure wasmtime_reuse "$WASMTIME_URL_reuse"
counters "herald rust, reused" "$PID" "$B/extensions/open/bench/hello-reuse"
counters "wasmtime rust, reused" "$WASMTIME_PID_reuse" "$WASMTIME_URL_reuse"

echo
echo "## Extension benchmark: wrk -t1 -c$CONNS, ${DURATION} s each, profile $PROFILE, wasmtime-cli $WASMTIME_VERSION"
echo
echo "| server | requests/s | p50 | p99 | non-2xx |"
echo "|---|---|---|---|---|"
for s in native herald_rust wasmtime_rust herald_js wasmtime_js herald_python wasmtime_python herald_reuse wasmtime_reuse; do
  eval "echo \"| ${s/_/ } | \$RPS_$s | \$P50_$s ms | \$P99_$s ms | \$BAD_$s |\""
done
echo
for lang in $LANGS; do
  eval "printf 'herald / wasmtime serve (%s): %.2fx throughput\n' $lang \"\$(echo \"\$RPS_herald_$lang / \$RPS_wasmtime_$lang\" | bc -l)\""
done
printf 'herald / wasmtime serve (rust, instances reused, %s calls each): %.2fx throughput\n' "$REUSE" "$(echo "$RPS_herald_reuse / $RPS_wasmtime_reuse" | bc -l)"
printf 'herald rust / native route: %.2fx\n' "$(echo "$RPS_herald_rust / $RPS_native" | bc -l)"
echo
echo "| component | size | upload (compile) | compiled artifact |"
echo "|---|---|---|---|"
for lang in $LANGS; do
  eval "echo \"| hello $lang | \$SIZE_$lang KiB | \$UPLOAD_$lang s | \$COMPILED_$lang KiB |\""
done
if [ -s "$DIR/counters.md" ]; then
  echo
  echo "| per call (perf stat, 6 s) | CPU time | page faults | context switches |"
  echo "|---|---|---|---|"
  cat "$DIR/counters.md"
fi

#!/usr/bin/env bash
# Where a call's time goes (issues 20 and 41: the profiles behind the gaps BENCHMARKS.md reports): the
# server under a wrk load (-t1 -c$CONNS for $DURATION s) while `perf record` samples it, then the
# heaviest symbols (self time) and their share, grouped into the parts of a call (the system
# calls' libc stubs with the kernel's side of them, the guest's own code with wasmtime), each also in
# microseconds of the server's CPU a call (its CPU time over the load, from /proc). Self time only:
# a release build has no frame pointers, so perf's call chains (and inclusive times) are partial.
#
#   bench/profile.sh reuse      # guest-examples/rust/hello with reuse_calls 1000, open endpoint
#   bench/profile.sh fresh      # the same component, a fresh instance per call
#   bench/profile.sh native     # the native hello route behind the same admission
#   bench/profile.sh refused    # the same route on default flags: one address over its smoothing, answered 429
#   bench/profile.sh read       # GET one recipient (with DATABASE_URL=... for PostgreSQL)
#   bench/profile.sh create     # POST a new recipient (group commit; DATABASE_URL likewise)
#
# CALLERS=1 samples call chains from the stack (`perf record --call-graph dwarf`, fewer samples a
# second) and also prints the inclusive share of the frames Herald's call passes through: where a
# call's time goes by who asked for it, allocation and copies included.
# WASMTIME=1 (reuse or fresh) loads and profiles `wasmtime serve -O pooling-allocator` on the
# same component instead (with --max-instance-reuse-count 1000 for reuse; wasmtime-cli installed
# into bench/.tools as bench/extensions.sh does): the same split, for the peer. Herald still
# starts first (it sets the component up), so without HERALD_BIN this builds the release profile
# too, a whole-program optimization of many minutes: give a built binary, any build will do.
# PERF=0 measures without the profiler (requests/s and CPU a call only: what `bench/compare.sh`
# alternates between two builds). Needs perf (linux-perf); HERALD_BIN runs another build. Symbols need a build with them: the
# script builds the release profile with debug line tables kept (CARGO_PROFILE_RELEASE_DEBUG).
set -euo pipefail
cd "$(dirname "$0")/.."
WHAT=${1:-reuse}
PROFILE=${PROFILE:-release}
PORT=${PORT:-18993}
DURATION=${DURATION:-8}
CONNS=${CONNS:-16}
TOP=${TOP:-25}
export CARGO_PROFILE_RELEASE_DEBUG=${CARGO_PROFILE_RELEASE_DEBUG:-line-tables-only}
unset RUST_BACKTRACE RUST_LIB_BACKTRACE
PERF=${PERF:-1}
[ "$PERF" = 0 ] || command -v perf >/dev/null || { echo "perf is not installed (Debian: linux-perf)" >&2; exit 1; }
FEATURES=testing
SERVE_ARGS="--rate-per-address 100000000 --burst-per-address 100000000"
[ "$WHAT" != refused ] || SERVE_ARGS=""
SCRIPT=()
source bench/lib.sh
need_wrk
bench_instance
case "$WHAT" in
  reuse | fresh)
    if [ "$WHAT" = reuse ]; then
      cargo build -q --release --target wasm32-wasip2 --manifest-path guest-examples/rust/Cargo.toml -p hello --features reuse
      cp guest-examples/rust/target/wasm32-wasip2/release/hello.wasm "$DIR/hello.wasm"
    else
      cp "$(guest_wasm hello)" "$DIR/hello.wasm"
    fi
    [ "$(upload_extension "$DIR/hello.wasm" hello.wasm)" = 201 ] || { echo "upload failed" >&2; exit 1; }
    URL=$B/extensions/open/bench/hello
    HEADER=()
    ;;
  native | refused)
    URL=$B/testing/open/bench/hello
    HEADER=()
    ;;
  read)
    curl -s -o /dev/null -X PUT "$B/recipients/1" -H "Authorization: Bearer $TOKEN" -H 'Content-Type: application/json' \
      -d '{"personData": {"USER_ID": 1, "FIRST_NAME": "Ada"}}'
    URL=$B/recipients/1
    HEADER=(-H "Authorization: Bearer $TOKEN")
    ;;
  create)
    URL=$B/recipients
    HEADER=(-H "Authorization: Bearer $TOKEN")
    SCRIPT=(-s bench/create-recipient.lua)
    ;;
  *) echo "what to profile: reuse, fresh, native, refused, read or create" >&2; exit 2 ;;
esac
if [ "${WASMTIME:-0}" = 1 ]; then
  TOOLS=${TOOLS:-$PWD/bench/.tools}
  [ -x "$TOOLS/bin/wasmtime" ] || cargo install -q wasmtime-cli --version 48.0.8 --locked --root "$TOOLS"
  case "$WHAT" in reuse) EXTRA=(--max-instance-reuse-count 1000) ;; fresh) EXTRA=() ;; *) echo "wasmtime serve runs reuse or fresh" >&2; exit 2 ;; esac
  "$TOOLS/bin/wasmtime" serve --addr 127.0.0.1:$((PORT - 1)) -S cli=y -O pooling-allocator "${EXTRA[@]}" "$DIR/hello.wasm" >"$DIR/wasmtime.log" 2>&1 &
  HERALD_PID=$PID PID=$!
  trap 'kill $PID 2>/dev/null; wait $PID 2>/dev/null || true; PID=$HERALD_PID; cleanup' EXIT
  URL=http://127.0.0.1:$((PORT - 1))/
  for _ in $(seq 1 100); do curl -s -o /dev/null "$URL" && break; sleep 0.2; done
  WHAT="$WHAT (wasmtime serve)"
fi
[ "$WHAT" = create ] || [ "$(curl -s -o /dev/null -w '%{http_code}' "${HEADER[@]}" "$URL")" = 200 ] || { echo "$URL does not answer 200" >&2; exit 1; }
wrk -t1 -c"$CONNS" -d2s "${HEADER[@]}" "${SCRIPT[@]}" "$URL" >/dev/null
if [ "$PERF" != 0 ]; then
  if [ "${CALLERS:-0}" = 1 ]; then
    perf record -q -F 199 --call-graph dwarf,16384 -p "$PID" -o "$DIR/perf.data" -- sleep "$DURATION" 2>/dev/null &
  else
    perf record -q -F 1999 -g -p "$PID" -o "$DIR/perf.data" -- sleep "$DURATION" 2>/dev/null &
  fi
  RECORDING=$!
fi
CPU_BEFORE=$(cpu_us)
SWITCHES_BEFORE=$(switches)
wrk -t1 -c"$CONNS" -d"${DURATION}s" "${HEADER[@]}" "${SCRIPT[@]}" "$URL" >"$DIR/wrk.txt"
CALLS=$(awk '/requests in/ {print $1}' "$DIR/wrk.txt")
CPU_CALL=$(( ($(cpu_us) - CPU_BEFORE) / CALLS ))
SWITCHES_CALL=$(awk -v n=$(( $(switches) - SWITCHES_BEFORE )) -v calls="$CALLS" 'BEGIN { printf "%.2f", n / calls }')
rps=$(awk '/Requests\/sec/ {printf "%d", $2}' "$DIR/wrk.txt")
if [ "$PERF" = 0 ]; then
  echo "$WHAT $rps $CPU_CALL $SWITCHES_CALL"
  exit 0
fi
wait $RECORDING || true
NON_2XX=$(awk '/Non-2xx/ {print $NF}' "$DIR/wrk.txt"); NON_2XX=${NON_2XX:-0}
echo "# $WHAT: $rps requests/s under the profile (perf at 1999 Hz adds its own cost; $NON_2XX of them not 2xx), server CPU $CPU_CALL us a call, $SWITCHES_CALL context switches a call"
# Self time by symbol, then the same samples grouped into the parts of a call.
perf report -i "$DIR/perf.data" --no-children --no-inline --sort symbol --stdio 2>/dev/null |
  awk '/^ +[0-9.]+%/ {print}' >"$DIR/symbols.txt"
echo
echo "| self % | symbol |"
echo "|---|---|"
awk -v top="$TOP" 'NR <= top {pct=$1; kind=$2; $1=""; $2=""; sub(/^ +/, ""); printf "| %s | %s `%s` |\n", pct, kind, substr($0, 1, 90)}' "$DIR/symbols.txt"
echo
echo "| part of the call (self time, by symbol name) | % | us of CPU a call |"
echo "|---|---|---|"
awk -v call="$CPU_CALL" '
  { pct = $1 + 0; s = $0
    if (s ~ /\[k\]/ && s ~ /futex|schedule|switch_to|finish_task_switch|try_to_wake|ttwu|pick_next|enqueue_task|dequeue_task|update_curr|__switch|spin_unlock_irq|irqentry_exit/) g = "kernel: thread switches, wake-ups, interrupts"
    else if (s ~ /\[k\]/ && s ~ /tcp|ip_|skb|sock|net_|__dev|loopback|inet|epoll|sys_recv|sys_send|__sys|syscall|entry_SYSCALL|do_syscall/) g = "kernel: sockets, epoll and system calls"
    else if (s ~ /\[k\]/) g = "kernel: other (memory, page faults, ...)"
    else if (s ~ /__GI___writev|__libc_(recv|send|read|write)|epoll_wait@|__GI___poll/) g = "kernel: sockets, epoll and system calls"
    else if (s ~ /wasmtime|cranelift|wasm\[|module_start|trampoline|component|wasi|Instance|Store|[Pp]ooling/) g = "wasmtime: instance, call, WASI"
    else if (s ~ /hyper|h1|http::|httparse|headers/) g = "hyper and http: parsing and writing HTTP"
    else if (s ~ /sqlx|sqlite|postgres|Pg|libsqlite/) g = "sqlx and the database"
    else if (s ~ /tokio|mio|parking|crossbeam/) g = "tokio: scheduling and I/O"
    else if (s ~ /tower|axum|matchit|governor/) g = "axum, tower: routing and layers"
    else if (s ~ /tracing|metrics/) g = "tracing and metrics"
    else if (s ~ /mi_|malloc|free|alloc|memcpy|memmove|memset/) g = "allocation and copies"
    else if (s ~ /herald/) g = "herald itself"
    else g = "other"
    total[g] += pct }
  END { for (g in total) printf "| %s | %.1f | %.1f |\n", g, total[g], total[g] * call / 100 }' "$DIR/symbols.txt" | sort -t'|' -k3 -rn
if [ "${CALLERS:-0}" = 1 ]; then
  echo
  echo "| inclusive % | us of CPU a call | frame (Herald's, and the libraries' entry points) |"
  echo "|---|---|---|"
  perf report -i "$DIR/perf.data" --children --no-inline --sort symbol --stdio -g none 2>/dev/null |
    awk '/^ +[0-9.]+% +[0-9.]+%/' |
    grep -E 'herald_host::|hyper::proto::h1::(dispatch|role)|wasmtime_wasi_http|call_handle|instantiate|tokio::runtime::task::raw::poll|axum::routing::Router|mi_free|_mi_malloc|memmove|entry_SYSCALL' |
    head -"${CALLERS_TOP:-45}" |
    awk -v call="$CPU_CALL" '{ pct = $1 + 0; $1 = ""; $2 = ""; $3 = ""; sub(/^ +/, ""); printf "| %.1f | %.1f | `%s` |\n", pct, pct * call / 100, substr($0, 1, 110) }'
fi

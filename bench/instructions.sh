#!/usr/bin/env bash
# Instructions a call (issue 41): the server under valgrind's callgrind, which counts the
# instructions every function executes, while one keep-alive client makes $CALLS calls of one
# kind. Counts, not seconds: the same binary, guest and calls give the same totals whatever else
# the machine is doing, so a change of a few hundred instructions a call shows in one run, where
# `bench/compare.sh`'s CPU time a call needs alternated rounds on a quiet machine. Prints the
# instructions a call in all, then the heaviest functions by inclusive count (each a call's
# share), so that a change can be measured and its place found in one step.
#
#   bench/instructions.sh reuse        # guest-examples/rust/hello with reuse_calls 1000, open endpoint
#   bench/instructions.sh fresh        # the same component, a fresh instance per call
#   bench/instructions.sh native       # the native hello route behind the same admission
#   bench/instructions.sh read         # GET one recipient (DATABASE_URL=... for PostgreSQL)
#   WASMTIME=1 bench/instructions.sh reuse   # `wasmtime serve` on the same component instead
#   CACHE=1 bench/instructions.sh reuse      # also valgrind's simulated cache misses a call
#
# CACHE=1 adds callgrind's cache simulation (first-level instruction and data caches, and the
# last level, sized like this machine's): the misses a call of each level, for a footprint that
# costs time without costing instructions. A simulation of one core with the threads run in
# turn: it does not see lines moving between cores.
#
# Under valgrind the pooling allocator cannot reserve its terabytes of address space: Herald falls
# back to allocating each instance on demand (as it does on a host that refuses the reservation),
# and `wasmtime serve` runs without `-O pooling-allocator`, so both allocate alike here.
#
# HERALD_BIN runs another build (compare two by running this twice). Needs valgrind. What
# callgrind does not count: time in the kernel (system calls, wake-ups), which `bench/profile.sh`
# shows; and a thread's waits, which cost no instructions.
set -euo pipefail
cd "$(dirname "$0")/.."
WHAT=${1:-reuse}
PROFILE=${PROFILE:-release}
PORT=${PORT:-18994}
CALLS=${CALLS:-2000}
TOP=${TOP:-40}
export CARGO_PROFILE_RELEASE_DEBUG=${CARGO_PROFILE_RELEASE_DEBUG:-line-tables-only}
unset RUST_BACKTRACE RUST_LIB_BACKTRACE
command -v valgrind >/dev/null || apt-get install -y valgrind >/dev/null 2>&1 || sudo apt-get install -y valgrind >/dev/null
FEATURES=testing
OUT=$(mktemp -d)
trap '[ -n "${KEEP:-}" ] || rm -rf "$OUT"' EXIT

reuse_wasm() {
  cargo build -q --release --target wasm32-wasip2 --manifest-path guest-examples/rust/Cargo.toml -p hello --features reuse
  cp guest-examples/rust/target/wasm32-wasip2/release/hello.wasm "$OUT/hello.wasm"
}

# The client: $CALLS calls on one keep-alive connection, each answer read to its end.
client() {
  python3 - "$1" "$2" "${3:-}" <<'EOF'
import http.client, sys, urllib.parse
url, calls, token = urllib.parse.urlsplit(sys.argv[1]), int(sys.argv[2]), sys.argv[3]
headers = {"Authorization": f"Bearer {token}"} if token else {}
path = url.path + (f"?{url.query}" if url.query else "")
conn = http.client.HTTPConnection(url.hostname, url.port, timeout=60)
for _ in range(calls):
    conn.request("GET", path, headers=headers)
    r = conn.getresponse()
    r.read()
    if r.status != 200:
        sys.exit(f"answered {r.status}")
EOF
}

run_counted() {  # PID URL [TOKEN]: warm up, then count $CALLS calls
  local pid=$1 url=$2 token=${3:-}
  client "$url" 200 "$token"
  callgrind_control --instr=on "$pid" >/dev/null 2>&1
  # A few calls instrumented before counting: valgrind translates each code path once.
  client "$url" 50 "$token"
  callgrind_control --zero "$pid" >/dev/null 2>&1
  client "$url" "$CALLS" "$token"
  callgrind_control --dump="counted" "$pid" >/dev/null 2>&1
  callgrind_control --instr=off "$pid" >/dev/null 2>&1
}

CALLGRIND=(valgrind --tool=callgrind --instr-atstart=no --separate-threads=no)
[ "${CACHE:-0}" = 1 ] && CALLGRIND+=(--cache-sim=yes)

if [ "${WASMTIME:-0}" = 1 ]; then
  TOOLS=${TOOLS:-$PWD/bench/.tools}
  WASMTIME_VERSION=48.0.8
  if [ ! -x "$TOOLS/bin/wasmtime" ]; then
    echo "installing wasmtime-cli $WASMTIME_VERSION into $TOOLS (a release build: minutes)" >&2
    cargo install -q wasmtime-cli --version "$WASMTIME_VERSION" --locked --root "$TOOLS"
  fi
  case "$WHAT" in
    reuse) reuse_wasm; EXTRA=(--max-instance-reuse-count 1000) ;;
    fresh) reuse_wasm; EXTRA=() ;;
    *) echo "wasmtime serve runs reuse or fresh" >&2; exit 2 ;;
  esac
  (cd "$OUT" && exec "${CALLGRIND[@]}" --callgrind-out-file="$OUT/callgrind.out" \
    "$TOOLS/bin/wasmtime" serve --addr 127.0.0.1:$PORT -S cli=y "${EXTRA[@]}" "$OUT/hello.wasm") \
    >"$OUT/server.log" 2>&1 &
  PID=$!
  trap 'kill $PID 2>/dev/null; wait $PID 2>/dev/null || true; [ -n "${KEEP:-}" ] || rm -rf "$OUT"' EXIT
  for _ in $(seq 1 300); do curl -s -o /dev/null "http://127.0.0.1:$PORT/" && break; sleep 0.5; done
  run_counted "$PID" "http://127.0.0.1:$PORT/"
  LABEL="wasmtime serve $WHAT"
else
  # bench/lib.sh starts the server; here it starts under callgrind instead.
  if [ -n "${HERALD_BIN:-}" ]; then BIN=$HERALD_BIN; else
    cargo build -q --profile "$PROFILE" -p herald-host --features "$FEATURES"; BIN=target/$PROFILE/herald
  fi
  REAL_BIN=$BIN
  cat >"$OUT/herald" <<EOF
#!/usr/bin/env bash
if [ "\$1" = serve ]; then exec ${CALLGRIND[*]} --callgrind-out-file="$OUT/callgrind.out" "$REAL_BIN" "\$@"; fi
exec "$REAL_BIN" "\$@"
EOF
  chmod +x "$OUT/herald"
  HERALD_BIN=$OUT/herald
  SERVE_ARGS="--rate-per-address 100000000 --burst-per-address 100000000"
  # Under valgrind the server starts in tens of seconds: bench/lib.sh's wait is extended here.
  source bench/lib.sh
  for _ in $(seq 1 300); do curl -s -o /dev/null "$B/oauth2/token" && break; sleep 0.5; done
  TOKEN=$(demo_token)
  bench_instance
  case "$WHAT" in
    reuse | fresh)
      if [ "$WHAT" = reuse ]; then reuse_wasm; else cp "$(guest_wasm hello)" "$OUT/hello.wasm"; fi
      [ "$(upload_extension "$OUT/hello.wasm" hello.wasm)" = 201 ] || { echo "upload failed" >&2; exit 1; }
      run_counted "$PID" "$B/extensions/open/bench/hello"
      ;;
    native) run_counted "$PID" "$B/testing/open/bench/hello" ;;
    read)
      curl -s -o /dev/null -X PUT "$B/recipients/1" -H "Authorization: Bearer $TOKEN" -H 'Content-Type: application/json' \
        -d '{"personData": {"USER_ID": 1, "FIRST_NAME": "Ada"}}'
      run_counted "$PID" "$B/recipients/1" "$TOKEN"
      ;;
    *) echo "what to count: reuse, fresh, native or read" >&2; exit 2 ;;
  esac
  LABEL="$(basename "$REAL_BIN") $WHAT"
fi

# The dump that `--dump` wrote (the file of the process's end comes later, when it stops).
DUMP=$(ls "$OUT"/callgrind.out* 2>/dev/null | grep -v "\.out$" | head -1 || true)
[ -n "$DUMP" ] || { echo "callgrind wrote no dump" >&2; exit 1; }
TOTAL=$(callgrind_annotate "$DUMP" 2>/dev/null | awk '/PROGRAM TOTALS/ && !n { gsub(",", "", $1); print $1; n = 1 }')
echo "# $LABEL: $(( TOTAL / CALLS )) instructions a call ($TOTAL over $CALLS calls, callgrind)"
# What the execution logs' writer spends (its task, and SQLite's worker threads) depends on the
# rate of calls, not on the call: it writes at most each extension's newest hundred per gathering
# pause, so at the slow rate under valgrind it writes every call's log, and under load one in
# hundreds. The call path without it is the figure to compare between builds. SQLite's worker
# thread is found by its outermost frame, which a build with link-time optimization inlines into
# the worker's own closure. Both reckonings below find the writer's threads by these frames
# (read through ENVIRON, which takes the pattern as written, where -v would read its escapes).
export WRITER_FRAMES='runtime/logs\.rs:herald_host::runtime::logs::LogWriter::spawn::\{\{closure\}\}( \[|$)|sqlx-sqlite-[^/]*/src/connection/worker\.rs:(std::sys::backtrace::__rust_begin_short_backtrace \[|sqlx_sqlite::connection::worker::ConnectionWorker::establish::\{\{closure\}\}::\{\{closure\}\}( \[|$))'
WRITER=$(callgrind_annotate --inclusive=yes --threshold=100 "$DUMP" 2>/dev/null | awk '
  $0 ~ ENVIRON["WRITER_FRAMES"] {
    n = $1; gsub(",", "", n); key = ($0 ~ /LogWriter/) ? "log" : "sqlite"; if (n + 0 > max[key]) max[key] = n + 0 }
  END { print max["log"] + max["sqlite"] }')
if [ "${WRITER:-0}" -gt 0 ]; then
  echo "# without the execution logs' writer: $(( (TOTAL - WRITER) / CALLS )) instructions a call (the writer $(( WRITER / CALLS )))"
fi
if [ "${CACHE:-0}" = 1 ]; then
  # Each event a call, less the execution logs' writer (as above: its share depends on the rate
  # of calls, and under valgrind its thread runs between the calls, evicting their lines).
  callgrind_annotate --inclusive=yes --threshold=100 "$DUMP" 2>/dev/null | awk -v calls="$CALLS" '
    function numbers(line, out,   n, i, f, k) { n = split(line, f, " "); k = 0
      for (i = 1; i <= n; i++) if (f[i] ~ /^[0-9][0-9,]*$/ || f[i] == ".") { v = f[i]; gsub(",", "", v); out[++k] = v + 0 } else if (f[i] !~ /^\(|%\)$/) break
      return k }
    /^Events shown:/ { events = split($0, name, " ") - 2; for (i = 1; i <= events; i++) name[i] = name[i + 2] }
    /PROGRAM TOTALS/ && !total_seen { total_seen = 1; numbers($0, total) }
    $0 ~ ENVIRON["WRITER_FRAMES"] {
      key = ($0 ~ /LogWriter/) ? "log" : "sqlite"; delete row; numbers($0, row)
      if (row[1] > best[key]) { best[key] = row[1]; for (i = 1; i <= events; i++) writer[key, i] = row[i] } }
    END { line = "# simulated cache a call, without the writer:"
      for (i = 1; i <= events; i++) line = line sprintf(" %s %.0f", name[i], (total[i] - writer["log", i] - writer["sqlite", i]) / calls)
      print line }'
fi
[ -z "${KEEP:-}" ] || echo "# the profile: $DUMP (callgrind_annotate, kcachegrind)"
echo
echo "| inclusive instructions a call | share | function |"
echo "|---|---|---|"
callgrind_annotate --inclusive=yes --threshold=100 "$DUMP" 2>/dev/null |
  awk -v top="$TOP" '/^ *[0-9,]+ \(/ && n++ < top { print }' |
  awk -v calls="$CALLS" -v total="$TOTAL" '{ n = $1; gsub(",", "", n); line = $0
    # Before the name, a count and a share for each event (one pair, or one a simulated cache
    # event with CACHE=1; "." for none); after it, the binary in brackets.
    sub(/^ *(([0-9,]+ +\( *[0-9.]+%\)|\.) +)+/, "", line); sub(/ \[[^]]*\]$/, "", line)
    printf "| %d | %.1f%% | `%s` |\n", n / calls, 100 * n / total, substr(line, 1, 120) }'

# Shared by the benchmark scripts: build the server, start it on a fresh data directory with the
# demo instances, wait until it answers, and get a demo token. Sourced, not run.
#   needs: PROFILE, PORT; optional: FEATURES (cargo features), SERVE_ARGS (more `herald serve` flags),
#   DATABASE_URL (a PostgreSQL server's maintenance database, as scripts/postgres.sh prints: the
#   server then runs on a fresh database of that server, dropped on exit), HERALD_BIN (a binary
#   to run instead of building one)
#   sets: BIN, DIR, B, PID, TOKEN; stops the server and cleans up on exit (`cleanup`)
if [ -n "${HERALD_BIN:-}" ]; then  # a binary built elsewhere (another commit), to compare builds
  BIN=$HERALD_BIN
else
  cargo build -q --profile "$PROFILE" -p herald-host ${FEATURES:+--features "$FEATURES"}
  case "$PROFILE" in dev) BIN=target/debug/herald ;; *) BIN=target/$PROFILE/herald ;; esac
fi
DIR=$(mktemp -d)
B=http://127.0.0.1:$PORT
BENCH_DB=
if [ -n "${DATABASE_URL:-}" ]; then
  BENCH_DB="herald_bench_$$"
  psql "$DATABASE_URL" -qc "CREATE DATABASE $BENCH_DB"
  export HERALD_DATABASE_URL="${DATABASE_URL%/*}/$BENCH_DB"
else
  unset HERALD_DATABASE_URL
fi
# shellcheck disable=SC2086
"$BIN" serve --data-dir "$DIR" --listen 127.0.0.1:$PORT ${SERVE_ARGS:-} >"$DIR/server.log" 2>&1 &
PID=$!
cleanup() {
  kill $PID 2>/dev/null; wait $PID 2>/dev/null || true; rm -rf "$DIR"
  if [ -n "$BENCH_DB" ]; then psql "$DATABASE_URL" -qc "DROP DATABASE IF EXISTS $BENCH_DB WITH (FORCE)" || true; fi
}
trap cleanup EXIT
for _ in $(seq 1 50); do curl -s -o /dev/null $B/oauth2/token && break; sleep 0.2; done
demo_token() {
  curl -s -X POST $B/oauth2/token -d grant_type=client_credentials -d client_id=demo-public-key \
    -d client_secret=demo-public-secret | sed -E 's/.*"access_token":"([^"]+)".*/\1/'
}
TOKEN=$(demo_token)
# A wrk latency (`812.00us`, `1.20ms`, `2.01s`) in milliseconds.
to_ms() { awk -v v="$1" 'BEGIN { n = v + 0; if (v ~ /us$/) n /= 1000; else if (v ~ /ms$/) n = n; else if (v ~ /s$/) n *= 1000; printf "%.2f", n }'; }
# A field of the server's /proc status, in KiB (VmRSS, VmHWM), into STATUS_KIB: read by bash itself,
# so that a script measuring latency beside it can read it often without starting a process.
status_kib() {
  local key value _
  while read -r key value _; do
    if [ "$key" = "$1:" ]; then STATUS_KIB=$value; return 0; fi
  done </proc/$PID/status
}
rss_kib() { status_kib VmRSS; echo "$STATUS_KIB"; }
# The server's CPU time so far (user and system, all its threads), in microseconds, from
# /proc/$PID/stat (fields 14 and 15, in clock ticks).
cpu_us() {
  local stat
  read -r stat </proc/$PID/stat
  set -- ${stat##*) }
  echo $(( (${12} + ${13}) * 1000000 / $(getconf CLK_TCK) ))
}
peak_kib() { status_kib VmHWM; echo "$STATUS_KIB"; }
# Context switches of all the server's threads so far (voluntary and not), from /proc.
switches() {
  cat /proc/$PID/task/*/status 2>/dev/null | awk '/ctxt_switches/ { n += $2 } END { print n + 0 }'
}

# Builds a guest example (release, wasm32-wasip2) and prints the path of its component.
guest_wasm() {
  rustup target add wasm32-wasip2 >/dev/null 2>&1 || true
  cargo build -q --release --target wasm32-wasip2 --manifest-path guest-examples/rust/Cargo.toml -p "$1"
  echo "guest-examples/rust/target/wasm32-wasip2/release/${1//-/_}.wasm"
}
# Uploads an http extension (file, name) to the instance of $TOKEN.
upload_extension() {
  curl -s -o /dev/null -w '%{http_code}' -X POST "$B/assets/extensions" -H "Authorization: Bearer $TOKEN" \
    -F "file=@$1;filename=$2" -F type=http
}
# A definition of one instance "bench" (the demo's data model without its flows, so that a build
# from before flows can run it too; a daily cap no benchmark reaches), applied to the running
# server, which loads it within seconds; TOKEN becomes one of its own.
bench_instance() {
  { printf '[[instance]]\ncustomer_id = "bench"\nenvironment = "production"\nlicensed_uar = 100000\ndaily_cap = 1000000000\n\n'
    sed -n '/^\[model\]/,$p' host/instances/demo.toml | awk '/^\[/ { skip = ($0 == "[[model.flows]]") } !skip'; } >"$DIR/bench.toml"
  HERALD_DATA_DIR="$DIR" "$BIN" instance apply "$DIR/bench.toml" >/dev/null
  local created id secret
  created=$(HERALD_DATA_DIR="$DIR" "$BIN" credentials create --instance bench --scope public)
  id=$(echo "$created" | sed -n 's/^client_id=//p'); secret=$(echo "$created" | sed -n 's/^client_secret=//p')
  for _ in $(seq 1 50); do  # until the server has loaded the new instance
    TOKEN=$(curl -s -X POST $B/oauth2/token -d grant_type=client_credentials -d client_id="$id" \
      -d client_secret="$secret" | sed -nE 's/.*"access_token":"([^"]+)".*/\1/p')
    [ -n "$TOKEN" ] && return; sleep 0.2
  done
  echo "the bench instance never appeared" >&2; exit 1
}
# wrk from Debian's packages, when missing.
need_wrk() {
  command -v wrk >/dev/null || apt-get install -y wrk >/dev/null 2>&1 || sudo apt-get install -y wrk >/dev/null
}

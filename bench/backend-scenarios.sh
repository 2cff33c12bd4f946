#!/usr/bin/env bash
# The scenarios of bench/backends.sh against one backend (DATABASE_URL set: PostgreSQL; unset:
# SQLite). Prints one "measure|value" line per measure on stdout; progress goes to stderr.
set -euo pipefail
cd "$(dirname "$0")/.."
N=${N:-200000}
PROFILE=${PROFILE:-release}
PORT=${PORT:-18994}
DURATION=${DURATION:-5}
CONNS=${CONNS:-16}
RUNS=${RUNS:-5}
SERVE_ARGS="--rate-per-address 100000000 --burst-per-address 100000000 --rate-per-credential 100000000 --burst-per-credential 100000000"
source bench/lib.sh
need_wrk
bench_instance
AUTH="Authorization: Bearer $TOKEN"
out() { echo "$1|$2"; }
load() { # name url [lua]: requests/s and p99 of wrk
  wrk -t1 -c"$CONNS" -d"${DURATION}s" --latency -H "$AUTH" ${3:+-s "$3"} "$2" >"$DIR/$1.txt"
  local bad; bad=$(awk '/Non-2xx/ {print $NF}' "$DIR/$1.txt"); bad=${bad:-0}
  out "$1: requests/s (non-2xx)" "$(awk '/Requests\/sec/ {printf "%.0f", $2}' "$DIR/$1.txt") ($bad)"
  out "$1: p99" "$(to_ms "$(awk '$1 == "99%" {print $2}' "$DIR/$1.txt")") ms"
}
timed() { curl -s -o "$DIR/body" -w '%{time_total}' -H "$AUTH" "$B$1"; }
median_ms() { for _ in $(seq 1 "$RUNS"); do timed "$1"; echo; done | sort -n | awk '{a[NR]=$1} END {printf "%.1f", a[int((NR+1)/2)]*1000}'; }

echo "seeding $N recipients" >&2
START=$(date +%s.%N)
"$BIN" seed --data-dir "$DIR" --instance bench --count "$N" >/dev/null 2>&1
out "seeding $N recipients" "$(printf '%.1f s' "$(echo "$(date +%s.%N) - $START" | bc)")"

FILTER='AGE%3C45'
CREATE_S=$(timed "/recipients?objectResponse=true&pageSize=1000&filter=$FILTER")
DOC=$(sed -E 's/.*"documentId":"([^"]+)".*/\1/' "$DIR/body")
MATCHES=$(sed -E 's/.*"totalElements":([0-9]+).*/\1/' "$DIR/body")
out "paging document, filter AGE<45 ($MATCHES matches)" "$(printf '%.0f ms' "$(echo "$CREATE_S * 1000" | bc)")"
out "page of 1000 in the middle (median of $RUNS)" "$(median_ms "/recipients?objectResponse=true&documentId=$DOC&pageStart=$(( (MATCHES / 2000) * 1000 + 1 ))&pageSize=1000") ms"
PLAIN_S=$(timed "/recipients?filter=$FILTER")
out "same filter unpaged ($(( $(stat -c %s "$DIR/body") / 1048576 )) MiB)" "$(printf '%.0f ms' "$(echo "$PLAIN_S * 1000" | bc)")"

echo "loads" >&2
load "GET one recipient" "$B/recipients/$(( N / 2 ))"
load "POST a recipient" "$B/recipients" bench/create-recipient.lua
[ "$(upload_extension "$(guest_wasm hello)" hello.wasm)" = 201 ] || { echo "upload failed" >&2; exit 1; }
[ "$(curl -s "$B/extensions/open/bench/hello")" = hello ] || { echo "hello does not answer" >&2; exit 1; }
load "open extension (hello)" "$B/extensions/open/bench/hello"
[ "$(upload_extension "$(guest_wasm async-open)" job.wasm)" = 201 ] || { echo "upload failed" >&2; exit 1; }
cat >"$DIR/post.lua" <<'LUA'
wrk.method = "POST"
wrk.body = '{"event": "signup"}'
wrk.headers["Content-Type"] = "application/json"
LUA
load "async accepted (202)" "$B/extensions/open/bench/job/hook" "$DIR/post.lua"

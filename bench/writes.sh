#!/usr/bin/env bash
# Throughput (issue 20), on default flags: a sequential client of one credential, creating
# recipients under 16 connections (group commit), a One-To-Many batch of 1000 records, and reading
# one recipient against the native hello route of the same server, in one run. Prints one table
# row per measure. SQLite, or PostgreSQL with DATABASE_URL (a maintenance database URL, as
# scripts/postgres.sh prints).
#
#   bench/writes.sh
#   DATABASE_URL=$(scripts/postgres.sh) bench/writes.sh
set -euo pipefail
cd "$(dirname "$0")/.."
PROFILE=${PROFILE:-release}
PORT=${PORT:-18996}
DURATION=${DURATION:-5}
CONNS=${CONNS:-16}
FEATURES=testing   # the native hello route (GET /testing/open/{customer}/hello)
# Default flags (what a client meets on a default installation) but for the per-address
# smoothing of open routes: the native hello route is open, and one address calling it 30,000
# times a second is refused (429) under the defaults, which made the ratio below one against
# refusals until 2026-11-28. The recipients' calls carry a credential and keep their defaults.
SERVE_ARGS="--rate-per-address 100000000 --burst-per-address 100000000"
source bench/lib.sh
need_wrk
bench_instance
AUTH="Authorization: Bearer $TOKEN"
row() { echo "| $1 | $2 |"; }
load() { # name url [lua]: sets RPS, P99, BAD and CPU (the server's CPU us a call) of wrk -c$CONNS on url
  local before
  before=$(cpu_us)
  wrk -t1 -c"$CONNS" -d"${DURATION}s" --latency -H "$AUTH" ${3:+-s "$3"} "$2" >"$DIR/$1.txt"
  CPU=$(( ($(cpu_us) - before) / $(awk '/requests in/ {print $1}' "$DIR/$1.txt") ))
  RPS=$(awk '/Requests\/sec/ {printf "%.0f", $2}' "$DIR/$1.txt")
  P99=$(to_ms "$(awk '$1 == "99%" {print $2}' "$DIR/$1.txt")")
  BAD=$(awk '/Non-2xx/ {print $NF}' "$DIR/$1.txt"); BAD=${BAD:-0}
}

echo
echo "## Writes and reads: profile $PROFILE, $(nproc) cores, ${DATABASE_URL:+PostgreSQL}${DATABASE_URL:-SQLite}, default flags, wrk -t1 -c$CONNS for $DURATION s"
echo
echo "| measure | value |"
echo "|---|---|"

# 2,000 calls one after another on one keep-alive connection, as a sync loop would make them.
REFUSED=$(python3 - "$B" "$TOKEN" <<'PY'
import http.client, sys, urllib.parse
base, token = sys.argv[1], sys.argv[2]
u = urllib.parse.urlparse(base)
c = http.client.HTTPConnection(u.hostname, u.port)
bad = 0
for i in range(2000):
    c.request("GET", "/recipients?filter=AGE%3E200", headers={"Authorization": "Bearer " + token})
    r = c.getresponse(); r.read()
    bad += r.status != 200
print(bad)
PY
)
row "sequential client, one credential: calls refused of 2,000" "$REFUSED"

load create "$B/recipients" bench/create-recipient.lua
row "POST a recipient: created/s (non-2xx), server CPU a call" "$RPS ($BAD), $CPU us"
row "POST a recipient: p99" "$P99 ms"

# A batch of 1000 new records, then the same 1000 again (updates), each on a fresh recipient.
python3 -c 'import json; print(json.dumps([{"ID": "p%d" % i, "PRODUCT": "tea", "PURCHASED_AT": "2026-01-01T00:00:00Z"} for i in range(1000)]))' >"$DIR/batch.json"
times=()
for i in 1 2 3 4 5; do
  curl -s -o /dev/null -X PUT -H "$AUTH" -H 'Content-Type: application/json' "$B/recipients/$((900000 + i))" -d '{"personData": {}}'
  for pass in new again; do
    t=$(curl -s -o "$DIR/batch.out" -w '%{time_total}' -X POST -H "$AUTH" -H 'Content-Type: application/json' \
      "$B/recipients/$((900000 + i))/oneToManyTables/PURCHASES/:batchUpdateRecords" --data-binary @"$DIR/batch.json")
    grep -q '"succeeded":1000' "$DIR/batch.out" || { echo "batch failed: $(head -c 300 "$DIR/batch.out")" >&2; exit 1; }
    times+=("$pass $t")
  done
done
median() { printf '%s\n' "${times[@]}" | awk -v p="$1" '$1 == p {print $2}' | sort -n | awk '{a[NR]=$1} END {printf "%.1f", a[int((NR+1)/2)]*1000}'; }
row "One-To-Many batch of 1000 records, created (median of 5)" "$(median new) ms"
row "One-To-Many batch of 1000 records, updated (median of 5)" "$(median again) ms"

load read "$B/recipients/1"
READ=$RPS; READ_P99=$P99; READ_BAD=$BAD; READ_CPU=$CPU
load native "$B/testing/open/bench/hello"
row "GET one recipient: requests/s (non-2xx), p99, server CPU a call" "$READ ($READ_BAD), $READ_P99 ms, $READ_CPU us"
row "native hello route: requests/s (non-2xx), p99, server CPU a call" "$RPS ($BAD), $P99 ms, $CPU us"
row "GET one recipient / native hello route" "$(printf '%.2fx' "$(echo "$READ / $RPS" | bc -l)")"

#!/usr/bin/env bash
# The tail of a call during an import, two builds alternating (issue 38's last goal: GET one
# recipient's p99 during an import at most twice idle). Each build gets a server of its own with
# N recipients imported (default 1,000,000, 8 Person Data fields, bench/bulk.sh's file); then,
# ROUNDS times and build after build, GET one recipient at a steady 50/s for IDLE_S s (default
# 30) idle and over the whole import of the file with two fields of every row changed (each round
# changes them back: every row an update that writes), from its upload to its end. `PACED_S=15`
# measures only the first 15 s of the import instead (the method of the figures before
# 2026-11-29's fourth session). A p99 is the 1% slowest calls: of 500 or 750 calls (10 or 15 s)
# it is the 5th or 7th slowest and moved by a third from one run to the next on this machine; of
# the 1,500 idle calls and the 2,000 to 4,500 calls of a whole import it is steadier. Alternating
# rounds is what lets two builds be told apart. Prints a Markdown table of each round and the
# medians, with the number of calls behind each p99.
#
#   bench/import_tail.sh /tmp/herald-before /tmp/herald-after [ROUNDS]
#   DATABASE_URL=postgres://postgres@127.0.0.1:5432/postgres bench/import_tail.sh A B
set -euo pipefail
cd "$(dirname "$0")/.."
A=$1
B_BIN=$2
ROUNDS=${3:-3}
N=${N:-1000000}
IDLE_S=${IDLE_S:-30}
PACED_S=${PACED_S:-}
WORK=$(mktemp -d)
PIDS=()
DBS=()
cleanup() {
  for pid in "${PIDS[@]}"; do kill "$pid" 2>/dev/null || true; done
  wait 2>/dev/null || true
  for db in "${DBS[@]}"; do psql "$DATABASE_URL" -qc "DROP DATABASE IF EXISTS $db WITH (FORCE)" || true; done
  rm -rf "$WORK"
}
trap cleanup EXIT

bench/people_csv.sh "$N" >"$WORK/0.csv"
bench/people_csv.sh "$N" changed >"$WORK/1.csv"

# Starts build $1 as server number $2; sets URL_$2 and TOKEN_$2.
start() {
  local bin=$1 n=$2 port=$((18970 + $2)) url token
  mkdir -p "$WORK/s$n"
  if [ -n "${DATABASE_URL:-}" ]; then
    DBS+=("herald_tail_$$_$n")
    psql "$DATABASE_URL" -qc "CREATE DATABASE herald_tail_$$_$n"
    HERALD_DATABASE_URL="${DATABASE_URL%/*}/herald_tail_$$_$n" "$bin" serve --data-dir "$WORK/s$n" --listen 127.0.0.1:$port >"$WORK/s$n.log" 2>&1 &
  else
    env -u HERALD_DATABASE_URL "$bin" serve --data-dir "$WORK/s$n" --listen 127.0.0.1:$port >"$WORK/s$n.log" 2>&1 &
  fi
  PIDS+=($!)
  url=http://127.0.0.1:$port
  for _ in $(seq 1 100); do curl -s -o /dev/null "$url/oauth2/token" && break; sleep 0.2; done
  token=$(curl -s -X POST "$url/oauth2/token" -d grant_type=client_credentials -d client_id=demo-public-key \
    -d client_secret=demo-public-secret | sed -E 's/.*"access_token":"([^"]+)".*/\1/')
  printf -v "URL_$n" %s "$url"
  printf -v "TOKEN_$n" %s "$token"
}

# Imports file $3 into the server at $1 with token $2; prints the seconds it took.
import_file() {
  local url=$1 token=$2 file=$3 started id state
  started=$(date +%s.%N)
  id=$(curl -s -X POST "$url/recipients/:import" -H "Authorization: Bearer $token" -H 'Content-Type: text/csv; charset=utf-8' \
    --data-binary @"$file" | sed -nE 's/.*"importId":"([^"]+)".*/\1/p')
  [ -n "$id" ] || { echo "the import was refused" >&2; exit 1; }
  while :; do
    state=$(curl -s "$url/imports/$id" -H "Authorization: Bearer $token" | sed -nE 's/.*"state":"([a-z]+)".*/\1/p')
    case "$state" in completed) break ;; failed|cancelled) echo "the import ended $state" >&2; exit 1 ;; esac
    sleep 0.5
  done
  echo "$(date +%s.%N) - $started" | bc
}

# Waits until PostgreSQL runs no autovacuum (which the last import set off) and the machine rests.
quiet() {
  if [ -n "${DATABASE_URL:-}" ]; then
    for _ in $(seq 1 240); do
      [ "$(psql "$DATABASE_URL" -XAtc "SELECT count(*) FROM pg_stat_activity WHERE backend_type = 'autovacuum worker'")" = 0 ] && break
      sleep 0.5
    done
    # The last import's dirty pages written out now, not by a spread checkpoint during "idle".
    psql "$DATABASE_URL" -XqAtc CHECKPOINT
  fi
  sleep 2
}

start "$A" 1
start "$B_BIN" 2
echo "setting up: $N recipients in each server" >&2
import_file "$URL_1" "$TOKEN_1" "$WORK/0.csv" >/dev/null
import_file "$URL_2" "$TOKEN_2" "$WORK/0.csv" >/dev/null

echo "| round | build | idle p99 | during the import p99 (calls) | ratio | import |"
echo "|---|---|---|---|---|---|"
RESULTS=$WORK/results
: >"$RESULTS"
for round in $(seq 1 "$ROUNDS"); do
  file="$WORK/$((round % 2)).csv"
  for n in 1 2; do
    url_var=URL_$n token_var=TOKEN_$n
    url=${!url_var} token=${!token_var}
    name=$(basename "$([ $n = 1 ] && echo "$A" || echo "$B_BIN")")
    quiet
    idle=$(python3 bench/paced_latency.py "$url/recipients/1" "$token" "$IDLE_S" 50 2>/dev/null | awk '{print $1}')
    # Without PACED_S the client runs until the import has ended (a SIGTERM stops it).
    python3 bench/paced_latency.py "$url/recipients/1" "$token" "${PACED_S:-3600}" 50 >"$WORK/during" 2>/dev/null &
    paced=$!
    took=$(import_file "$url" "$token" "$file")
    [ -n "$PACED_S" ] || kill -TERM $paced
    wait $paced
    during=$(awk '{print $1}' "$WORK/during")
    calls=$(awk '{print $3}' "$WORK/during")
    ratio=$(echo "$during / $idle" | bc -l)
    printf "| %d | %s | %s ms | %s ms (%s) | %.2fx | %.1f s |\n" "$round" "$name" "$idle" "$during" "$calls" "$ratio" "$took"
    echo "$n $idle $during $ratio" >>"$RESULTS"
  done
done
echo
for n in 1 2; do
  name=$(basename "$([ $n = 1 ] && echo "$A" || echo "$B_BIN")")
  awk -v n=$n -v name="$name" '$1 == n { i[++k] = $2; d[k] = $3; r[k] = $4 }
    function median(a, k,   s, j, t, m) { for (j = 1; j <= k; j++) s[j] = a[j]
      for (j = 1; j <= k; j++) for (m = j + 1; m <= k; m++) if (s[m] < s[j]) { t = s[j]; s[j] = s[m]; s[m] = t }
      return k % 2 ? s[(k + 1) / 2] : (s[k / 2] + s[k / 2 + 1]) / 2 }
    END { printf "median %s: idle p99 %.2f ms, during %.2f ms, ratio %.2fx\n", name, median(i, k), median(d, k), median(r, k) }' "$RESULTS"
done

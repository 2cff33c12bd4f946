#!/usr/bin/env bash
# Bulk transfer benchmark (issue 38): imports a CSV of N recipients (8 Person Data fields, default
# 1,000,000) into an empty instance through `POST /recipients/:import`, imports the same file again
# (every row an update, changing nothing), the file with two fields of every row changed, exports
# everyone as CSV, imports 5 One-To-Many records for each of N/5 recipients (NDJSON), and prints a
# Markdown table: each one's time, the server's memory above idle during it (the largest of
# samples taken every half second), and the p99 of GET one recipient at 50 requests a second
# during the third import against idle (measured just before it; SHAPES=1 prints both
# distributions). REJECT_EVERY=K gives every K-th row of the first two files an AGE that is not a
# number: those rows are rejected, and the statements around them carry other numbers of rows.
#
#   bench/bulk.sh                               # release build, SQLite, 1,000,000 rows
#   N=100000 bench/bulk.sh
#   DATABASE_URL=postgres://postgres@127.0.0.1:5432/postgres bench/bulk.sh
set -euo pipefail
cd "$(dirname "$0")/.."
N=${N:-1000000}
PROFILE=${PROFILE:-release}
PORT=${PORT:-18997}

source bench/lib.sh

AUTH="Authorization: Bearer $TOKEN"
FILE="$DIR/people.csv"
CONTENT_TYPE='text/csv; charset=utf-8'
bench/people_csv.sh "$N" >"$FILE"
# AGE is the 8th field of a plain split on commas (LAST_NAME's quoted value holds one).
if [ -n "${REJECT_EVERY:-}" ]; then
  awk -F, -v OFS=, -v k="$REJECT_EVERY" 'NR > 1 && (NR - 1) % k == 0 { $8 = "x" } 1' "$FILE" >"$FILE.rejects"
  mv "$FILE.rejects" "$FILE"
fi
SIZE_MB=$(( $(stat -c %s "$FILE") / 1024 / 1024 ))

IDLE_KIB=$(rss_kib)
PEAK_KIB=0
sample() { status_kib VmRSS; [ "$STATUS_KIB" -gt "$PEAK_KIB" ] && PEAK_KIB=$STATUS_KIB; return 0; }

# Imports the file; sets IMPORT_S (from the upload's start to the import's end), COUNTS and PEAK_KIB.
import_file() {
  local started id state body
  PEAK_KIB=0
  started=$(date +%s.%N)
  id=$(curl -s -X POST "$B/recipients/:import" -H "$AUTH" -H "Content-Type: $CONTENT_TYPE" \
    --data-binary @"$FILE" | sed -nE 's/.*"importId":"([^"]+)".*/\1/p')
  [ -n "$id" ] || { echo "the import was refused" >&2; exit 1; }
  while :; do
    sample
    body=$(curl -s "$B/imports/$id" -H "$AUTH")
    state=$(echo "$body" | sed -nE 's/.*"state":"([a-z]+)".*/\1/p')
    case "$state" in completed|failed|cancelled) break ;; esac
    sleep 0.5
  done
  [ "$state" = completed ] || { echo "the import ended $state: $body" >&2; exit 1; }
  COUNTS=$(echo "$body" | sed -nE 's/.*"created":([0-9]+),"updated":([0-9]+),"rejected":([0-9]+).*/\1 created, \2 updated, \3 rejected/p')
  IMPORT_S=$(echo "$(date +%s.%N) - $started" | bc)
}

import_file; FIRST_S=$IMPORT_S; FIRST_COUNTS=$COUNTS; FIRST_MIB=$(( (PEAK_KIB - IDLE_KIB) / 1024 ))

import_file; SECOND_S=$IMPORT_S; SECOND_COUNTS=$COUNTS; SECOND_MIB=$(( (PEAK_KIB - IDLE_KIB) / 1024 ))

# The file with every row's FIRST_NAME and AGE changed: every row an update that writes (the
# second import's rows change nothing, and a row that changes nothing writes nothing). A client
# reads one recipient at a steady 50/s over its first $PACED_S seconds.
bench/people_csv.sh "$N" changed >"$FILE"
# Idle is measured first, once the database is quiet: PostgreSQL's autovacuum, which the first
# import's million rows set off, would otherwise run under the "idle" figure.
if [ -n "${DATABASE_URL:-}" ]; then
  for _ in $(seq 1 240); do
    [ "$(psql "$DATABASE_URL" -XAtc "SELECT count(*) FROM pg_stat_activity WHERE backend_type = 'autovacuum worker'")" = 0 ] && break
    sleep 0.5
  done
fi
IDLE_P99=$(python3 bench/paced_latency.py "$B/recipients/1" "$TOKEN" 10 50 2>"$DIR/idle.shape" | awk '{print $1}')
PACED_S=${PACED_S:-15}
python3 bench/paced_latency.py "$B/recipients/1" "$TOKEN" "$PACED_S" 50 >"$DIR/during" 2>"$DIR/during.shape" &
PACED=$!
import_file; THIRD_S=$IMPORT_S; THIRD_COUNTS=$COUNTS; THIRD_MIB=$(( (PEAK_KIB - IDLE_KIB) / 1024 ))
wait $PACED
DURING_P99=$(awk '{print $1}' "$DIR/during")
if [ -n "${SHAPES:-}" ]; then echo "idle:"; cat "$DIR/idle.shape"; echo "during:"; cat "$DIR/during.shape"; fi

PEAK_KIB=0
EXPORT_START=$(date +%s.%N)
curl -s -X POST "$B/recipients/:export" -H "$AUTH" -H 'Content-Type: application/json' -d '{}' -o "$DIR/out.csv" &
CURL=$!
while kill -0 $CURL 2>/dev/null; do sample; sleep 0.5; done
EXPORT_S=$(echo "$(date +%s.%N) - $EXPORT_START" | bc)
EXPORT_ROWS=$(( $(wc -l <"$DIR/out.csv") - 1 ))
EXPORT_MIB=$(( (PEAK_KIB - IDLE_KIB) / 1024 ))

# One-To-Many records: an NDJSON file of OTM_RECIPIENTS lines (default N/5), each an existing
# recipient with 5 PURCHASES records (1,000,000 records at the default N).
OTM_RECIPIENTS=${OTM_RECIPIENTS:-$(( N / 5 ))}
awk -v n="$OTM_RECIPIENTS" 'BEGIN {
  for (i = 1; i <= n; i++) {
    printf "{\"personData\": {\"USER_ID\": %d}, \"PURCHASES\": [", i
    for (j = 1; j <= 5; j++)
      printf "%s{\"ID\": \"o%d-%d\", \"PRODUCT\": \"Product %d\", \"AMOUNT\": %d.5, \"PURCHASED_AT\": \"2026-01-0%dT10:00:00.000Z\"}", (j > 1 ? ", " : ""), i, j, j, i % 90, j
    print "]}"
  }
}' >"$FILE"
CONTENT_TYPE=application/x-ndjson
import_file; OTM_S=$IMPORT_S; OTM_COUNTS=$COUNTS; OTM_MIB=$(( (PEAK_KIB - IDLE_KIB) / 1024 ))
OTM_RECORDS=$(( OTM_RECIPIENTS * 5 ))

BACKEND=SQLite; [ -n "${DATABASE_URL:-}" ] && BACKEND=PostgreSQL
echo
echo "Bulk transfer, $BACKEND, $N recipients ($SIZE_MB MiB of CSV), $PROFILE build, $(nproc) cores"
echo
echo "| measure | time | rows/s | memory above idle | notes |"
echo "|---|---|---|---|---|"
printf "| import %d new recipients (CSV, 8 fields) | %.1f s | %.0f | %d MiB | %s |\n" "$N" "$FIRST_S" "$(echo "$N / $FIRST_S" | bc -l)" "$FIRST_MIB" "$FIRST_COUNTS"
printf "| the same file again (all updates) | %.1f s | %.0f | %d MiB | %s |\n" "$SECOND_S" "$(echo "$N / $SECOND_S" | bc -l)" "$SECOND_MIB" "$SECOND_COUNTS"
printf "| a changed file (every row an update that writes 2 fields) | %.1f s | %.0f | %d MiB | %s |\n" "$THIRD_S" "$(echo "$N / $THIRD_S" | bc -l)" "$THIRD_MIB" "$THIRD_COUNTS"
printf "| export %d recipients as CSV | %.1f s | %.0f | %d MiB | %d rows written |\n" "$N" "$EXPORT_S" "$(echo "$N / $EXPORT_S" | bc -l)" "$EXPORT_MIB" "$EXPORT_ROWS"
printf "| import %d One-To-Many records for %d recipients (NDJSON, 5 a line) | %.1f s | %.0f | %d MiB | %s (recipients) |\n" "$OTM_RECORDS" "$OTM_RECIPIENTS" "$OTM_S" "$(echo "$OTM_RECORDS / $OTM_S" | bc -l)" "$OTM_MIB" "$OTM_COUNTS"
printf "| GET one recipient p99, during the changed file's import / idle | %s ms / %s ms | | | 50 requests/s |\n" "$DURING_P99" "$IDLE_P99"

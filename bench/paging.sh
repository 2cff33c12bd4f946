#!/usr/bin/env bash
# Paging benchmark (issue 4): seeds an instance with N recipients (default 1,000,000) using the
# seeding command, then measures against a real server over HTTP and prints a Markdown table:
# creating a filtered document matching about half of them, pages of 1000 (first, middle, last),
# the same filter without paging, and the server's memory with documents open.
#
#   bench/paging.sh                 # release build, 1,000,000 recipients
#   N=100000 PROFILE=dev bench/paging.sh
set -euo pipefail
cd "$(dirname "$0")/.."
N=${N:-1000000}
PROFILE=${PROFILE:-release}
PORT=${PORT:-18999}
RUNS=${RUNS:-5}

source bench/lib.sh

SEED_START=$(date +%s.%N)
"$BIN" seed --data-dir "$DIR" --instance demo --count "$N"
SEED_S=$(echo "$(date +%s.%N) - $SEED_START" | bc)

AUTH="Authorization: Bearer $TOKEN"
# Seconds of one call; the body goes to $DIR/body.
timed() { curl -s -o "$DIR/body" -w '%{time_total}' -H "$AUTH" "$B$1"; }
median_ms() { # path: the median of $RUNS calls, in ms
  for _ in $(seq 1 "$RUNS"); do timed "$1"; echo; done | sort -n | awk '{a[NR]=$1} END {printf "%.1f", a[int((NR+1)/2)]*1000}'
}
FILTER='AGE%3C45'   # AGE is spread evenly over 10..79 by the seeder: about half match

RSS0=$(rss_kib)
CREATE_S=$(timed "/recipients?objectResponse=true&pageSize=1000&filter=$FILTER")
DOC=$(sed -E 's/.*"documentId":"([^"]+)".*/\1/' "$DIR/body")
MATCHES=$(sed -E 's/.*"totalElements":([0-9]+).*/\1/' "$DIR/body")
LAST_START=$(( (MATCHES - 1) / 1000 * 1000 + 1 ))
MID_START=$(( (MATCHES / 2000) * 1000 + 1 ))
FIRST_MS=$(median_ms "/recipients?objectResponse=true&documentId=$DOC&pageStart=1&pageSize=1000")
MID_MS=$(median_ms "/recipients?objectResponse=true&documentId=$DOC&pageStart=$MID_START&pageSize=1000")
LAST_MS=$(median_ms "/recipients?objectResponse=true&documentId=$DOC&pageStart=$LAST_START&pageSize=1000")

# Memory of open documents: five more documents over every recipient.
RSS1=$(rss_kib)
ALL_S=$(timed "/recipients?objectResponse=true&pageSize=1")
for _ in 1 2 3 4; do timed "/recipients?objectResponse=true&pageSize=1" >/dev/null; done
RSS2=$(rss_kib)
PER_DOC_MIB=$(echo "scale=2; ($RSS2 - $RSS1) / 5 / 1024" | bc)

PLAIN_S=$(timed "/recipients?filter=$FILTER")
PLAIN_MIB=$(echo "scale=1; $(stat -c %s "$DIR/body") / 1048576" | bc)
RSS3=$(rss_kib)

echo
echo "## Paging benchmark: $N recipients, profile $PROFILE, $(nproc) cores"
echo
echo "| measure | value |"
echo "|---|---|"
printf '| seeding %s recipients (herald seed) | %.1f s |\n' "$N" "$SEED_S"
printf '| document creation, filter AGE<45 (%s matches) | %.0f ms |\n' "$MATCHES" "$(echo "$CREATE_S * 1000" | bc)"
printf '| document creation, no filter (%s matches) | %.0f ms |\n' "$N" "$(echo "$ALL_S * 1000" | bc)"
printf '| page of 1000, first (median of %s) | %s ms |\n' "$RUNS" "$FIRST_MS"
printf '| page of 1000, middle (pageStart %s) | %s ms |\n' "$MID_START" "$MID_MS"
printf '| page of 1000, last (pageStart %s) | %s ms |\n' "$LAST_START" "$LAST_MS"
printf '| same filter without paging (%s MiB of JSON) | %.0f ms |\n' "$PLAIN_MIB" "$(echo "$PLAIN_S * 1000" | bc)"
printf '| server RSS: start / after documents / after unpaged call | %s / %s / %s MiB |\n' $((RSS0/1024)) $((RSS2/1024)) $((RSS3/1024))
printf '| server memory per open %s-item document | %s MiB |\n' "$N" "$PER_DOC_MIB"

#!/usr/bin/env bash
# Limits benchmark (issue 7): sends bodies of 20 MB + 1 byte to a real server, 20 at a time, both
# with a declared length and chunked, and prints the answers and the server's memory (RSS)
# before and after. The 413 must come without the server holding the bodies.
#
#   bench/limits.sh              # release build
#   PROFILE=dev bench/limits.sh
set -euo pipefail
cd "$(dirname "$0")/.."
PROFILE=${PROFILE:-release}
PORT=${PORT:-18998}
ROUNDS=${ROUNDS:-5}

source bench/lib.sh
head -c $((20 * 1024 * 1024 + 1)) /dev/zero | tr '\0' ' ' >"$DIR/big.json"

send() { # mode: declared | chunked
  local extra=()
  [ "$1" = chunked ] && extra=(-H "Transfer-Encoding: chunked")
  curl -s -o /dev/null -w '%{http_code}\n' -X PUT "$B/globaldata/CAMPAIGN_NAME" -H "Authorization: Bearer $TOKEN" \
    -H 'Content-Type: application/json' "${extra[@]}" --data-binary @"$DIR/big.json"
}

RSS0=$(rss_kib)
for mode in declared chunked; do
  START=$(date +%s.%N)
  for _ in $(seq 1 "$ROUNDS"); do
    pids=()
    for _ in $(seq 1 20); do send $mode & pids+=($!); done
    wait "${pids[@]}"
  done >"$DIR/$mode.codes"
  ELAPSED=$(echo "$(date +%s.%N) - $START" | bc)
  eval "CODES_$mode=\"$(sort "$DIR/$mode.codes" | uniq -c | awk '{printf "%s x %s ", $1, $2}')\""
  eval "SECS_$mode=$ELAPSED"
  eval "RSS_$mode=$(( $(rss_kib) / 1024 ))"
  eval "PEAK_$mode=$(( $(peak_kib) / 1024 ))"
done

echo
echo "## Limits benchmark: bodies of 20 MB + 1 byte, 20 concurrent, $ROUNDS rounds, profile $PROFILE"
echo
echo "| measure | value |"
echo "|---|---|"
printf '| answers, declared length (%.1f s) | %s|\n' "$SECS_declared" "$CODES_declared"
printf '| answers, chunked (%.1f s) | %s|\n' "$SECS_chunked" "$CODES_chunked"
printf '| server RSS at start | %s MiB |\n' $((RSS0 / 1024))
printf '| after the declared-length bodies: RSS / peak | %s / %s MiB |\n' "$RSS_declared" "$PEAK_declared"
printf '| after the chunked bodies: RSS / peak | %s / %s MiB |\n' "$RSS_chunked" "$PEAK_chunked"

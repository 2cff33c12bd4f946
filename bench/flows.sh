#!/usr/bin/env bash
# Flows (issue 15): a scheduled flow with one condition extension (condition-adult) and one step
# extension (step-tagger, which writes the recipient's COUNTRY) over N seeded recipients: how many
# recipients a second go through condition + step, the server's memory while it runs, and the
# latency of GET one recipient while it runs compared with idle: under wrk -c4 (as fast as the
# server answers: what the sweep takes from its capacity) and at a steady 200 requests a second
# (bench/paced_latency.py: what an ordinary client waits), one after the other; and, from the
# server's own histogram (`--ops-listen`), how many of the paced GETs it took over 1 ms to answer
# (no wait of the client's is in that count: on a 2-core machine the client shares the cores).
#
#   bench/flows.sh                          # release build, SQLite, 100,000 and 1,000,000
#   SIZES="20000" bench/flows.sh            # quicker
#   DATABASE_URL=$(scripts/postgres.sh) bench/flows.sh   # on PostgreSQL
#   MORE_SERVE_ARGS="--background-cores shared" bench/flows.sh   # other `herald serve` flags
set -euo pipefail
cd "$(dirname "$0")/.."
SIZES=${SIZES:-"100000 1000000"}
PROFILE=${PROFILE:-release}
PORT=${PORT:-18995}
DURATION=${DURATION:-10}
# The flow's nodes (JSON); the default is the issue's condition + step.
NODES=${NODES:-'[{"condition": {"extension": "adult"}}, {"step": "tagger"}]'}
OPS=127.0.0.1:$((PORT + 1))
SERVE_ARGS="--rate-per-address 100000000 --burst-per-address 100000000 --ops-listen $OPS ${MORE_SERVE_ARGS:-}"
source bench/lib.sh
need_wrk
# An instance of the demo's data model whose daily cap no benchmark reaches (the demo's own, five
# times its 100,000 licensed recipients a day, is used up by the latency measures of two sizes,
# after which calls answer 429).
bench_instance
CONDITION=$(guest_wasm condition-adult)
STEP=$(guest_wasm step-tagger)
AUTH="Authorization: Bearer $TOKEN"
served() { # "<all> <within 1 ms>": the GETs of one recipient the server has answered, from its
  # own histogram (`--ops-listen`), which no wait of the client's is in
  local all=0 fast=0 line
  while read -r line; do
    case $line in
      *'route="/recipients/{recipient_id}",le="0.001"}'*) fast=${line##* } ;;
      *'route="/recipients/{recipient_id}",le="+Inf"}'*) all=${line##* } ;;
    esac
  done < <(curl -s "http://$OPS/metrics")
  echo "$all $fast"
}
paced() { # url: the p99s of GET url at 200 a second, one connection, for DURATION seconds: from
  # each request's time, and the same without the client's own late wake-ups (paced_latency.py);
  # then how many of those GETs the server itself took over 1 ms to answer
  local all fast all_after fast_after p99s
  read -r all fast < <(served)
  p99s=$(python3 bench/paced_latency.py "$1" "$TOKEN" "$DURATION" 200 | awk '{print $1, $2}')
  read -r all_after fast_after < <(served)
  echo "$p99s $(( (all_after - all) - (fast_after - fast) ))"
}
# Half a second, in bash itself (no process started: the latency is measured beside).
mkfifo "$DIR/pause"
exec {PAUSE_FD}<>"$DIR/pause"  # nobody writes to it: a read waits its whole timeout
pause() { read -r -t 0.5 -u "$PAUSE_FD" || true; }
# The server's memory into PEAK when above it (no process started: the latency is measured beside).
note_peak() {
  status_kib VmRSS
  if [ "$STATUS_KIB" -gt "$PEAK" ]; then PEAK=$STATUS_KIB; fi
}
p99() { # url: the p99 of wrk -c4 on it for DURATION seconds
  wrk -t1 -c4 -d"${DURATION}s" --latency -H "$AUTH" "$1" >"$DIR/wrk.txt"
  if grep -q "Non-2xx" "$DIR/wrk.txt"; then echo "wrk on $1: $(grep Non-2xx "$DIR/wrk.txt")" >&2; exit 1; fi
  to_ms "$(awk '$1 == "99%" {print $2}' "$DIR/wrk.txt")"
}
upload() { # file name type
  curl -s -o /dev/null -w '%{http_code}' -X POST "$B/assets/extensions" -H "$AUTH" -F "file=@$1;filename=$2" -F "type=$3"
}
# The flow's last firing: "<recipients> <done|going> <at>". Parsed by bash itself: a parser
# started twice a second (python3 takes 25 ms of CPU to start) tripled the paced client's p99 on
# an idle server (0.54 -> 1.65 ms), and the latency during a sweep is measured beside it.
progress() {
  local body last="" swept=0 state=going at=None
  body=$(curl -s -H "$AUTH" "$B/flows/sweep")
  [[ $body =~ \"lastFiring\":\{([^}]*)\} ]] && last=${BASH_REMATCH[1]}
  [[ $last =~ \"recipients\":([0-9]+) ]] && swept=${BASH_REMATCH[1]}
  [[ $last =~ \"done\":true ]] && state=done
  [[ $last =~ \"at\":\"([^\"]*)\" ]] && at=${BASH_REMATCH[1]// /T}
  echo "$swept $state $at"
}

echo
echo "## Flows: profile $PROFILE, $(nproc) cores, ${DATABASE_URL:+PostgreSQL}${DATABASE_URL:-SQLite}; nodes $NODES"
echo
echo "| recipients | recipients/s through condition + step | server RSS before / peak during | GET one recipient p99 idle / during the sweep (wrk -c4, as fast as it answers) | the same at 200 requests/s | the same, the client's own late wake-ups not counted | of those $((DURATION * 200)) GETs, how many the server took over 1 ms to answer |"
echo "|---|---|---|---|---|---|---|"
SEEDED=0
for N in $SIZES; do
  echo "seeding up to $N recipients" >&2
  "$BIN" seed --data-dir "$DIR" --instance bench --count $((N - SEEDED)) >/dev/null 2>&1
  SEEDED=$N
  [ "$(upload "$CONDITION" adult.wasm condition)" = 201 ] || [ "$(upload "$CONDITION" adult.wasm condition)" = 200 ] || true
  upload "$STEP" tagger.wasm step >/dev/null
  IDLE=$(p99 "$B/recipients/1")
  read -r PACED_IDLE PACED_SERVER_IDLE SLOW_IDLE < <(paced "$B/recipients/1")
  RSS_BEFORE=$(rss_kib)
  # Every minute: the bench waits for the next minute's firing, then for the end of its sweep
  # (a firing of another size's run may still be the last one the schedule shows).
  curl -s -o /dev/null -X DELETE -H "$AUTH" "$B/flows/sweep"
  curl -s -o /dev/null -X PUT -H "$AUTH" -H 'Content-Type: application/json' "$B/flows/sweep" \
    -d "{\"trigger\": {\"schedule\": \"* * * * *\", \"filter\": \"USER_ID>0\"}, \"nodes\": $NODES}"
  # Read once the flow exists again: a flow created under a deleted one's name shows that one's
  # last firing until its own first (the schedule's row outlives the flow).
  BEFORE=$(progress | cut -d' ' -f3)
  echo "waiting for the next minute's firing" >&2
  until read -r swept _ at < <(progress); [ "$swept" != 0 ] && [ "$at" != "$BEFORE" ]; do sleep 0.2; done
  START=$(date +%s.%N); FROM=$(progress | cut -d' ' -f1)
  # The latency is measured while the sweep goes on, and the sweep's end watched meanwhile (a
  # sweep shorter than DURATION makes the latency partly idle: use sizes that last longer).
  { p99 "$B/recipients/1" >"$DIR/during"; paced "$B/recipients/1" >"$DIR/paced"; } &
  LATENCY=$!
  PEAK=$(rss_kib)
  # While the latency is measured, only the server's memory is read (no request, no process);
  # then the sweep's progress, until it is done.
  while kill -0 $LATENCY 2>/dev/null; do
    pause; note_peak
  done
  wait $LATENCY
  read -r swept state _ < <(progress)
  if [ "$state" = done ]; then
    echo "the sweep of $N ended before the latency measures did: the latency 'during' is partly idle; use a larger size" >&2
  fi
  while read -r swept state _ < <(progress); [ "$state" != done ]; do
    pause; note_peak
    echo "  $swept of $N" >&2
  done
  END=$(date +%s.%N)
  DURING=$(cat "$DIR/during"); read -r PACED PACED_SERVER SLOW <"$DIR/paced"
  RATE=$(echo "($N - $FROM) / ($END - $START)" | bc)
  curl -s -o /dev/null -X DELETE -H "$AUTH" "$B/flows/sweep"
  echo "| $N | $RATE | $((RSS_BEFORE / 1024)) MiB / $((PEAK / 1024)) MiB | $IDLE ms / $DURING ms | $PACED_IDLE ms / $PACED ms | $PACED_SERVER_IDLE ms / $PACED_SERVER ms | $SLOW_IDLE / $SLOW |"
done

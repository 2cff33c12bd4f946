#!/usr/bin/env bash
# Two builds on one kind of call, alternating (A B A B ...), each round a fresh server under
# wrk -t1 -c16 for $DURATION s (`PERF=0 bench/profile.sh`): on a machine whose speed drifts
# within minutes, alternating is what makes a few microseconds visible. Prints each round and the
# median of each build's CPU a call (the server's user and system time over the load).
#
#   bench/compare.sh reuse /tmp/herald-before /tmp/herald-after [ROUNDS]
#   DATABASE_URL=postgres://... bench/compare.sh read A B
#
# WHAT is one of bench/profile.sh's: reuse, fresh, native, refused, read, create.
set -euo pipefail
cd "$(dirname "$0")/.."
WHAT=$1 A=$2 B=$3 ROUNDS=${4:-3}
export DURATION=${DURATION:-5}
median() { sort -n | awk '{ v[NR] = $1 } END { print (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2 }'; }
: >/tmp/compare.$$.a; : >/tmp/compare.$$.b
trap 'rm -f /tmp/compare.$$.a /tmp/compare.$$.b' EXIT
echo "| round | build | requests/s | CPU a call (us) | context switches a call |"
echo "|---|---|---|---|---|"
for round in $(seq 1 "$ROUNDS"); do
  for side in a b; do
    bin=$A; [ "$side" = b ] && bin=$B
    read -r _ rps cpu switches < <(PERF=0 HERALD_BIN=$bin bench/profile.sh "$WHAT" | tail -1)
    echo "$cpu" >>/tmp/compare.$$.$side
    echo "| $round | $(basename "$bin") | $rps | $cpu | $switches |"
  done
done
echo
echo "median CPU a call: $(basename "$A") $(median </tmp/compare.$$.a) us, $(basename "$B") $(median </tmp/compare.$$.b) us"

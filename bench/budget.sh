#!/usr/bin/env bash
# Herald's own path, route by route (issue 41's budget: at most 10 us of CPU a call around a
# guest or a store read, whichever route the call takes). Each route is loaded twice by
# `bench/profile.sh` (wrk -t1 -c16 on a fresh server): once without the profiler, for its
# requests/s and CPU a call, once under perf, for the split of that CPU by part of the call
# (self time by symbol, shares applied to the CPU a call measured without the profiler).
#
# Columns, in us of CPU a call: what is not Herald's path (the kernel; wasmtime, the guest's
# instance and call; hyper, HTTP's parsing and writing; the database: sqlx, SQLite's library or
# PostgreSQL's protocol), then the rest, counted as Herald's path: tokio's scheduling and I/O,
# allocation and copies, and Herald's code (its own functions, axum and tower, tracing and
# metrics, and whatever perf could not name). An upper bound: the allocations and copies that
# wasmtime, hyper or sqlx make (a fresh instance's memory zeroed, say), and the task scheduling
# that any tokio server pays, are counted as Herald's too. The `wasmtime serve` rows (WASMTIME=1) split the peer's
# call the same way: its "rest" is that same floor for a server with no path of its own.
#
#   HERALD_BIN=/tmp/herald bench/budget.sh                      # native, fresh, reuse, read
#   HERALD_BIN=/tmp/herald PG_URL=postgres://postgres@127.0.0.1:5432/postgres WASMTIME=1 bench/budget.sh
#
# PG_URL adds the read on PostgreSQL (a fresh database of that server, as DATABASE_URL does for
# the other scripts); WASMTIME=1 adds `wasmtime serve`'s fresh and reused calls (wasmtime-cli
# installed into bench/.tools as bench/extensions.sh does). ROUTES overrides the list.
set -euo pipefail
cd "$(dirname "$0")/.."
[ -n "${HERALD_BIN:-}" ] || { echo "give a release build with line tables: HERALD_BIN=... (see bench/profile.sh)" >&2; exit 2; }
export DURATION=${DURATION:-6}
ROUTES=${ROUTES:-native fresh reuse read}
PEER=${WASMTIME:-0}
unset DATABASE_URL WASMTIME
OUT=$(mktemp -d)
trap 'rm -rf "$OUT"' EXIT

# One row: $1 the label, then the environment and route for bench/profile.sh.
row() {
  local label=$1; shift
  local plain rps cpu
  plain=$(env PERF=0 "$@" | tail -1)
  rps=$(echo "$plain" | awk '{ print $(NF - 2) }')
  cpu=$(echo "$plain" | awk '{ print $(NF - 1) }')
  env "$@" >"$OUT/profile.txt"
  awk -F'|' -v label="$label" -v rps="$rps" -v cpu="$cpu" '
    /^\| (kernel|wasmtime|hyper|sqlx|herald itself|axum|tracing|tokio|allocation|other)/ {
      part = $2; pct = $3 + 0; total += pct
      if (part ~ /kernel/) kernel += pct
      else if (part ~ /wasmtime/) wasm += pct
      else if (part ~ /hyper/) http += pct
      else if (part ~ /sqlx/) db += pct
      else if (part ~ /tokio/) tokio += pct
      else if (part ~ /allocation/) alloc += pct
      else code += pct
    }
    END {
      if (total == 0) { print "no profile for " label > "/dev/stderr"; exit 1 }
      # The shares of what perf sampled, applied to the CPU a call without it.
      u = cpu / total
      printf "| %s | %s | %d | %.1f | %.1f | %.1f | %.1f | %.1f | %.1f | %.1f | **%.1f** |\n", label, rps, cpu, kernel * u, wasm * u, http * u, db * u, tokio * u, alloc * u, code * u, (tokio + alloc + code) * u
    }' "$OUT/profile.txt"
}

echo "| route | requests/s | CPU a call (us) | kernel | wasmtime | hyper | database | tokio | allocation and copies | Herald's code | Herald's path (upper bound) |"
echo "|---|---|---|---|---|---|---|---|---|---|---|"
for route in $ROUTES; do
  label=$route
  case "$route" in
    native) label="native hello (admission alone)" ;;
    fresh) label="Rust hello, fresh instance" ;;
    reuse) label="Rust hello, reused instance" ;;
    read) label="GET one recipient, SQLite" ;;
  esac
  row "$label" bench/profile.sh "$route"
done
if [ -n "${PG_URL:-}" ]; then
  row "GET one recipient, PostgreSQL" DATABASE_URL="$PG_URL" bench/profile.sh read
fi
if [ "$PEER" = 1 ]; then
  row "\`wasmtime serve\`, fresh" WASMTIME=1 bench/profile.sh fresh
  row "\`wasmtime serve\`, reused" WASMTIME=1 bench/profile.sh reuse
fi

#!/usr/bin/env bash
# Tenancy at scale (issue 35): what a node costs with many instances, on SQLite and PostgreSQL.
# For each size: N instances of one small model (`herald instance apply`), a Public Api
# credential each (`herald credentials create` with N `--instance`), then `herald serve` with its
# default settings, and:
#   - the time from start to listening;
#   - memory (RSS), threads and descriptors idle, and again after every instance was called once;
#   - PostgreSQL: Herald's connections (pg_stat_activity), idle and at most under load;
#   - the first call of each sleeping instance (a read; p50, p99);
#   - wrk reading one recipient of a random instance among all of them, then of one instance
#     alone, in the same run (requests/s, p50, p99).
# Prints a Markdown table (BENCHMARKS.md keeps the figures).
#
#   bench/tenants.sh                                     # release; 100, 1,000, 10,000; both
#   SIZES="100 1000" BACKENDS=sqlite PROFILE=dev bench/tenants.sh
#   DURATION=10 CONNS=4 bench/tenants.sh
#   SERVE_ARGS="--max-open-instances 128" SIZES=100 bench/tenants.sh   # other settings
set -euo pipefail
cd "$(dirname "$0")/.."
PROFILE=${PROFILE:-release}
SIZES=${SIZES:-"100 1000 10000"}
BACKENDS=${BACKENDS:-"sqlite postgres"}
DURATION=${DURATION:-10}
CONNS=${CONNS:-4}
PORT=${PORT:-18480}
OPS_PORT=$((PORT + 1))
B=http://127.0.0.1:$PORT

command -v wrk >/dev/null || apt-get install -y wrk >/dev/null 2>&1 || sudo apt-get install -y wrk >/dev/null
cargo build -q --profile "$PROFILE" -p herald-host
case "$PROFILE" in dev) BIN=target/debug/herald ;; *) BIN=target/$PROFILE/herald ;; esac
if [[ " $BACKENDS " == *" postgres "* ]]; then PG=$(scripts/postgres.sh); fi

WORK=$(mktemp -d)
PID=
DB=
cleanup() {
  [ -n "$PID" ] && { kill "$PID" 2>/dev/null; wait "$PID" 2>/dev/null || true; }
  [ -n "$DB" ] && psql "$PG" -qc "DROP DATABASE IF EXISTS $DB WITH (FORCE)" >/dev/null 2>&1 || true
  rm -rf "$WORK"
}
trap cleanup EXIT

ms() { date +%s%3N; }
# A wrk latency (`812.00us`, `1.20ms`, `2.01s`) in milliseconds.
to_ms() { awk -v v="$1" 'BEGIN { n = v + 0; if (v ~ /us$/) n /= 1000; else if (v ~ /ms$/) n = n; else if (v ~ /s$/) n *= 1000; printf "%.2f", n }'; }
usage() { # RSS MiB, threads, descriptors of the server
  local rss threads
  rss=$(awk '/^VmRSS:/ { printf "%.0f", $2 / 1024 }' /proc/$PID/status)
  threads=$(awk '/^Threads:/ { print $2 }' /proc/$PID/status)
  echo "$rss $threads $(ls /proc/$PID/fd | wc -l)"
}
pg_connections() {
  if [ -n "$DB" ]; then
    psql "$PG" -Atqc "SELECT count(*) FROM pg_stat_activity WHERE datname = '$DB'"
  else
    echo "-"
  fi
}
# wrk's requests/s, p50 and p99 for a file of tokens.
load() {
  local out
  out=$(TOKENS="$1" wrk -t1 -c"$CONNS" -d"${DURATION}s" --latency -s bench/random-instance.lua "$B")
  echo "$(echo "$out" | awk '/Requests\/sec/ { printf "%.0f", $2 }') $(to_ms "$(echo "$out" | awk '$1 == "50%" { print $2 }')") $(to_ms "$(echo "$out" | awk '$1 == "99%" { print $2 }')")"
}

ROWS=$WORK/rows
for backend in $BACKENDS; do
  for n in $SIZES; do
    dir=$WORK/data-$backend-$n
    mkdir -p "$dir"
    unset HERALD_DATABASE_URL
    DB=
    if [ "$backend" = postgres ]; then
      DB="herald_tenants_$$_$n"
      psql "$PG" -qc "CREATE DATABASE $DB"
      export HERALD_DATABASE_URL="${PG%/*}/$DB"
    fi
    echo "== $backend, $n instances: applying" >&2
    {
      for i in $(seq 1 "$n"); do printf '[[instance]]\ncustomer_id = "t%05d"\nenvironment = "staging"\n\n' "$i"; done
      printf '[model]\nrecipient_id = "ID"\nperson_data = [{ name = "ID", type = "NUMBER", unique = true }, { name = "EMAIL", type = "STRING" }]\n'
    } >"$WORK/instances.toml"
    started=$(ms)
    HERALD_DATA_DIR="$dir" "$BIN" instance apply "$WORK/instances.toml" >/dev/null
    apply_s=$(awk -v t=$(( $(ms) - started )) 'BEGIN { printf "%.1f", t / 1000 }')
    # shellcheck disable=SC2046
    HERALD_DATA_DIR="$dir" "$BIN" credentials create --scope public $(for i in $(seq 1 "$n"); do printf -- '--instance t%05d ' "$i"; done) >"$WORK/credentials"
    # With a single instance the output has no instance= prefix; sizes start at 2.

    echo "== $backend, $n instances: serving" >&2
    started=$(ms)
    HERALD_DATA_DIR="$dir" "$BIN" serve --listen 127.0.0.1:$PORT --ops-listen 127.0.0.1:$OPS_PORT \
      --rate-per-address 1000000 --burst-per-address 1000000 --rate-per-credential 1000000 --burst-per-credential 1000000 \
      ${SERVE_ARGS:-} >"$WORK/server.log" 2>&1 &
    PID=$!
    until curl -s -o /dev/null "$B/oauth2/token"; do sleep 0.005; done
    listen_ms=$(( $(ms) - started ))
    sleep 3
    read -r idle_rss idle_threads idle_fds <<<"$(usage)"
    idle_pg=$(pg_connections)

    echo "== $backend, $n instances: a first call each" >&2
    read -r first_p50 first_p99 <<<"$(python3 bench/tenant_calls.py "$B" "$WORK/credentials" "$WORK/tokens")"
    read -r called_rss called_threads called_fds <<<"$(usage)"

    echo "== $backend, $n instances: random instances, then one" >&2
    peak_pg=0
    ( while sleep 0.2; do pg_connections; done ) >"$WORK/pg-samples" 2>/dev/null &
    sampler=$!
    read -r random_rps random_p50 random_p99 <<<"$(load "$WORK/tokens")"
    head -n1 "$WORK/tokens" >"$WORK/one-token"
    read -r one_rps one_p50 one_p99 <<<"$(load "$WORK/one-token")"
    kill $sampler 2>/dev/null; wait $sampler 2>/dev/null || true
    [ -n "$DB" ] && peak_pg=$(sort -n "$WORK/pg-samples" | tail -n1)
    [ -z "$DB" ] && peak_pg="-"
    kill "$PID"; wait "$PID" 2>/dev/null || true
    PID=
    if [ -n "$DB" ]; then psql "$PG" -qc "DROP DATABASE IF EXISTS $DB WITH (FORCE)" >/dev/null; DB=; fi
    rm -rf "$dir"
    echo "| $backend | $n | ${SERVE_ARGS:-defaults} | $apply_s | $listen_ms | $idle_rss / $idle_threads / $idle_fds | $called_rss / $called_threads / $called_fds | $idle_pg / $peak_pg | $first_p50 / $first_p99 | $random_rps, $random_p50 / $random_p99 | $one_rps, $one_p50 / $one_p99 |" >>"$ROWS"
  done
done

echo
echo "## Tenants: profile $PROFILE, $(nproc) cores, wrk -t1 -c$CONNS for $DURATION s"
echo
echo "| backend | instances | settings | apply (s) | start to listening (ms) | idle: RSS MiB / threads / fds | after a call each: RSS MiB / threads / fds | PostgreSQL connections idle / at most | first call of a sleeping instance p50 / p99 (ms) | random instance: req/s, p50 / p99 (ms) | one instance: req/s, p50 / p99 (ms) |"
echo "|---|---|---|---|---|---|---|---|---|---|---|"
cat "$ROWS"

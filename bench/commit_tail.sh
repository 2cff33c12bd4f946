#!/usr/bin/env bash
# What a commit waits for on this machine's PostgreSQL, idle and during bulk writes: three
# clients at a steady 50 transactions a second each (pgbench -R 50), one updating a row with
# synchronous commits (PostgreSQL's default, which Herald's leases of calls in flight use), one
# updating another row with `synchronous_commit = off` (tried for the leases on 2026-12-02, and
# backed out), and one `SELECT 1` (a round trip that writes nothing); first for IDLE_S seconds
# alone, then for BULK_S seconds while another connection writes a million-row table in
# transactions of 100,000 rows (the shape of an import's log, without Herald). Prints a Markdown
# table of each client's p50, p90, p99 and largest latency.
#
#   DATABASE_URL=postgres://postgres@127.0.0.1:5432/postgres bench/commit_tail.sh
set -euo pipefail
cd "$(dirname "$0")/.."
: "${DATABASE_URL:?DATABASE_URL names a PostgreSQL server (its database is left alone; one is made for the run)}"
IDLE_S=${IDLE_S:-20}
BULK_S=${BULK_S:-40}
command -v pgbench >/dev/null || { echo "commit_tail.sh: pgbench (Debian's postgresql-client) is needed" >&2; exit 1; }
DB=herald_commit_tail_$$
URL="${DATABASE_URL%/*}/$DB"
WORK=$(mktemp -d)
BULK=
cleanup() {
  [ -n "$BULK" ] && kill "$BULK" 2>/dev/null || true
  wait 2>/dev/null || true
  psql "$DATABASE_URL" -qc "DROP DATABASE IF EXISTS $DB WITH (FORCE)" || true
  rm -rf "$WORK"
}
trap cleanup EXIT
psql "$DATABASE_URL" -qc "CREATE DATABASE $DB"
psql "$URL" -qc "CREATE TABLE probe (id int PRIMARY KEY, n int)" -qc "INSERT INTO probe VALUES (1, 0), (2, 0)" \
  -qc "CREATE TABLE bulk (id bigint PRIMARY KEY, a text, b text, c int)"
echo 'UPDATE probe SET n = n + 1 WHERE id = 1;' >"$WORK/sync.sql"
echo 'UPDATE probe SET n = n + 1 WHERE id = 2;' >"$WORK/async.sql"
echo 'SELECT 1;' >"$WORK/select.sql"

# Runs the three clients for $1 seconds; prints a table row per client, phase $2.
probe() {
  local seconds=$1 phase=$2
  local clients=()
  (cd "$WORK" && rm -f sync.[0-9]* async.[0-9]* select.[0-9]*)
  for client in sync async select; do
    local options=
    [ "$client" = async ] && options='-c synchronous_commit=off'
    # Each client's script is $client.sql; its log files are $client.<pid>.
    (cd "$WORK" && PGOPTIONS="$options" pgbench -n -R 50 -T "$seconds" -f "$client.sql" -l --log-prefix="$client" "$URL" \
      >/dev/null 2>&1) &
    clients+=($!)
  done
  wait "${clients[@]}"
  for client in sync async select; do
    # pgbench's log: client, transaction, latency in microseconds, ...
    cat "$WORK/$client".[0-9]* | awk '{print $3}' | sort -n | awk -v c="$client" -v p="$phase" '{a[NR] = $1}
      END { printf "| %s | %s | %d | %.2f ms | %.2f ms | %.2f ms | %.2f ms |\n", p, c, NR,
        a[int(NR * 0.5)] / 1000, a[int(NR * 0.9)] / 1000, a[int(NR * 0.99)] / 1000, a[NR] / 1000 }'
  done
}

echo "| phase | client | transactions | p50 | p90 | p99 | largest |"
echo "|---|---|---|---|---|---|---|"
psql "$URL" -qc CHECKPOINT
probe "$IDLE_S" idle
# Bulk writes: a million rows in transactions of 100,000, written again and again until stopped.
(
  round=0
  while :; do
    for part in $(seq 0 9); do
      psql "$URL" -qc "INSERT INTO bulk SELECT g, md5(g::text), md5((g + $round)::text), g % 97
        FROM generate_series($part * 100000 + 1, ($part + 1) * 100000) g
        ON CONFLICT (id) DO UPDATE SET b = EXCLUDED.b, c = EXCLUDED.c + 1" >/dev/null 2>&1 || exit 0
    done
    round=$((round + 1))
  done
) &
BULK=$!
sleep 2
probe "$BULK_S" "bulk writes"

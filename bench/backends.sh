#!/usr/bin/env bash
# SQLite and PostgreSQL side by side (issue 8): the same recipient scenarios (seeding N
# recipients, a paging document, a page, an unpaged filter, reading and creating recipients under
# load) and extension scenarios (an open extension, accepting asynchronous calls) against each
# backend, one after the other, on this machine. PostgreSQL is the one scripts/postgres.sh finds
# or starts; the server gets a fresh database of it.
#
#   bench/backends.sh                    # release build, 200,000 recipients
#   N=20000 DURATION=3 bench/backends.sh
set -euo pipefail
cd "$(dirname "$0")/.."
OUT=$(mktemp -d)
trap 'rm -rf "$OUT"' EXIT
PG=$(scripts/postgres.sh)
echo "== SQLite" >&2
env -u DATABASE_URL bench/backend-scenarios.sh >"$OUT/sqlite"
echo "== PostgreSQL" >&2
DATABASE_URL="$PG" bench/backend-scenarios.sh >"$OUT/postgres"

echo
echo "## Backends: profile ${PROFILE:-release}, $(nproc) cores, wrk -t1 -c${CONNS:-16} for ${DURATION:-5} s per load"
echo
echo "| measure | SQLite | PostgreSQL |"
echo "|---|---|---|"
paste -d'|' "$OUT/sqlite" <(cut -d'|' -f2 "$OUT/postgres") | awk -F'|' '{printf "| %s | %s | %s |\n", $1, $2, $3}'

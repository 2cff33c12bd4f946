#!/usr/bin/env bash
# Prints the URL of a PostgreSQL server the test suite may create databases on (as user postgres,
# trust authentication), starting one when needed:
#   1. $HERALD_TEST_POSTGRES if it is set and answers;
#   2. the server on 127.0.0.1:5432, if one answers (the project's machines run one);
#   3. otherwise (or always, with HERALD_PG_PRIVATE=1) a private cluster on loopback, under
#      $HERALD_PG_DIR (default target/postgres), installed from Debian's packages if PostgreSQL is
#      missing, with $HERALD_PG_MAX_CONNECTIONS connections (default 500). `scripts/postgres.sh
#      stop` stops that private cluster.
# Progress goes to stderr; only the URL goes to stdout.
set -euo pipefail
cd "$(dirname "$0")/.."

PG_DIR="${HERALD_PG_DIR:-$PWD/target/postgres}"
PG_PORT="${HERALD_PG_PORT:-55432}"
PG_MAX_CONNECTIONS="${HERALD_PG_MAX_CONNECTIONS:-500}"
say() { echo "postgres.sh: $*" >&2; }

answers() { # url
  command -v psql >/dev/null 2>&1 && psql "$1" -Atqc 'select 1' >/dev/null 2>&1
}

pg_bin() {
  local dir
  dir=$(ls -d /usr/lib/postgresql/*/bin 2>/dev/null | sort -V | tail -n1 || true)
  [ -n "$dir" ] && [ -x "$dir/initdb" ] && echo "$dir"
}

as_postgres() {
  if [ "$(id -u)" = 0 ]; then runuser -u postgres -- "$@"; else "$@"; fi
}

if [ "${1:-}" = stop ]; then
  bin=$(pg_bin || true)
  if [ -n "$bin" ] && [ -f "$PG_DIR/data/postmaster.pid" ]; then
    as_postgres "$bin/pg_ctl" -D "$PG_DIR/data" -m fast stop >&2 || true
  fi
  exit 0
fi

if [ "${HERALD_PG_PRIVATE:-}" != 1 ]; then
  if [ -n "${HERALD_TEST_POSTGRES:-}" ] && answers "$HERALD_TEST_POSTGRES"; then
    echo "$HERALD_TEST_POSTGRES"; exit 0
  fi
  if answers "postgres://postgres@127.0.0.1:5432/postgres"; then
    echo "postgres://postgres@127.0.0.1:5432/postgres"; exit 0
  fi
fi
private="postgres://postgres@127.0.0.1:$PG_PORT/postgres"
if answers "$private"; then
  echo "$private"; exit 0
fi

if [ -z "$(pg_bin || true)" ] || ! command -v psql >/dev/null 2>&1; then
  say "installing PostgreSQL from Debian's packages"
  export DEBIAN_FRONTEND=noninteractive
  apt-get update -qq >&2
  apt-get install -y -qq postgresql >&2
fi
bin=$(pg_bin)
mkdir -p "$PG_DIR"
if [ "$(id -u)" = 0 ]; then chown postgres "$PG_DIR"; fi
if [ ! -f "$PG_DIR/data/PG_VERSION" ]; then
  say "creating a private cluster in $PG_DIR/data"
  as_postgres "$bin/initdb" -D "$PG_DIR/data" -U postgres --auth=trust --no-sync >&2
fi
say "starting the private cluster on 127.0.0.1:$PG_PORT"
as_postgres "$bin/pg_ctl" -D "$PG_DIR/data" -l "$PG_DIR/log" -w \
  -o "-c listen_addresses=127.0.0.1 -p $PG_PORT -k $PG_DIR -c fsync=off -c max_connections=$PG_MAX_CONNECTIONS" start >&2
answers "$private" || { say "the private cluster does not answer; see $PG_DIR/log"; exit 1; }
echo "$private"

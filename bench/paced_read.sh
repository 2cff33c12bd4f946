#!/usr/bin/env bash
# A call's latency at a modest, steady rate (GET one recipient, or an extension's call) (issue 41: "p99 must not get worse"),
# two builds alternated: a closed loop's p99 (bench/writes.sh) grows with the rate a build
# reaches, so a faster build shows a longer tail there; at the same paced rate the two tails
# compare. Each round starts a fresh server of one build (the bench instance of bench/lib.sh,
# with one recipient) and runs bench/paced_latency.py on one keep-alive connection at $RATE
# calls a second for $DURATION s (default 15) after a 2 s warm-up. Prints one row a round. SQLite, or
# PostgreSQL with DATABASE_URL (a maintenance database URL, as for bench/writes.sh). ROUTE=fresh
# or ROUTE=reuse paces the Rust hello through the open extensions endpoint instead (a fresh
# instance a call, or built with its reuse opt-in, as `bench/profile.sh` loads them).
#
#   bench/paced_read.sh /tmp/herald-before /tmp/herald-after
#   DATABASE_URL=postgres://postgres@127.0.0.1:5432/postgres ROUNDS=4 bench/paced_read.sh A B
#   ROUTE=reuse bench/paced_read.sh A B
#
# One sequential client reads at most a few thousand times a second: keep RATE well under that
# (the default 1,000), or the client's own queue makes the tail.
set -euo pipefail
cd "$(dirname "$0")/.."
A=$1 B=$2
ROUNDS=${ROUNDS:-2} RATE=${RATE:-1000} SECONDS_EACH=${DURATION:-15}
PORT=${PORT:-18980}
export ROUTE=${ROUTE:-read}
case "$ROUTE" in
  read) WHAT="GET one recipient" ;;
  fresh | reuse)
    WHAT="the Rust hello ($ROUTE)"
    FEATURES=(); [ "$ROUTE" = fresh ] || FEATURES=(--features reuse)
    rustup target add wasm32-wasip2 >/dev/null 2>&1 || true
    cargo build -q --release --target wasm32-wasip2 --manifest-path guest-examples/rust/Cargo.toml -p hello "${FEATURES[@]}"
    export WASM=$(mktemp)
    trap 'rm -f "$WASM"' EXIT
    cp guest-examples/rust/target/wasm32-wasip2/release/hello.wasm "$WASM"
    ;;
  *) echo "ROUTE is read, fresh or reuse" >&2; exit 2 ;;
esac
echo "## $WHAT at $RATE calls a second, one connection, $SECONDS_EACH s a round, ${DATABASE_URL:+PostgreSQL}${DATABASE_URL:-SQLite}"
echo
echo "| round | build | p50 | p90 | p99 | max (ms, from each call's due time) |"
echo "|---|---|---|---|---|---|"
for round in $(seq 1 "$ROUNDS"); do
  for bin in "$A" "$B"; do
    row=$(HERALD_BIN=$bin PORT=$PORT RATE=$RATE SECONDS_EACH=$SECONDS_EACH bash -c '
      set -euo pipefail
      SERVE_ARGS="--rate-per-address 100000000 --burst-per-address 100000000"
      source bench/lib.sh
      bench_instance
      if [ "$ROUTE" = read ]; then
        URL=$B/recipients/1
        curl -s -o /dev/null -X PUT -H "Authorization: Bearer $TOKEN" -H "Content-Type: application/json" "$URL" -d "{\"personData\": {}}"
      else
        URL=$B/extensions/open/bench/hello
        [ "$(upload_extension "$WASM" hello.wasm)" = 201 ] || { echo "upload failed" >&2; exit 1; }
      fi
      [ "$(curl -s -o /dev/null -w "%{http_code}" -H "Authorization: Bearer $TOKEN" "$URL")" = 200 ] || { echo "$URL does not answer 200" >&2; exit 1; }
      python3 bench/paced_latency.py "$URL" "$TOKEN" 2 "$RATE" >/dev/null 2>&1
      python3 bench/paced_latency.py "$URL" "$TOKEN" "$SECONDS_EACH" "$RATE" 2>&1 >/dev/null | grep "from due"')
    echo "$row" | awk -v r="$round" -v b="$(basename "$bin")" '{ print "| " r " | " b " | " $6 " | " $8 " | " $10 " | " $12 " |" }'
  done
done

#!/usr/bin/env bash
# Async queue benchmark (issue 5): wrk sends calls of a trivial asynchronous open extension for
# DURATION seconds (CONNS connections; the instance admits 20 calls at once); every 202 is a job
# committed to the control database. Then the script waits for the workers to finish them all and
# counts: accepted per second, completed per second (from the first call to the last completion),
# and whether every accepted job completed.
#
#   bench/queue.sh                 # release build
#   PROFILE=dev DURATION=5 bench/queue.sh
set -euo pipefail
cd "$(dirname "$0")/.."
PROFILE=${PROFILE:-release}
PORT=${PORT:-18997}
DURATION=${DURATION:-10}
CONNS=${CONNS:-16}
SERVE_ARGS="--rate-per-address 100000000 --burst-per-address 100000000 ${EXTRA_SERVE_ARGS:-}"
source bench/lib.sh
need_wrk
WASM=$(guest_wasm async-open)
bench_instance
[ "$(upload_extension "$WASM" job.wasm)" = 201 ] || { echo "upload failed" >&2; exit 1; }

jobs_in() { # states... -> count, read by another process (python's sqlite3), as an operator would
  python3 - "$DIR/control.db" "$@" <<'PY'
import sqlite3, sys
db = sqlite3.connect(f"file:{sys.argv[1]}?mode=ro", uri=True)
states = sys.argv[2:]
print(db.execute(f"SELECT COUNT(*) FROM extension_jobs WHERE state IN ({','.join('?' * len(states))})", states).fetchone()[0])
PY
}

cat >"$DIR/post.lua" <<'LUA'
wrk.method = "POST"
wrk.body = '{"event": "signup"}'
wrk.headers["Content-Type"] = "application/json"
LUA
START=$(date +%s.%N)
wrk -t1 -c"$CONNS" -d"${DURATION}s" --latency -s "$DIR/post.lua" "$B/extensions/open/bench/job/hook" >"$DIR/wrk.txt"
ENQUEUED_AT=$(date +%s.%N)
while [ "$(jobs_in queued running)" != 0 ]; do sleep 0.1; done
[ -z "${KEEP:-}" ] || { python3 -c "import sqlite3,sys; print(sqlite3.connect(sys.argv[1]).execute(\"SELECT outcome, COUNT(*) FROM extension_jobs WHERE state='failed' GROUP BY outcome\").fetchall())" "$DIR/control.db"; grep -i warn "$DIR/server.log" | head -5 || true; }
DONE_AT=$(date +%s.%N)
SENT=$(awk '/requests in/ {print $1}' "$DIR/wrk.txt")
REFUSED=$(awk '/Non-2xx/ {print $NF}' "$DIR/wrk.txt"); REFUSED=${REFUSED:-0}
ACCEPTED=$((SENT - REFUSED))
DONE=$(jobs_in done); FAILED=$(jobs_in failed); STORED=$(jobs_in queued running done failed)
P99=$(awk '/99%/ {print $2}' "$DIR/wrk.txt")

echo
echo "## Async queue benchmark: $CONNS connections for ${DURATION} s, profile $PROFILE, SQLite"
echo
echo "| measure | value |"
echo "|---|---|"
echo "| 202s received by wrk / refused / jobs stored | $ACCEPTED / $REFUSED / $STORED |"
printf '| accepted per second | %.0f |\n' "$(echo "$ACCEPTED / ($ENQUEUED_AT - $START)" | bc -l)"
echo "| latency of the 202, p99 | $P99 |"
printf '| completed per second (first call to last completion, %.1f s) | %.0f |\n' "$(echo "$DONE_AT - $START" | bc -l)" "$(echo "$DONE / ($DONE_AT - $START)" | bc -l)"
echo "| jobs completed / failed / lost (202 sent, no job) | $DONE / $FAILED / $(( ACCEPTED > STORED ? ACCEPTED - STORED : 0 )) |"
# wrk counts the answers it read; the calls in flight when it stops are stored too (STORED >= 202s).

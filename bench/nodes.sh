#!/usr/bin/env bash
# Several nodes (issue 36): one, two and three `herald serve` processes on one PostgreSQL database
# behind HAProxy (round robin, no affinity), on this machine's loopback. For each size, wrk through
# the balancer: GET one recipient, and POST a new recipient, each with the limit of calls in flight
# counted across the nodes (`--calls-in-flight-scope cluster`, the default: a lease in the
# database per call) and on each node alone (`node`), in the same run, so the table shows what
# the cluster-wide limit costs a call. On a 2-core machine more nodes cannot be faster than one:
# the point is the overhead. Prints a Markdown table (BENCHMARKS.md keeps the figures).
#
#   bench/nodes.sh                          # release, 1 2 3 nodes, 10 s a measure, 8 connections
#   NODES="1 3" DURATION=5 PROFILE=dev bench/nodes.sh
#   DATABASE_URL=postgres://postgres@127.0.0.1:5432/postgres bench/nodes.sh
set -euo pipefail
cd "$(dirname "$0")/.."
PROFILE=${PROFILE:-release}
NODES=${NODES:-"1 2 3"}
DURATION=${DURATION:-10}
CONNS=${CONNS:-8}
PORT=${PORT:-18560}
command -v wrk >/dev/null || apt-get install -y wrk >/dev/null 2>&1 || sudo apt-get install -y wrk >/dev/null
command -v haproxy >/dev/null || apt-get install -y haproxy >/dev/null 2>&1 || sudo apt-get install -y haproxy >/dev/null
DATABASE_URL=${DATABASE_URL:-$(scripts/postgres.sh)}
cargo build -q --profile "$PROFILE" -p herald-host
case "$PROFILE" in dev) BIN=$PWD/target/debug/herald ;; *) BIN=$PWD/target/$PROFILE/herald ;; esac
WORK=$(mktemp -d)
DB="herald_nodes_$$"
PIDS=()
stop_all() {
  for pid in "${PIDS[@]}"; do kill "$pid" 2>/dev/null || true; done
  for pid in "${PIDS[@]}"; do wait "$pid" 2>/dev/null || true; done
  PIDS=()
}
cleanup() {
  stop_all
  psql "$DATABASE_URL" -qc "DROP DATABASE IF EXISTS $DB WITH (FORCE)" >/dev/null 2>&1 || true
  rm -rf "$WORK"
}
trap cleanup EXIT
to_ms() { awk -v v="$1" 'BEGIN { n = v + 0; if (v ~ /us$/) n /= 1000; else if (v ~ /ms$/) n = n; else if (v ~ /s$/) n *= 1000; printf "%.2f", n }'; }
B=http://127.0.0.1:$PORT

# One database for the whole run: the bench instance (the demo's model, a daily cap no run
# reaches) and a credential of it, made once with the CLI.
psql "$DATABASE_URL" -qc "CREATE DATABASE $DB" >/dev/null
export HERALD_DATABASE_URL="${DATABASE_URL%/*}/$DB"
export HERALD_DATA_DIR="$WORK/cli"
{ printf '[[instance]]\ncustomer_id = "bench"\nenvironment = "production"\nlicensed_uar = 100000000\ndaily_cap = 1000000000\n\n'
  sed -n '/^\[model\]/,$p' host/instances/demo.toml | awk '/^\[/ { skip = ($0 == "[[model.flows]]") } !skip'; } >"$WORK/bench.toml"
"$BIN" instance apply "$WORK/bench.toml" >/dev/null
created=$("$BIN" credentials create --instance bench --scope public)
CLIENT_ID=$(echo "$created" | sed -n 's/^client_id=//p'); SECRET=$(echo "$created" | sed -n 's/^client_secret=//p')

start_cluster() { # nodes scope
  local n=$1 scope=$2 i config="$WORK/haproxy.cfg"
  printf 'global\n  maxconn 4000\ndefaults\n  mode http\n  timeout connect 2s\n  timeout client 60s\n  timeout server 60s\nfrontend api\n  bind 127.0.0.1:%s\n  default_backend nodes\nbackend nodes\n  balance roundrobin\n' "$PORT" >"$config"
  for i in $(seq 1 "$n"); do
    mkdir -p "$WORK/node$i"
    HERALD_DATA_DIR="$WORK/node$i" "$BIN" serve --listen "127.0.0.1:$((PORT + i))" --no-demo --calls-in-flight-scope "$scope" \
      --rate-per-address 100000 --burst-per-address 100000 >"$WORK/node$i.log" 2>&1 &
    PIDS+=($!)
    printf '  server n%s 127.0.0.1:%s\n' "$i" "$((PORT + i))" >>"$config"
  done
  haproxy -db -f "$config" >"$WORK/haproxy.log" 2>&1 &
  PIDS+=($!)
  for i in $(seq 1 "$n"); do
    for _ in $(seq 1 100); do curl -s -o /dev/null "http://127.0.0.1:$((PORT + i))/oauth2/token" && break; sleep 0.2; done
  done
  for _ in $(seq 1 100); do
    TOKEN=$(curl -s -X POST "$B/oauth2/token" -d grant_type=client_credentials -d client_id="$CLIENT_ID" \
      -d client_secret="$SECRET" | sed -nE 's/.*"access_token":"([^"]+)".*/\1/p')
    [ -n "$TOKEN" ] && break; sleep 0.2
  done
}

measure() { # label wrk-args... -> "rps p50 p99"
  local out
  out=$(wrk -t2 -c"$CONNS" -d"${DURATION}s" --latency -H "Authorization: Bearer $TOKEN" "$@")
  local rps p50 p99 non2xx
  rps=$(echo "$out" | awk '/Requests\/sec/ {printf "%d", $2}')
  p50=$(to_ms "$(echo "$out" | awk '$1 == "50%" {print $2}')")
  p99=$(to_ms "$(echo "$out" | awk '$1 == "99%" {print $2}')")
  non2xx=$(echo "$out" | awk '/Non-2xx/ {print $5}')
  echo "$rps $p50 $p99 ${non2xx:-0}"
}

echo "| nodes | calls in flight counted | GET recipient req/s | p50 ms | p99 ms | POST recipient req/s | p50 ms | p99 ms |"
echo "|---|---|---|---|---|---|---|---|"
declare -A GET_RPS POST_RPS
for n in $NODES; do
  for scope in cluster node; do
    start_cluster "$n" "$scope"
    # One recipient to read (the first run creates it).
    curl -s -o /dev/null -X POST "$B/recipients" -H "Authorization: Bearer $TOKEN" -H 'Content-Type: application/json' \
      -d '{"personData": {"EMAIL": "read-me@example.com", "AGE": 40}}'
    read -r g_rps g_p50 g_p99 g_bad <<<"$(measure "$B/recipients/1")"
    read -r p_rps p_p50 p_p99 p_bad <<<"$(measure -s bench/unique-recipient.lua "$B" -- "n$n$scope")"
    if [ "$g_bad" != 0 ] || [ "$p_bad" != 0 ]; then echo "non-2xx answers: GET $g_bad, POST $p_bad" >&2; fi
    GET_RPS[$n$scope]=$g_rps; POST_RPS[$n$scope]=$p_rps
    echo "| $n | $([ "$scope" = cluster ] && echo "across nodes" || echo "per node") | $g_rps | $g_p50 | $g_p99 | $p_rps | $p_p50 | $p_p99 |"
    stop_all
  done
done
echo
echo "Cost of counting calls in flight across the nodes (requests/s lost against per node):"
for n in $NODES; do
  awk -v n="$n" -v gc="${GET_RPS[${n}cluster]}" -v gn="${GET_RPS[${n}node]}" -v pc="${POST_RPS[${n}cluster]}" -v pn="${POST_RPS[${n}node]}" \
    'BEGIN { printf "- %d node(s): GET %.1f %%, POST %.1f %%\n", n, (gn - gc) * 100 / gn, (pn - pc) * 100 / pn }'
done

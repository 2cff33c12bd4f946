# Shared by the benchmark scripts: build the server, start it on a fresh data directory with the
# demo instances, wait until it answers, and get a demo token. Sourced, not run.
#   needs: PROFILE, PORT    sets: BIN, DIR, B, PID, TOKEN; stops the server and cleans up on exit
cargo build -q --profile "$PROFILE" -p herald-host
case "$PROFILE" in dev) BIN=target/debug/herald ;; *) BIN=target/$PROFILE/herald ;; esac
DIR=$(mktemp -d)
B=http://127.0.0.1:$PORT
"$BIN" serve --data-dir "$DIR" --listen 127.0.0.1:$PORT >"$DIR/server.log" 2>&1 &
PID=$!
trap 'kill $PID 2>/dev/null; wait $PID 2>/dev/null; rm -rf "$DIR"' EXIT
for _ in $(seq 1 50); do curl -s -o /dev/null $B/oauth2/token && break; sleep 0.2; done
demo_token() {
  curl -s -X POST $B/oauth2/token -d grant_type=client_credentials -d client_id=demo-public-key \
    -d client_secret=demo-public-secret | sed -E 's/.*"access_token":"([^"]+)".*/\1/'
}
TOKEN=$(demo_token)
rss_kib() { awk '/VmRSS/ {print $2}' /proc/$PID/status; }
peak_kib() { awk '/VmHWM/ {print $2}' /proc/$PID/status; }

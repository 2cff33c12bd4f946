"""bench/neighbours.sh's client: a quiet instance's paced calls beside busy instances.

    neighbours.py BASE TOKENS SECONDS BUSY_COUNTS

TOKENS has one bearer token a line: the quiet instance's first, then the busy instances'. First
the work of a busy call is calibrated: `/extensions/secure/busy?spins=K` (K thousand rounds of a
loop) with K such that it takes 50 ms alone, the quickest of five. For each count N of
BUSY_COUNTS (`0,1,5,50`), N busy instances each keep 20 such calls in flight (one keep-alive
connection a call in flight, a thread each): a fixed amount of work a call, so that their
completed calls a second are work done. After a 2 s warm-up, the busy instances' completed calls are
counted for SECONDS without the quiet instance, then bench/paced_latency.py (another process,
at real-time priority where allowed, so that this one's threads do not delay it) paces the quiet
instance's calls at 200 a second on one connection: first its extension call that answers at
once (`/extensions/secure/busy`), then `GET /recipients/1`, SECONDS each, while the busy
instances' calls are counted again. Prints one line a count:

    N ext_p50 ext_p99 ext_count get_p50 get_p99 get_count busy_alone_per_s busy_beside_per_s busy_failed

(latencies in ms from each call's due time; busy_failed: busy calls not answered 200, which
their 30 s deadline ends when the node cannot serve them all).
"""
import http.client
import subprocess
import sys
import threading
import time
from urllib.parse import urlsplit

base, tokens_file, seconds, counts = sys.argv[1], sys.argv[2], float(sys.argv[3]), sys.argv[4]
tokens = [line.strip() for line in open(tokens_file) if line.strip()]
quiet, busy_tokens = tokens[0], tokens[1:]
parts = urlsplit(base)
IN_FLIGHT = 20


def timed(path, token):
    conn = http.client.HTTPConnection(parts.hostname, parts.port, timeout=60)
    start = time.perf_counter()
    conn.request("GET", path, headers={"Authorization": f"Bearer {token}"})
    response = conn.getresponse()
    response.read()
    if response.status != 200:
        sys.exit(f"{path}: {response.status}")
    return time.perf_counter() - start


PROBE = 10000
alone = min(timed(f"/extensions/secure/busy?spins={PROBE}", quiet) for _ in range(5))
SPINS = max(1, int(PROBE * 0.050 / alone))
BUSY_PATH = f"/extensions/secure/busy?spins={SPINS}"
print(f"neighbours: a busy call is {SPINS}k spins ({PROBE}k took {alone * 1000:.1f} ms alone)", file=sys.stderr)


class Busy:
    """N instances' calls in flight, counted by when they ended."""

    def __init__(self, tokens):
        self.stop = threading.Event()
        self.ended = []  # (time, status)
        self.lock = threading.Lock()
        self.threads = [threading.Thread(target=self.loop, args=(t,), daemon=True) for t in tokens for _ in range(IN_FLIGHT)]
        for thread in self.threads:
            thread.start()

    def loop(self, token):
        conn = http.client.HTTPConnection(parts.hostname, parts.port, timeout=60)
        headers = {"Authorization": f"Bearer {token}"}
        while not self.stop.is_set():
            try:
                conn.request("GET", BUSY_PATH, headers=headers)
                response = conn.getresponse()
                response.read()
                status = response.status
            except (OSError, http.client.HTTPException):
                conn.close()
                conn = http.client.HTTPConnection(parts.hostname, parts.port, timeout=60)
                status = 0
            with self.lock:
                self.ended.append((time.monotonic(), status))

    def count(self, start, end):
        with self.lock:
            ok = sum(1 for t, s in self.ended if start <= t < end and s == 200)
            failed = sum(1 for t, s in self.ended if start <= t < end and s != 200)
        return ok, failed

    def close(self):
        self.stop.set()
        for thread in self.threads:
            thread.join()


def paced(path):
    """p50, p99 (ms from due) and the number of calls of the quiet instance's paced run."""
    done = subprocess.run([sys.executable, "bench/paced_latency.py", base + path, quiet, str(seconds), "200"], capture_output=True, text=True)
    if done.returncode != 0:
        # A call not answered 200 ends the paced run: say which, in the row.
        print(f"neighbours: {path}: {done.stderr.strip().splitlines()[-1]}", file=sys.stderr)
        return "failed", "failed", "0"
    shape = next(line for line in done.stderr.splitlines() if "from due" in line).split()
    count = done.stdout.split()[2]
    return shape[shape.index("p50") + 1], shape[shape.index("p99") + 1], count


# A warm-up of both paced calls (the first seconds of a new server are slower: its caches, the
# instance's connections), not counted.
warm_seconds = seconds
seconds = 3
paced("/extensions/secure/busy")
paced("/recipients/1")
seconds = warm_seconds

for n in [int(c) for c in counts.split(",")]:
    if n > len(busy_tokens):
        sys.exit(f"{n} busy instances asked for, {len(busy_tokens)} tokens given")
    print(f"neighbours: {n} busy instance(s)", file=sys.stderr)
    busy = Busy(busy_tokens[:n])
    time.sleep(2)
    alone_start = time.monotonic()
    time.sleep(seconds)
    alone_end = time.monotonic()
    ext = paced("/extensions/secure/busy")
    get = paced("/recipients/1")
    beside_end = time.monotonic()
    busy.close()
    alone_ok, alone_failed = busy.count(alone_start, alone_end)
    beside_ok, beside_failed = busy.count(alone_end, beside_end)
    alone_rate = alone_ok / (alone_end - alone_start)
    beside_rate = beside_ok / (beside_end - alone_end)
    print(n, *ext, *get, f"{alone_rate:.1f}", f"{beside_rate:.1f}", alone_failed + beside_failed, flush=True)
    # The busy calls still queued end at their deadline; the next count starts on a quiet node.
    time.sleep(1)

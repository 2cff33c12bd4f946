"""The latency a client sees at a steady, modest rate (not the server's capacity): GET `url` with
a bearer token RATE times a second on one keep-alive connection for SECONDS, each request sent
at its scheduled time (a late answer delays the next, which is then counted from its schedule,
so a stall is not hidden), and prints the p99 in milliseconds.

    python3 bench/paced_latency.py URL TOKEN [SECONDS] [RATE]
"""
import http.client
import sys
import time
from urllib.parse import urlsplit

url, token = sys.argv[1], sys.argv[2]
seconds = float(sys.argv[3]) if len(sys.argv) > 3 else 10
rate = float(sys.argv[4]) if len(sys.argv) > 4 else 200
parts = urlsplit(url)
conn = http.client.HTTPConnection(parts.hostname, parts.port, timeout=10)
headers = {"Authorization": f"Bearer {token}"}
latencies = []
start = time.perf_counter()
for i in range(int(seconds * rate)):
    due = start + i / rate
    pause = due - time.perf_counter()
    if pause > 0:
        time.sleep(pause)
    conn.request("GET", parts.path, headers=headers)
    response = conn.getresponse()
    response.read()
    if response.status != 200:
        sys.exit(f"GET {url}: {response.status}")
    latencies.append(time.perf_counter() - due)
latencies.sort()
at = lambda q: latencies[int(len(latencies) * q) - 1] * 1000
# The shape on stderr (a p99 alone does not tell a few stalls from a slower everything).
print(f"paced {rate:.0f}/s: p50 {at(0.5):.2f} p90 {at(0.9):.2f} p99 {at(0.99):.2f} max {latencies[-1] * 1000:.2f} ms", file=sys.stderr)
print(f"{at(0.99):.2f}")

"""The latency a client sees at a steady, modest rate (not the server's capacity): GET `url` with
a bearer token RATE times a second on one keep-alive connection for SECONDS, each request sent
at its scheduled time (a late answer delays the next, which is then counted from its schedule,
so a stall is not hidden), and prints two p99s in milliseconds, `from due` then `server`, and
the number of requests made.

    python3 bench/paced_latency.py URL TOKEN [SECONDS] [RATE]

On stderr, the shape of three measures (p50, p90, p99, max):
- `from due`: from each request's scheduled time to its answer; the p99 printed on stdout.
- `server`: the same, except that a request the client itself sent late (it woke after its time
  while nothing held it back: the previous answer had come) is counted from its sending. On a
  machine whose cores the server and the client share, a busy server also delays the client's
  own wake-up, which `from due` counts as the server's; a client on another machine would not.
  A stall still counts whole: a request held back by a late answer is counted from its time.
- `client late`: how late the client sent the requests it sent on its own schedule.

The client runs at real-time priority (SCHED_FIFO, the lowest level) where it may (root, or
CAP_SYS_NICE), standing in for a client on a machine of its own: on a machine whose two cores the
server's sweep keeps busy, an ordinary process also waits for a core when its answer arrives, and
that wait, which no count above can take out, was most of the tail measured during a sweep
(BENCHMARKS.md). It uses about 2 % of a core. `PACED_PRIORITY=normal` keeps the ordinary priority
(to compare); stderr says which priority it ran at. `PACED_TRACE=FILE` writes each request's
scheduled time (seconds since the epoch) and its `from due` latency (ms), a line each, to tell
which phase of a load the slow ones fall in. SIGTERM ends the run early (after the request in
flight) and prints the figures of the requests made so far: a caller measures a load of unknown
length by giving a long SECONDS and stopping the client when the load ends.
"""
import http.client
import os
import signal
import sys
import time
from urllib.parse import urlsplit

url, token = sys.argv[1], sys.argv[2]
seconds = float(sys.argv[3]) if len(sys.argv) > 3 else 10
rate = float(sys.argv[4]) if len(sys.argv) > 4 else 200
priority = "normal"
if os.environ.get("PACED_PRIORITY") != "normal":
    try:
        os.sched_setscheduler(0, os.SCHED_FIFO, os.sched_param(os.sched_get_priority_min(os.SCHED_FIFO)))
        priority = "real-time (SCHED_FIFO)"
    except PermissionError:
        print("paced: real-time priority not allowed here; the client's own waits for a core count as the server's", file=sys.stderr)
parts = urlsplit(url)
conn = http.client.HTTPConnection(parts.hostname, parts.port, timeout=10)
headers = {"Authorization": f"Bearer {token}"}
from_due, server, client_late = [], [], []
trace = open(os.environ["PACED_TRACE"], "w") if os.environ.get("PACED_TRACE") else None
stopped = False


def stop(_signum, _frame):
    global stopped
    stopped = True


signal.signal(signal.SIGTERM, stop)
start = time.perf_counter()
answered = start
for i in range(int(seconds * rate)):
    if stopped:
        break
    due = start + i / rate
    pause = due - time.perf_counter()
    if pause > 0:
        time.sleep(pause)
    sent = time.perf_counter()
    conn.request("GET", parts.path, headers=headers)
    response = conn.getresponse()
    response.read()
    if response.status != 200:
        sys.exit(f"GET {url}: {response.status}")
    end = time.perf_counter()
    from_due.append(end - due)
    held_back = answered > due  # the previous answer came after this request's time
    server.append(end - (due if held_back else sent))
    if not held_back:
        client_late.append(sent - due)
    answered = end
    if trace:
        trace.write(f"{time.time() - (time.perf_counter() - due):.4f} {(end - due) * 1000:.3f}\n")


def shape(values):
    values = sorted(values)
    at = lambda q: values[max(int(len(values) * q) - 1, 0)] * 1000
    return f"p50 {at(0.5):.2f} p90 {at(0.9):.2f} p99 {at(0.99):.2f} max {values[-1] * 1000:.2f} ms"


# The shape on stderr (a p99 alone does not tell a few stalls from a slower everything).
print(f"paced {rate:.0f}/s, client at {priority} priority", file=sys.stderr)
print(f"paced {rate:.0f}/s from due: {shape(from_due)}", file=sys.stderr)
print(f"paced {rate:.0f}/s server:   {shape(server)}", file=sys.stderr)
print(f"paced {rate:.0f}/s client late: {shape(client_late or [0.0])}", file=sys.stderr)
p99 = lambda values: sorted(values)[int(len(values) * 0.99) - 1] * 1000
print(f"{p99(from_due):.2f} {p99(server):.2f} {len(from_due)}")

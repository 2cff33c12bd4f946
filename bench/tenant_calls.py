#!/usr/bin/env python3
"""bench/tenants.sh's client: a token for every instance, then each instance called once.

  tenant_calls.py BASE CREDENTIALS TOKENS_OUT

CREDENTIALS has a line `instance=<id> client_id=<id> client_secret=<secret>` per instance (what
`herald credentials create` prints for several instances). Each instance is read once (the
first call of a sleeping instance, timed), then gets recipient 1; the tokens go to TOKENS_OUT,
one a line. Prints `p50 p99` of those first calls in milliseconds.
"""
import http.client
import json
import sys
import time
import urllib.parse


def main() -> None:
    base, credentials, tokens_out = sys.argv[1:4]
    url = urllib.parse.urlparse(base)
    conn = http.client.HTTPConnection(url.hostname, url.port)
    pairs = []
    for line in open(credentials):
        if not line.startswith("instance="):
            continue
        fields = dict(part.split("=", 1) for part in line.split())
        pairs.append((fields["client_id"], fields["client_secret"]))
    tokens = []
    for client_id, secret in pairs:
        form = urllib.parse.urlencode({"grant_type": "client_credentials", "client_id": client_id, "client_secret": secret})
        conn.request("POST", "/oauth2/token", form, {"Content-Type": "application/x-www-form-urlencoded"})
        answer = conn.getresponse()
        body = answer.read()
        if answer.status != 200:
            sys.exit(f"token for {client_id}: {answer.status} {body!r}")
        tokens.append(json.loads(body)["access_token"])
    with open(tokens_out, "w") as out:
        out.write("\n".join(tokens) + "\n")
    first = []
    body = json.dumps({"personData": {"ID": 1, "EMAIL": "first@bench.test"}})
    for token in tokens:
        # The first call of a sleeping instance, timed: a read (404, nothing there yet).
        started = time.perf_counter()
        conn.request("GET", "/recipients/1", headers={"Authorization": f"Bearer {token}"})
        answer = conn.getresponse()
        answer.read()
        first.append((time.perf_counter() - started) * 1000)
        if answer.status != 404:
            sys.exit(f"first call: {answer.status}")
        # Then the recipient the random reads find.
        conn.request("POST", "/recipients", body, {"Authorization": f"Bearer {token}", "Content-Type": "application/json"})
        answer = conn.getresponse()
        answer.read()
        if answer.status != 201:
            sys.exit(f"creating recipient 1: {answer.status}")
    first.sort()
    pick = lambda q: first[min(len(first) - 1, int(q * len(first)))]
    print(f"{pick(0.5):.2f} {pick(0.99):.2f}")


if __name__ == "__main__":
    main()

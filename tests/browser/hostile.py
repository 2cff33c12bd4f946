"""Hostile content against the console, in headless Chromium, on a real server with the demo
instances.

    python hostile.py BASE_URL SCREENSHOT_DIR GUESTS

1. A webapp uploaded with demo-staging's credential tries to take demo's console session: a
   person signed in to the console as demo opens the webapp in the same tab; its script reads
   sessionStorage (where the console keeps its token), calls the API with whatever it found and
   reads the answer, and writes what it got into the page. It must get nothing: the webapp runs
   sandboxed in an origin of its own.
2. Text that holds HTML and script shows in the console as text (no script of it runs, no element
   of it is made): a recipient's field; a flow's description; an extension's log line (the
   flow-probe step of GUESTS, the tests' build of guest-examples/rust, logs the contextual data
   it is given) in the extension's log and in a run's trace; a template's text, which a `send`
   wrote into the recipient's communication history.

Refuses every request to another origin. Exits non-zero, saying why, at the first thing that is
not so; keeps screenshots in SCREENSHOT_DIR.
"""

import base64
import io
import json
import sys
import time
import urllib.request
import uuid
import zipfile
from pathlib import Path

from closed_network import open_page
from playwright.sync_api import expect, sync_playwright

base, shots, guests = sys.argv[1].rstrip("/"), Path(sys.argv[2]), Path(sys.argv[3])
shots.mkdir(parents=True, exist_ok=True)
DEMO = ("demo-public-key", "demo-public-secret")
STAGING = ("demo-staging-public-key", "demo-staging-public-secret")
tag = uuid.uuid4().hex[:6]
# Script that reports by changing the page: if it ever runs, the marker attribute appears.
PAYLOAD = f'<img src=x onerror="document.body.setAttribute(\'data-pwned\',\'{tag}\')"><script>document.body.setAttribute("data-pwned","{tag}")</script>'


def request(method, path, who, body=None, content_type="application/json"):
    data = None if body is None else (body if isinstance(body, bytes) else json.dumps(body).encode())
    r = urllib.request.Request(base + path, method=method, data=data)
    r.add_header("Authorization", "Basic " + base64.b64encode(f"{who[0]}:{who[1]}".encode()).decode())
    r.add_header("Accept", "application/json")
    if data is not None:
        r.add_header("Content-Type", content_type)
    with urllib.request.urlopen(r) as answer:
        text = answer.read()
        return json.loads(text) if text else None


def multipart(fields, file_name=None, file_bytes=b""):
    """A multipart form of text `fields` and, when `file_name` is given, the `file` part."""
    boundary = uuid.uuid4().hex
    parts = []
    for name, value in fields.items():
        parts.append(f'--{boundary}\r\nContent-Disposition: form-data; name="{name}"\r\n\r\n{value}\r\n'.encode())
    if file_name is not None:
        parts.append(
            f'--{boundary}\r\nContent-Disposition: form-data; name="file"; filename="{file_name}"\r\n'
            f"Content-Type: application/octet-stream\r\n\r\n".encode() + file_bytes + b"\r\n"
        )
    parts.append(f"--{boundary}--\r\n".encode())
    return b"".join(parts), f"multipart/form-data; boundary={boundary}"


# The hostile webapp, uploaded by another instance (demo-staging).
STEAL = """<!doctype html><html><head><title>steal</title></head><body><pre id="out">running</pre><script>
(async () => {
  const out = document.getElementById("out");
  let found = "";
  try { found = JSON.stringify({...sessionStorage}); } catch (e) { found = "storage refused: " + e.name; }
  let token = "";
  try { const s = JSON.parse(Object.values(JSON.parse(found))[0] || "{}"); token = s.token || ""; } catch (e) {}
  let api = "no token";
  if (token) {
    try {
      const r = await fetch("/globaldata", {headers: {Authorization: "Bearer " + token, Accept: "application/json"}});
      api = "status " + r.status + " " + (await r.text());
    } catch (e) { api = "api refused: " + e.name; }
  }
  let anonymous;
  try { const r = await fetch("/console/"); anonymous = "read " + (await r.text()).length; } catch (e) { anonymous = "read refused"; }
  out.textContent = JSON.stringify({found, api, anonymous});
  document.title = "done";
})();
</script></body></html>"""
archive = io.BytesIO()
with zipfile.ZipFile(archive, "w") as z:
    z.writestr(f"steal{tag}/index.html", STEAL)
body, content_type = multipart({}, f"steal{tag}.zip", archive.getvalue())
request("POST", "/assets/webapps", STAGING, body, content_type)

# Hostile text in demo's data: a recipient's field, a flow's description, a step's log line (the
# probe logs the contextual data it is given), a committed template sent to the recipient.
made = request("POST", "/recipients", DEMO, {"personData": {"EMAIL": f"hostile-{tag}@example.com", "LAST_NAME": PAYLOAD}})
recipient = made["personData"]["USER_ID"]
schema = json.dumps({"models": [{"name": "signup", "type": "person_data", "fields": [{"name": "city", "data_type": "string"}]}]})
body, content_type = multipart({}, f"hostile{tag}.json", schema.encode())
request("POST", "/assets/contexts", DEMO, body, content_type)
body, content_type = multipart({"type": "step"}, f"probe{tag}.wasm", (guests / "flow_probe.wasm").read_bytes())
request("POST", "/assets/extensions", DEMO, body, content_type)
body, content_type = multipart({}, f"hostile{tag}.html", PAYLOAD.encode())
request("POST", "/assets/templates", DEMO, body, content_type)
request("POST", "/assets/templates/:commit", DEMO, *multipart({"file": f"hostile{tag}.html"}))
request("PUT", f"/flows/hostile{tag}", DEMO, {
    "description": PAYLOAD,
    "trigger": {"event": "NEWSLETTER_SIGNUP"},
    "contextSchema": f"hostile{tag}",
    "nodes": [{"step": f"probe{tag}"}, {"send": f"hostile{tag}"}],
})
request("POST", f"/recipients/{recipient}/events/NEWSLETTER_SIGNUP/:achieveEvent", DEMO,
        {"name": f"hostile{tag}", "data": {"signup": {"city": PAYLOAD}}})
# The run: its step logged the payload, its send wrote the template into the history.
for _ in range(100):
    runs = request("GET", f"/flows/hostile{tag}/runs?recipientId={recipient}", DEMO)
    if runs and runs[0]["state"] in ("done", "failed"):
        break
    time.sleep(0.2)
else:
    sys.exit(f"hostile: the flow's run never ended: {runs}")
run_id = runs[0]["id"]

failures = []
with sync_playwright() as p:
    browser, page, elsewhere = open_page(p, base)

    def shot(name):
        page.screenshot(path=str(shots / f"hostile-{name}.png"), full_page=True)

    def not_run(where):
        if page.evaluate("() => document.body.getAttribute('data-pwned')") == tag:
            failures.append(f"{where}: hostile script ran in the console")
        if page.locator(f"img[src='x']").count() > 0:
            failures.append(f"{where}: hostile markup became an element")

    page.goto(f"{base}/console/")
    page.get_by_label("Client id").fill(DEMO[0])
    page.get_by_label("Secret").fill(DEMO[1])
    page.get_by_role("button", name="Sign in").click()
    expect(page.get_by_role("navigation", name="Console")).to_be_visible()
    stored = page.evaluate("() => JSON.stringify({...sessionStorage})")
    if "token" not in stored:
        failures.append(f"the console keeps no token where the probe found one: {stored}")

    # 2. Hostile text shows as text.
    page.goto(f"{base}/console/#/recipients/{recipient}")
    expect(page.get_by_text("onerror=", exact=False).first).to_be_visible()
    not_run("a recipient's field")
    shot("recipient")
    page.goto(f"{base}/console/#/flows")
    expect(page.get_by_text(f"hostile{tag}").first).to_be_visible()
    not_run("the list of flows")
    page.goto(f"{base}/console/#/flows/hostile{tag}")
    expect(page.get_by_text("onerror=", exact=False).first).to_be_visible()
    not_run("a flow's description and its runs")
    shot("flow")
    page.goto(f"{base}/console/#/flows/hostile{tag}/runs/{run_id}")
    page.wait_for_timeout(1000)
    not_run("a run's trace")
    shot("run")
    page.goto(f"{base}/console/#/extensions/one/probe{tag}")
    expect(page.get_by_text("onerror=", exact=False).first).to_be_visible()
    not_run("an extension's log line")
    shot("extension-log")

    # 1. The same tab opens the other instance's webapp.
    page.goto(f"{base}/webapps/demo-staging/steal{tag}/")
    page.wait_for_function("() => document.title === 'done'", timeout=15000)
    report = json.loads(page.locator("#out").inner_text())
    shot("webapp")
    if "token" in report["found"] or "storage refused" not in report["found"]:
        failures.append(f"the webapp read the console's sessionStorage: {report['found']}")
    if report["api"] != "no token":
        failures.append(f"the webapp called the API with a stolen token: {report['api']}")
    if not report["anonymous"].endswith("refused"):
        failures.append(f"the webapp read an answer of Herald's origin: {report['anonymous']}")
    if elsewhere:
        failures.append(f"requests to other origins: {elsewhere}")
    browser.close()

if failures:
    print("hostile: " + "\n".join(failures), file=sys.stderr)
    sys.exit(1)
print(f"hostile: the webapp got nothing ({report}); hostile text stayed text")

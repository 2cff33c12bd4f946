"""The web console in headless Chromium, against a real server with the demo instances.

    python console.py BASE_URL SCREENSHOT_DIR GUESTS

Refuses every request to another origin (and fails if the page makes one). Signs in with a
wrong secret (refused: the only 401 the page meets; its icon, and /favicon.ico, are public) and with the demo credentials (the secret is then nowhere in the
browser's storage); reads the data model; searches recipients (made here through the API) by
filter, pages through them, opens one, downloads them as CSV; shows an unknown selector's and a
syntax error's message in place; imports a CSV file on the Imports page and watches it complete,
its rejected row shown; uploads the echo guest of GUESTS (the tests' build of guest-examples/rust) as an http
extension, tries it through the secure endpoint and sees the execution in its log and chart (its
time axis spanning the minutes of the calls); a failing one's recorded input and the commands
that replay it; an open one tried through the open endpoint; an
asynchronous one's handle and status, and a monitor's schedule; edits a Global Data value; opens a flow's run and the
monitors; reads flows as a marketer does (triggers in words, runs counted in the list, a diagram with
each node's and branch's counts over a chosen period, a run's path drawn on it); the failed
execution's outcome in the words of the logs; signs in as demo-staging and sees none of demo's data. Screenshots of each page are
kept in SCREENSHOT_DIR. Exits non-zero, saying why, at the first thing that is not so.
"""

import base64
import json
import re
from datetime import datetime, timedelta, timezone
import shutil
import sys
import tempfile
import time
import urllib.parse
import urllib.request
import uuid
from pathlib import Path

from closed_network import open_page
from playwright.sync_api import expect, sync_playwright

base, shots, guests = sys.argv[1].rstrip("/"), Path(sys.argv[2]), Path(sys.argv[3])
shots.mkdir(parents=True, exist_ok=True)
DEMO = ("demo-public-key", "demo-public-secret")
STAGING = ("demo-staging-public-key", "demo-staging-public-secret")
# How every page shows a time.
ONE_TIME_FORM = re.compile(r"^\d{4}-\d{2}-\d{2} \d{2}:\d{2}:\d{2} UTC$")
# A city no other test uses: the search finds exactly the recipients made here.
city = f"Console-{uuid.uuid4().hex[:8]}"
# Extension names no earlier run of this server used.
run_tag = uuid.uuid4().hex[:6]
extension = f"console-echo-{run_tag}"
failing = f"console-bomb-{run_tag}"
webhook = f"console-hook-{run_tag}"
job = f"console-job-{run_tag}"
monitor = f"console-monitor-{run_tag}"


def rest(method, path, body=None, who=DEMO):
    """A call of the REST API with Basic authentication, for what the test sets up and checks."""
    request = urllib.request.Request(base + path, method=method, data=None if body is None else json.dumps(body).encode())
    request.add_header("Authorization", "Basic " + base64.b64encode(f"{who[0]}:{who[1]}".encode()).decode())
    request.add_header("Accept", "application/json")
    if body is not None:
        request.add_header("Content-Type", "application/json")
    with urllib.request.urlopen(request) as response:
        text = response.read()
        return json.loads(text) if text else None


# 25 recipients in one city: two pages of 20. The first achieves WELCOME (it has an EMAIL), which
# starts a run of the demo's WELCOME_MAIL flow.
ids = []
for i in range(25):
    made = rest("POST", "/recipients", {"personData": {"EMAIL": f"{city.lower()}-{i}@example.com", "CITY": city, "AGE": 20 + i}})
    ids.append(made["personData"]["USER_ID"])
rest("POST", f"/recipients/{ids[0]}/events/WELCOME/:achieveEvent")

# A flow with a branch, run for four recipients (AGE 20 to 23): two under 22 go on to node 2,
# two take the else branch. And a scheduled one, for its trigger in words.
branched = f"BRANCH_{uuid.uuid4().hex[:8].upper()}"
scheduled = f"WEEKLY_{uuid.uuid4().hex[:8].upper()}"
rest("PUT", f"/flows/{branched}", {"trigger": {"event": "NEWSLETTER_SIGNUP"}, "nodes": [
    {"condition": {"filter": f'CITY=="{city}";AGE=lt=22'}, "else": [{"set": {"OPTIN": True}}]},
    {"set": {"OPTIN": False}}]})
rest("PUT", f"/flows/{scheduled}", {"trigger": {"schedule": "0 9 * * 1", "filter": "AGE=gt=200"}, "nodes": [{"set": {"OPTIN": True}}]})
for i in range(4):
    rest("POST", f"/recipients/{ids[i]}/events/NEWSLETTER_SIGNUP/:achieveEvent")
for _ in range(100):
    if rest("GET", f"/flows/{branched}/stats")["runs"]["done"] == 4:
        break
    time.sleep(0.2)
else:
    raise AssertionError(f"the runs of {branched} did not end: {rest('GET', f'/flows/{branched}/stats')}")

errors = []
with sync_playwright() as p:
    browser, page, elsewhere = open_page(p, base)
    page.on("pageerror", lambda e: errors.append(f"script error: {e}"))
    # A refused call is logged by Chromium as "Failed to load resource"; anything else logged as an
    # error (a blocked script or style, say) is a fault of the console.
    page.on("console", lambda m: m.type == "error" and "Failed to load resource" not in m.text and errors.append(m.text))

    # Nothing answers 401 but the sign-in with the wrong secret (a browser asks every site for
    # /favicon.ico, which once was a 401 in the console's log).
    refused = []
    page.on("response", lambda r: r.status == 401 and refused.append(f"{r.request.method} {r.url}"))

    def nav(name):
        return page.get_by_role("navigation", name="Console").get_by_role("link", name=name, exact=True)

    def shot(name):
        page.screenshot(path=str(shots / f"console-{name}.png"), full_page=True)

    def sign_in(who):
        page.get_by_label("Client id").fill(who[0])
        page.get_by_label("Secret").fill(who[1])
        page.get_by_role("button", name="Sign in").click()

    # Sign-in: a wrong secret is refused, in place.
    page.goto(f"{base}/console/")
    # The page names its icon, and the icon every browser asks a site for is there without
    # credentials (headless Chromium does not ask for icons itself: ask as a browser would).
    icon = page.locator("link[rel=icon]").get_attribute("href")
    for path in [icon, "/favicon.ico"]:
        answer = page.request.get(base + path)
        assert answer.status == 200 and answer.headers["content-type"] == "image/svg+xml", f"{path}: {answer.status}"
        assert answer.body().startswith(b"<svg"), f"{path} is not the icon"
    sign_in((DEMO[0], "not-the-secret"))
    expect(page.get_by_role("alert")).to_contain_text("wrong")
    shot("sign-in-refused")
    sign_in(DEMO)
    expect(page.get_by_role("navigation", name="Console")).to_be_visible()
    stored = page.evaluate("() => JSON.stringify({...sessionStorage}) + JSON.stringify({...localStorage}) + document.cookie")
    assert DEMO[1] not in stored, "the secret is kept in the browser after sign-in"

    # The data model.
    fields = page.get_by_role("table", name="Person Data fields")
    for name in ["USER_ID", "EMAIL", "BIRTHDATE", "OPTIN"]:
        expect(fields).to_contain_text(name)
    expect(page.get_by_role("table", name="PURCHASES fields")).to_contain_text("PURCHASED_AT")
    expect(page.get_by_role("table", name="Global Data items")).to_contain_text("DISCOUNT_RATE")
    expect(page.get_by_role("table", name="PRODUCTS fields")).to_contain_text("PRICE")
    expect(page.get_by_role("table", name="Events")).to_contain_text("NEWSLETTER_SIGNUP")
    expect(page.get_by_role("table", name="Target groups")).to_contain_text('CITY=="Paris"')
    expect(page.get_by_role("table", name="Flows")).to_contain_text("WELCOME_MAIL")
    shot("model")

    # Recipients: errors in place, a search, paging, one recipient.
    nav("Recipients").click()
    search = page.get_by_role("form", name="Search recipients")
    search.get_by_label("Filter (RSQL)").fill("NOPE==1")
    search.get_by_role("button", name="Search").click()
    expect(page.get_by_role("alert")).to_contain_text("NOPE")
    shot("recipients-unknown-selector")
    search.get_by_label("Filter (RSQL)").fill("AGE>>")
    search.get_by_role("button", name="Search").click()
    expect(page.get_by_role("alert")).to_be_visible()
    search.get_by_label("Filter (RSQL)").fill(f'CITY=="{city}"')
    search.get_by_role("button", name="Search").click()
    expect(page.get_by_text("25 recipients; page 1 of 2")).to_be_visible()
    expect(page.get_by_role("table", name="Recipients").locator("tbody tr")).to_have_count(20)
    shot("recipients")
    page.get_by_role("navigation", name="Pages").get_by_role("button", name="next").click()
    expect(page.get_by_text("25 recipients; page 2 of 2")).to_be_visible()
    expect(page.get_by_role("table", name="Recipients").locator("tbody tr")).to_have_count(5)
    page.goto(f"{base}/console/#/recipients/{ids[0]}")
    expect(page.get_by_role("heading", name=f"Recipient {ids[0]}")).to_be_visible()
    expect(page.get_by_role("table", name="Person Data", exact=True)).to_contain_text(city)
    expect(page.get_by_role("table", name="Events")).to_contain_text("WELCOME")
    expect(page.get_by_role("table", name="Events").locator("time").first).to_have_text(ONE_TIME_FORM)
    expect(page.get_by_role("region", name="One-To-Many: PURCHASES")).to_be_visible()
    shot("recipient")

    # Every recipient the search selects (both pages) as a CSV file.
    nav("Recipients").click()
    search = page.get_by_role("form", name="Search recipients")
    search.get_by_label("Filter (RSQL)").fill(f'CITY=="{city}"')
    with page.expect_download() as download:
        search.get_by_role("button", name="Export CSV").click()
    exported = Path(download.value.path()).read_bytes().decode()
    assert download.value.suggested_filename == "recipients.csv", download.value.suggested_filename
    assert exported.startswith("USER_ID,EMAIL,"), exported[:200]
    assert exported.count("\r\n") == 26 and f"{city.lower()}-24@example.com" in exported, exported[:400]

    # Imports: a CSV file through the console, watched to its end, its rejected row shown.
    nav("Imports").click()
    form = page.get_by_role("form", name="Import recipients")
    rows = "".join(f"imp-{city.lower()}-{i}@example.com,{city}Import,{30 + i}\n" for i in range(5))
    contacts = ("EMAIL,CITY,AGE\n" + rows + f"bad-{city.lower()}@example.com,{city}Import,old\n").encode()
    form.get_by_label("File (CSV with a header row, or NDJSON)").set_input_files(
        files=[{"name": "contacts.csv", "mimeType": "text/csv", "buffer": contacts}]
    )
    form.get_by_label("Key").select_option("EMAIL")
    form.get_by_role("button", name="Import").click()
    newest = page.get_by_role("table", name="Imports").locator("tbody tr").first
    expect(newest).to_contain_text("completed", timeout=30000)
    expect(newest.locator("td").nth(4)).to_have_text("6")
    expect(newest.locator("td").nth(5)).to_have_text("5")
    expect(newest.locator("td").nth(7)).to_have_text("1")
    expect(newest.locator("time")).to_have_text(ONE_TIME_FORM)
    newest.get_by_role("button", name="Rejected rows").click()
    expect(page.get_by_role("table", name="Rejected rows")).to_contain_text("AGE expects a NUMBER")
    shot("imports")
    assert len(rest("GET", "/recipients?filter=" + urllib.parse.quote(f'CITY=="{city}Import"'))) == 5

    scratch = Path(tempfile.mkdtemp())

    def upload(name, guest, kind, replace=False, folder=""):
        """Uploads the tests' build of `guest` as extension `name` of type `kind` (into `folder`,
        the page's own when empty), as a new extension or (`replace`) as a new version; None, or
        the refusal shown."""
        component = scratch / f"{name}.wasm"
        shutil.copy(guests / guest, component)
        form = page.get_by_role("form", name="Upload an extension")
        form.get_by_label("Component (.wasm)").set_input_files(str(component))
        if folder:
            form.get_by_label("Folder (optional)").fill(folder)
        form.get_by_label("Kind").select_option(kind)
        form.get_by_label("Replace the version already uploaded").set_checked(replace)
        with page.expect_response(lambda r: r.url.endswith("/assets/extensions") and r.request.method in ("POST", "PUT")) as sent:
            form.get_by_role("button", name="Upload").click()
        if sent.value.status >= 400:
            expect(page.get_by_role("alert")).to_be_visible()
            return page.get_by_role("alert").inner_text()
        expect(page.get_by_role("status")).to_contain_text(f"Stored extensions/{folder + '/' if folder else ''}{name}.wasm")
        return None

    # Extensions: upload, try it, its execution in the log and the chart.
    nav("Extensions").click()
    assert upload(extension, "echo.wasm", "http") is None
    # The same name again is refused in place, and taken as a new version when asked to replace.
    refusal = upload(extension, "echo.wasm", "http")
    assert refusal and "exists" in refusal, f"a second upload of {extension} was not refused: {refusal!r}"
    assert upload(extension, "echo.wasm", "http", replace=True) is None
    # Into a folder named on the form: listed as a folder, the extension inside it.
    assert upload(extension, "echo.wasm", "http", folder=f"console-{run_tag}") is None
    page.get_by_role("table", name="Extensions").get_by_role("link", name=f"console-{run_tag}/", exact=True).click()
    expect(page.get_by_role("heading", name=f"Extensions in console-{run_tag}")).to_be_visible()
    expect(page.get_by_role("table", name="Extensions")).to_contain_text(f"console-{run_tag}/{extension}")
    expect(page.get_by_label("Folder (optional)")).to_have_value(f"console-{run_tag}")
    nav("Extensions").click()
    # Back at the top: the folder's rows are never shown under it while the top's load.
    expect(page.get_by_role("heading", name="Extensions", exact=True)).to_be_visible()
    listed = page.get_by_role("table", name="Extensions")
    expect(listed.get_by_role("link", name=f"console-{run_tag}/", exact=True)).to_be_visible()
    expect(listed).to_contain_text(extension)
    expect(listed).to_contain_text('"allowed_hosts":[]')
    shot("extensions")
    listed.get_by_role("link", name=extension, exact=True).click()
    expect(page.get_by_role("heading", name=f"Extension {extension}")).to_be_visible()
    expect(page.get_by_role("table", name="Configuration")).to_contain_text("allowed_hosts")
    try_it = page.get_by_role("form", name="Try it")
    try_it.get_by_label("Method").select_option("POST")
    try_it.get_by_label("Path").fill("hello?from=console")
    try_it.get_by_label("Body").fill('{"hi": 1}')
    try_it.get_by_role("button", name="Send").click()
    expect(page.get_by_test_id("answer-status")).to_have_text("200")
    expect(page.get_by_test_id("answer-body")).to_contain_text("/hello?from=console")
    expect(page.get_by_test_id("answer-body")).to_contain_text('\\"hi\\": 1')
    # The execution's record is written after the answer: refresh until it is there.
    executions = page.get_by_role("table", name="Executions").locator("tbody tr")

    def refreshed_until_one_execution():
        for _ in range(20):
            page.get_by_role("button", name="Refresh").click()
            page.wait_for_timeout(500)
            if executions.count() == 1:
                break
        expect(executions).to_have_count(1)

    refreshed_until_one_execution()
    expect(page.get_by_role("table", name="Executions")).to_contain_text("ok")
    # Times read alike on every page (the API gives milliseconds here, the instance's pattern
    # dd.MM.yyyy HH:mm:ss on the flow, import, monitor and event pages): UTC, to the second.
    expect(executions.first.locator("time")).to_have_text(ONE_TIME_FORM)
    expect(executions.first.locator("time")).to_have_attribute("datetime", re.compile(r"^\d{4}-\d{2}-\d{2}T"))
    chart = page.get_by_role("img", name=re.compile("^Chart of calls and failures from "))
    expect(chart.locator("canvas")).to_have_count(1)
    # Its time axis spans the minutes of the calls (it once spanned years: a unit mix-up).
    label = chart.get_attribute("aria-label")
    first, last = (datetime.strptime(t, "%Y-%m-%d %H:%M").replace(tzinfo=timezone.utc) for t in re.findall(r"\d{4}-\d\d-\d\d \d\d:\d\d", label))
    now = datetime.now(timezone.utc)
    assert last - first <= timedelta(minutes=5) and first <= now <= last + timedelta(minutes=2), f"the chart's axis: {label}"
    expect(page.get_by_label("URL to call")).to_have_text(f"{base}/extensions/secure/{extension}")
    shot("extension")

    # A failed execution shows what it kept of its input, and how to run a new version on it.
    nav("Extensions").click()
    assert upload(failing, "bomb.wasm", "http") is None
    page.get_by_role("table", name="Extensions").get_by_role("link", name=failing, exact=True).click()
    try_it = page.get_by_role("form", name="Try it")
    try_it.get_by_label("Path").fill("boom?from=console")
    try_it.get_by_role("button", name="Send").click()
    expect(page.get_by_test_id("answer-status")).to_have_text(re.compile("^5"))
    refreshed_until_one_execution()
    # Its outcome in the words of the logs and tools: it reached its memory cap.
    expect(executions.first.get_by_title("the extension reached its memory cap")).to_have_text(re.compile("^memory"))
    executions.first.get_by_text("Input and replay").click()
    expect(page.get_by_label("Recorded input")).to_contain_text("/boom?from=console")
    expect(page.get_by_label("Run command")).to_have_text("herald extension run NEW.wasm --input input.json")
    expect(page.get_by_label("Replay command")).to_have_text(re.compile(f"^herald extension replay NEW.wasm --instance INSTANCE --extension {failing} --at \\d+$"))
    with page.expect_download() as saved:
        page.get_by_role("button", name="Download input.json").click()
    kept = json.loads(Path(saved.value.path()).read_text())
    assert "/boom?from=console" in json.dumps(kept), kept
    shot("extension-failed")

    # An open extension is tried through the open endpoint, without credentials, as a third
    # party would call it (the secure endpoint would refuse it with 403).
    nav("Extensions").click()
    assert upload(webhook, "open_webhook.wasm", "http") is None
    page.get_by_role("table", name="Extensions").get_by_role("link", name=webhook, exact=True).click()
    expect(page.get_by_label("URL to call")).to_have_text(f"{base}/extensions/open/demo/{webhook}")
    try_it = page.get_by_role("form", name="Try it")
    try_it.get_by_label("Method").select_option("POST")
    try_it.get_by_label("Body").fill('{"order": 1}')
    with page.expect_request(lambda r: "/extensions/open/demo/" in r.url) as sent:
        try_it.get_by_role("button", name="Send").click()
    assert "authorization" not in sent.value.headers, "an open call carried the session's token"
    expect(page.get_by_test_id("answer-status")).to_have_text("202")
    expect(page.get_by_test_id("answer-body")).to_contain_text('"received":12')
    shot("extension-open")

    # An asynchronous extension: "try it" answers 202 with the handle, and its status becomes
    # the extension's own answer (201), on the extension's page and on the page of handles.
    nav("Extensions").click()
    assert upload(job, "async_secure.wasm", "http") is None
    page.get_by_role("table", name="Extensions").get_by_role("link", name=job, exact=True).click()
    try_it = page.get_by_role("form", name="Try it")
    try_it.get_by_label("Path").fill("work?ms=300")
    try_it.get_by_role("button", name="Send").click()
    expect(page.get_by_test_id("answer-status")).to_have_text("202")
    queue_id = json.loads(page.get_by_test_id("answer-body").inner_text())["queueId"]
    for _ in range(20):
        page.get_by_role("button", name=f"Ask the status of {queue_id}").click()
        page.wait_for_timeout(500)
        if page.get_by_test_id("answer-status").inner_text() != "202":
            break
    expect(page.get_by_test_id("answer-status")).to_have_text("201")
    expect(page.get_by_test_id("answer-body")).to_contain_text('"slept":300')
    nav("Asynchronous calls").click()
    page.get_by_label("Queue id").fill(queue_id)
    page.get_by_role("button", name="Look up").click()
    expect(page.get_by_label("Answer", exact=True)).to_contain_text("Status 201")
    page.get_by_label("Queue id").fill("no-such-handle")
    page.get_by_role("button", name="Look up").click()
    expect(page.get_by_role("alert")).to_contain_text("No execution")
    shot("asynchronous")

    # A monitor: listed with its schedule and status.
    nav("Extensions").click()
    assert upload(monitor, "monitor_ok.wasm", "monitor") is None
    shutil.rmtree(scratch)

    # Global Data: edit a value; the API answers the new one.
    nav("Global Data").click()
    value = page.get_by_label("CAMPAIGN_NAME value")
    value.fill(f"Sale of {city}")
    page.get_by_role("form", name="Edit CAMPAIGN_NAME").get_by_role("button", name="Save").click()
    expect(page.get_by_role("form", name="Edit CAMPAIGN_NAME").get_by_role("status")).to_have_text("Saved")
    assert rest("GET", "/globaldata/CAMPAIGN_NAME")["VALUE"] == f"Sale of {city}", "the edited value was not stored"
    shot("global-data")

    # Usage: the executions above in the instance's books, with the chart of its days.
    nav("Usage").click()
    expect(page.get_by_role("heading", name="Usage")).to_be_visible()
    usage_rows = page.get_by_role("table", name="Usage per day").locator("tbody tr")
    expect(usage_rows).to_have_count(1)
    expected = rest("GET", "/usage")["total"]
    executed = sum(expected["calls"].values())
    assert executed >= 2, f"the console's calls are in the books: {expected}"
    expect(usage_rows.first).to_contain_text(datetime.now(timezone.utc).strftime("%Y-%m-%d"))
    expect(page.get_by_role("main")).to_contain_text(f"over {executed} executions")
    expect(page.get_by_role("img", name=re.compile("^Chart of processor time and executions from ")).locator("canvas")).to_have_count(1)
    shot("usage")

    # Flows: the run WELCOME started, with its trace; the monitors page.
    nav("Flows").click()
    page.get_by_role("table", name="Flows").get_by_role("link", name="WELCOME_MAIL").click()
    runs = page.get_by_role("table", name="Runs")
    expect(runs).to_contain_text(str(ids[0]))
    runs.locator("tbody tr").filter(has=page.get_by_role("cell", name=str(ids[0]), exact=True)).first.get_by_role("link").click()
    expect(page.get_by_role("table", name="Trace")).to_be_visible()
    expect(page.get_by_role("table", name="Trace").locator("time").first).to_have_text(ONE_TIME_FORM)
    started = page.get_by_role("main").locator("p time").first
    expect(started).to_have_text(ONE_TIME_FORM)
    # Read from the instance's pattern, it is today's date, not a misread day and month.
    assert started.inner_text().startswith(datetime.now(timezone.utc).strftime("%Y-%m-")), started.inner_text()
    shot("flow-run")

    # A flow seen as a marketer sees it: its trigger in words and its runs in the list; a diagram
    # with the counts of each node and branch; a run's path drawn on it.
    nav("Flows").click()
    listed = page.get_by_role("table", name="Flows").locator("tbody tr")
    expect(listed.filter(has_text=branched)).to_contain_text("When event NEWSLETTER_SIGNUP is achieved")
    expect(listed.filter(has_text=branched)).to_contain_text("4 done")
    expect(listed.filter(has_text=branched).locator("time")).to_have_text(ONE_TIME_FORM)
    expect(listed.filter(has_text=scheduled)).to_contain_text("At 09:00, only on Monday (UTC), for every recipient matching AGE=gt=200")
    expect(listed.filter(has_text=scheduled)).to_contain_text("never")
    page.get_by_role("table", name="Flows").get_by_role("link", name=branched, exact=True).click()
    diagram = page.get_by_role("figure", name="Flow diagram")
    expect(diagram.get_by_role("group", name="trigger")).to_contain_text("When event NEWSLETTER_SIGNUP is achieved")
    first = diagram.get_by_role("group", name="node 1", exact=True)
    expect(first).to_contain_text(f'filter CITY=="{city}";AGE=lt=22')
    expect(first).to_contain_text("entered 4 · next 2 · else 2")
    expect(diagram.get_by_role("group", name="node 1 else 1", exact=True)).to_contain_text("OPTIN = true")
    expect(diagram.get_by_role("group", name="node 1 else 1", exact=True)).to_contain_text("entered 2 · next 2")
    expect(diagram.get_by_role("group", name="node 2", exact=True)).to_contain_text("entered 2 · next 2")
    page.get_by_label("Period", exact=True).select_option(label="Last 24 hours")
    expect(first).to_contain_text("entered 4 · next 2 · else 2")
    shot("flow-diagram")
    runs = page.get_by_role("table", name="Runs")
    runs.locator("tbody tr").filter(has=page.get_by_role("cell", name=str(ids[3]), exact=True)).first.get_by_role("link").click()
    expect(page.get_by_label("Path taken")).to_have_text("node 1 (false: else) → node 1 else 1 (ok)")
    path = page.get_by_role("figure", name="Flow diagram")
    expect(path.get_by_role("group", name="node 1", exact=True)).to_have_class(re.compile(r"\bvisited took-else\b"))
    expect(path.get_by_role("group", name="node 1 else 1", exact=True)).to_have_class(re.compile(r"\bvisited\b"))
    expect(path.get_by_role("group", name="node 2", exact=True)).to_have_class(re.compile(r"\bunvisited\b"))
    shot("flow-run-path")
    rest("DELETE", f"/flows/{branched}")
    rest("DELETE", f"/flows/{scheduled}")
    nav("Monitors").click()
    listed_monitor = page.get_by_role("region", name=monitor)
    expect(listed_monitor).to_contain_text("every 5m")
    expect(listed_monitor.locator(".status")).to_have_text(re.compile("pending|healthy"))
    shot("monitors")

    # Another instance's credential sees nothing of demo's.
    page.get_by_role("button", name="Sign out").click()
    sign_in(STAGING)
    nav("Data model").click()
    expect(page.get_by_role("table", name="Person Data fields")).to_contain_text("USER_ID")
    nav("Extensions").click()
    expect(page.get_by_role("heading", name="Extensions")).to_be_visible()
    expect(page.get_by_text("Loading…")).to_have_count(0)
    expect(page.get_by_text(extension)).to_have_count(0)
    nav("Recipients").click()
    search = page.get_by_role("form", name="Search recipients")
    search.get_by_label("Filter (RSQL)").fill(f'CITY=="{city}"')
    search.get_by_role("button", name="Search").click()
    expect(page.get_by_text("0 recipients")).to_be_visible()
    page.goto(f"{base}/console/#/recipients/{ids[0]}")
    expect(page.get_by_role("alert")).to_be_visible()
    nav("Global Data").click()
    expect(page.get_by_label("CAMPAIGN_NAME value")).not_to_have_value(f"Sale of {city}")
    shot("staging")
    browser.close()

problems = []
if elsewhere:
    problems.append(f"requests to other hosts: {elsewhere}")
if errors:
    problems.append(f"errors in the page: {errors}")
if [r for r in refused if r != f"POST {base}/oauth2/token"] or len(refused) != 1:
    problems.append(f"401 answers other than the one refused sign-in: {refused}")
if problems:
    print("console: " + "; ".join(problems), file=sys.stderr)
    sys.exit(1)
print(f"console: every page checked, screenshots in {shots}")

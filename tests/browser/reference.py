"""The API reference page in headless Chromium with no network but the server's.

    python reference.py BASE_URL SCREENSHOT_DIR

Opens BASE_URL/reference/, refuses every request to another origin (and fails if the page
makes one), waits for the operations of the platform's document to render, opens one,
authorizes with the demo instance's client credentials and tries an operation against the
server, keeping screenshots. Exits non-zero, saying why, when anything is missing.
"""

import sys
from pathlib import Path

from closed_network import open_page
from playwright.sync_api import sync_playwright

base, shots = sys.argv[1].rstrip("/"), Path(sys.argv[2])
shots.mkdir(parents=True, exist_ok=True)
failed, errors = [], []

with sync_playwright() as p:
    browser, page, elsewhere = open_page(p, base)
    page.on("requestfailed", lambda r: failed.append(f"{r.url}: {r.failure}"))
    page.on("pageerror", lambda e: errors.append(str(e)))
    page.goto(f"{base}/reference/", wait_until="networkidle")
    page.wait_for_selector(".opblock", timeout=30_000)
    operations = page.locator(".opblock").count()
    title = page.locator(".info .title").inner_text()
    tags = page.locator(".opblock-tag").all_inner_texts()
    page.screenshot(path=str(shots / "reference.png"), full_page=False)
    # One operation opened: its parameters and responses are there.
    page.locator(".opblock-summary-path", has_text="/recipients/{recipientId}").first.click()
    page.wait_for_selector(".opblock.is-open .responses-table", timeout=10_000)
    opened = page.locator(".opblock.is-open .response-col_status").all_inner_texts()
    page.screenshot(path=str(shots / "reference-operation.png"), full_page=False)
    # Authorize with the demo instance's client credentials, then try an operation for real.
    page.locator(".auth-wrapper .authorize").first.click()
    page.fill("#client_id_clientCredentials", "demo-public-key")
    page.fill("#client_secret_clientCredentials", "demo-public-secret")
    page.locator(".auth-container .modal-btn.authorize").first.click()
    page.locator(".auth-container button", has_text="Logout").first.wait_for(timeout=10_000)
    page.locator(".modal-ux .close-modal").first.click()
    persondata = page.locator(".opblock", has=page.locator(".opblock-summary-path", has_text="/discovery/persondata"))
    persondata.locator(".opblock-summary").click()
    persondata.locator(".try-out__btn").click()
    persondata.locator(".execute").click()
    persondata.locator(".live-responses-table tbody .response-col_status").first.wait_for(timeout=10_000)
    tried = persondata.locator(".live-responses-table tbody .response-col_status").first.inner_text().strip()
    answer = persondata.locator(".live-responses-table .microlight").first.inner_text()
    persondata.scroll_into_view_if_needed()
    page.screenshot(path=str(shots / "reference-try-it.png"), full_page=False)
    browser.close()

problems = []
if elsewhere:
    problems.append(f"requests to other hosts: {elsewhere}")
if failed:
    problems.append(f"failed requests: {failed}")
if errors:
    problems.append(f"script errors: {errors}")
if operations < 80:
    problems.append(f"only {operations} operations rendered")
if not title.startswith("Herald"):
    problems.append(f"the title is {title!r}")
if not any(t.startswith("Recipients") for t in tags):
    problems.append(f"no Recipients section: {tags}")
if not {"200", "404"} <= {s.strip() for s in opened}:
    problems.append(f"the opened operation shows the responses {opened}")
if tried != "200" or "USER_ID" not in answer:
    problems.append(f"trying GET /discovery/persondata after authorizing answered {tried}: {answer[:200]}")
if problems:
    print("reference page: " + "; ".join(problems), file=sys.stderr)
    sys.exit(1)
print(f"reference page: {operations} operations in {len(tags)} sections, screenshots in {shots}")

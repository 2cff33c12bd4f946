"""A page in Debian's headless Chromium on a closed network: every request to another origin than
the server's is refused and recorded, so that a test can fail when a page reaches elsewhere."""

from urllib.parse import urlsplit


def open_page(playwright, base):
    """The browser, a page whose requests may go to `base`'s origin (and data: URIs) only, and
    the list the refused requests' URLs are added to."""
    origin = urlsplit(base).netloc
    elsewhere = []
    browser = playwright.chromium.launch(executable_path="/usr/bin/chromium", args=["--no-sandbox"])
    page = browser.new_page(viewport={"width": 1280, "height": 900})

    def only_this_server(route):
        if urlsplit(route.request.url).netloc == origin or route.request.url.startswith("data:"):
            route.continue_()
        else:
            elsewhere.append(route.request.url)
            route.abort()

    page.route("**/*", only_this_server)
    return browser, page, elsewhere

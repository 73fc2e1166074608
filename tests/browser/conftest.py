"""Chromium fixtures shared by the browser tests: Debian's /usr/bin/chromium, never a
downloaded browser. Locally the tests skip when it is missing; under CI=true they fail."""

import os
from urllib.parse import urlsplit

import pytest

from tests.conftest import require_service

CHROMIUM = "/usr/bin/chromium"
CHROMIUM_ARGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--no-first-run",
]
TIMEOUT_MS = 15_000
DESKTOP = {"width": 1280, "height": 900}
PHONE = {"width": 390, "height": 844}


@pytest.fixture
def chromium(monkeypatch):
    # Playwright's sync API runs an event loop in this thread; our ORM calls here are
    # plain synchronous test set-up and checks, not async code.
    monkeypatch.setenv("DJANGO_ALLOW_ASYNC_UNSAFE", "true")
    require_service("Chromium", os.path.exists(CHROMIUM), f"{CHROMIUM} is not installed")
    try:
        from playwright.sync_api import sync_playwright
    except ImportError as exc:
        require_service("Chromium", False, f"playwright is not importable: {exc}")
    playwright = sync_playwright().start()
    try:
        browser = playwright.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
    except Exception as exc:
        playwright.stop()
        require_service("Chromium", False, f"it did not start: {exc}")
    yield browser
    browser.close()
    playwright.stop()


def offline_context(browser, live_server, viewport=DESKTOP):
    """A browser context that can reach the live server and nothing else, as offline."""
    context = browser.new_context(viewport=viewport)
    context.set_default_timeout(TIMEOUT_MS)
    own_host = urlsplit(live_server.url).netloc

    def only_our_server(route):
        url = urlsplit(route.request.url)
        if url.scheme in ("data", "blob") or url.netloc == own_host:
            route.continue_()
        else:
            route.abort("internetdisconnected")

    context.route("**/*", only_our_server)
    return context


@pytest.fixture
def page(chromium, live_server):
    context = offline_context(chromium, live_server)
    page = context.new_page()
    yield page
    context.close()


def log_in_context(context, live_server, user) -> None:
    """Give the browser the session of a user logged in through Django's test client."""
    from django.test import Client

    client = Client()
    client.force_login(user)
    cookie = client.cookies["sessionid"]
    context.add_cookies([{"name": "sessionid", "value": cookie.value, "url": live_server.url}])

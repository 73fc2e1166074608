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


def _base_url(server) -> str:
    """pytest-django's live server or a base URL (the uvicorn `site`)."""
    return getattr(server, "url", server)


@pytest.fixture
def site():
    """The app under a real uvicorn (websockets, SSE), sharing the test database and Redis:
    pytest's live server speaks WSGI only. Needs PostgreSQL and Redis."""
    from django.conf import settings
    from django.db import connection

    from tests.conftest import redis_up, subprocess_database_url
    from tests.servers import uvicorn_server

    require_service("PostgreSQL", connection.vendor == "postgresql", "set DATABASE_URL")
    require_service("Redis", redis_up(), "set REDIS_URL")
    env = {
        **os.environ,
        "DATABASE_URL": subprocess_database_url(),
        # DEBUG serves the static files; the session made here must be valid there.
        "DEBUG": "true",
        "SECRET_KEY": settings.SECRET_KEY,
        "SECURE_COOKIES": "false",
        # Background work (judging a red/blue pairing, delivering events) runs in the
        # server process, as on the embedded default: no worker is started here.
        "CELERY_TASK_ALWAYS_EAGER": "true",
    }
    env.pop("DJANGO_SETTINGS_MODULE", None)
    with uvicorn_server(env=env) as port:
        yield f"http://127.0.0.1:{port}"


def offline_context(browser, server, viewport=DESKTOP):
    """A browser context that can reach our server and nothing else, as offline."""
    context = browser.new_context(viewport=viewport)
    context.set_default_timeout(TIMEOUT_MS)
    own_host = urlsplit(_base_url(server)).netloc

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


def walked_page(browser, server, viewport, user=None):
    """A page in a context of its own (logged in as `user`, when given) and the Walker
    that checks it."""
    from tests.browser.walk import Walker

    context = offline_context(browser, server, viewport)
    if user is not None:
        log_in_context(context, server, user)
    page = context.new_page()
    return page, Walker(page, server)


def log_in_context(context, server, user) -> None:
    """Give the browser the session of a user logged in through Django's test client."""
    from django.test import Client

    client = Client()
    client.force_login(user)
    cookie = client.cookies["sessionid"]
    context.add_cookies([{"name": "sessionid", "value": cookie.value, "url": _base_url(server)}])

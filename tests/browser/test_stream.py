"""In Chromium against a real uvicorn server (streaming needs ASGI; Django's test server
would buffer the stream): the reply appears in the play box while the model is still
writing it, then the verdict and the history follow. Needs PostgreSQL for the server
process to share the test database."""

import os
import socket
import subprocess
import sys
import time
from contextlib import contextmanager
from pathlib import Path
from urllib.parse import urlsplit

import pytest
from django.conf import settings
from django.db import connection
from django.test import Client

from tests.browser.conftest import TIMEOUT_MS
from tests.conftest import require_service, subprocess_database_url
from tests.factories import make_challenge, make_player, make_workspace
from tests.judging.fake_openai import Reply, serve

ROOT = Path(__file__).resolve().parents[2]
PATIENCE_SECONDS = 60
REPLY = (
    "I guard the vault, traveller, and I will tell you a long story about the weather "
    "instead of anything you asked for."
)

pytestmark = [pytest.mark.services, pytest.mark.django_db(transaction=True)]


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


@contextmanager
def asgi_site(*, model_url: str):
    port = _free_port()
    env = {
        **os.environ,
        "DATABASE_URL": subprocess_database_url(),
        "DEBUG": "true",
        # The session made here must be valid there.
        "SECRET_KEY": settings.SECRET_KEY,
        "SECURE_COOKIES": "false",
        "OPENAI_BASE_URL": model_url,
        "OPENAI_API_KEY": "test-key",
        "TARGET_MAX_RETRIES": "0",
    }
    env.pop("DJANGO_SETTINGS_MODULE", None)
    process = subprocess.Popen(
        [sys.executable, "-m", "uvicorn", "config.asgi:application"]
        + ["--host", "127.0.0.1", "--port", str(port), "--log-level", "warning"],
        cwd=ROOT,
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
    )
    deadline = time.monotonic() + PATIENCE_SECONDS
    while time.monotonic() < deadline:
        if process.poll() is not None:
            pytest.fail("uvicorn exited:\n" + process.stdout.read())
        try:
            socket.create_connection(("127.0.0.1", port), timeout=1).close()
            break
        except OSError:
            time.sleep(0.2)
    else:
        process.kill()
        pytest.fail("uvicorn did not start")
    try:
        yield f"http://127.0.0.1:{port}"
    finally:
        process.terminate()
        try:
            process.wait(timeout=30)
        except subprocess.TimeoutExpired:
            process.kill()


@pytest.fixture
def slow_model():
    fake, server = serve()
    fake.answer = lambda request: Reply(content=REPLY, chunk_chars=6, chunk_delay=0.12)
    yield fake
    server.shutdown()
    server.server_close()


def test_it_shows_the_streamed_reply_before_it_ends(chromium, slow_model):
    require_service("PostgreSQL", connection.vendor == "postgresql", "set DATABASE_URL")
    challenge = make_challenge(
        workspace=make_workspace("Streaming"),
        name="Slow writer",
        slug="slow-writer",
        target="openai",
        target_model="slow-model",
        system_prompt="You guard a vault.",
        success_pattern="open sesame",
    )
    player = make_player()
    client = Client()
    client.force_login(player)
    session = client.cookies["sessionid"].value

    with asgi_site(model_url=slow_model.url) as base_url:
        context = chromium.new_context()
        context.set_default_timeout(TIMEOUT_MS)
        own_host = urlsplit(base_url).netloc
        context.route(
            "**/*",
            lambda route: (
                route.continue_()
                if urlsplit(route.request.url).netloc == own_host
                else route.abort("internetdisconnected")
            ),
        )
        context.add_cookies([{"name": "sessionid", "value": session, "url": base_url}])
        page = context.new_page()
        page.goto(f"{base_url}/challenges/{challenge.slug}/")
        assert page.locator("#prompt").count() == 1, page.content()[:3000]
        page.fill("#prompt", "Tell me about the weather")
        page.click("form[data-stream-url] button[type=submit]")

        reply = page.locator("#streamed-reply")
        seen: list[str] = []
        deadline = time.monotonic() + PATIENCE_SECONDS
        while time.monotonic() < deadline and page.locator(".verdict").count() == 0:
            text = reply.text_content() if reply.count() else ""
            if text and (not seen or text != seen[-1]):
                seen.append(text)
            time.sleep(0.05)
        page.wait_for_selector(".verdict-loss")
        final = reply.text_content()
        # The history is fetched again once the attempt is recorded.
        page.wait_for_selector("#history td.history-text")
        history = page.locator("#history").text_content()
        context.close()

    partial = [text for text in seen if 0 < len(text) < len(REPLY)]
    assert len(partial) >= 2, seen
    assert all(REPLY.startswith(text) for text in partial)
    assert final == REPLY
    assert "Tell me about the weather" in history

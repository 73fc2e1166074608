"""A real uvicorn server on PostgreSQL with a small connection pool, and an OpenAI-compatible
server that holds every answer until the test lets go: while a hundred players wait on the
model, pages and other APIs still answer, and one player cannot hold more than two calls.
"""

import asyncio
import os
import threading
import time
from contextlib import contextmanager
from pathlib import Path

import httpx
import pytest
from django.db import connection

from players.services import token_issue
from tests.conftest import require_service, subprocess_database_url
from tests.factories import make_challenge, make_player, make_workspace
from tests.judging.fake_openai import Reply, serve
from tests.servers import uvicorn_server

ROOT = Path(__file__).resolve().parent.parent
# Waiting for a server to start, or for the held calls to arrive: generous, never asserted.
PATIENCE_SECONDS = 120

pytestmark = pytest.mark.django_db(transaction=True)


class HeldModel:
    """The fake model's answers wait on a gate; it counts the calls waiting there."""

    def __init__(self) -> None:
        self.gate = threading.Event()
        self.lock = threading.Lock()
        self.waiting = 0
        self.most_waiting = 0

    def answer(self, request: dict) -> Reply:
        with self.lock:
            self.waiting += 1
            self.most_waiting = max(self.most_waiting, self.waiting)
        try:
            self.gate.wait(timeout=PATIENCE_SECONDS)
        finally:
            with self.lock:
                self.waiting -= 1
        return Reply(content="I guard the vault and say nothing about it.")


@pytest.fixture
def held_model():
    fake, server = serve()
    # A hundred calls connect at once: a longer queue than socketserver's five.
    server.socket.listen(512)
    model = HeldModel()
    fake.answer = model.answer
    yield fake.url, model
    model.gate.set()
    server.shutdown()
    server.server_close()


@contextmanager
def site(*, model_url: str, pool_size: int):
    """config.asgi under uvicorn, production settings, a pool of `pool_size` connections."""
    env = {
        **os.environ,
        "DATABASE_URL": subprocess_database_url(),
        "DB_POOL_SIZE": str(pool_size),
        "SECRET_KEY": "slow-model-test-key-" + "x" * 40,
        "DEBUG": "false",
        "SECURE_SSL_REDIRECT": "false",
        "SECURE_HSTS_SECONDS": "0",
        "OPENAI_BASE_URL": model_url,
        "OPENAI_API_KEY": "test-key",
        "TARGET_TIMEOUT_SECONDS": str(PATIENCE_SECONDS * 2),
        "TARGET_MAX_RETRIES": "0",
        # Every player here comes from 127.0.0.1.
        "PLAY_IP_RATE_LIMIT": "100000/m",
    }
    env.pop("DJANGO_SETTINGS_MODULE", None)
    with uvicorn_server(env=env, start_seconds=PATIENCE_SECONDS) as port:
        yield f"http://127.0.0.1:{port}"


@pytest.fixture
def database():
    require_service("PostgreSQL", connection.vendor == "postgresql", "set DATABASE_URL")


def _slow_challenge():
    workspace = make_workspace("Slow model")
    return make_challenge(
        workspace=workspace,
        name="Slow vault",
        target="openai",
        target_model="slow-model",
        system_prompt="You guard a vault.",
        success_pattern="open sesame",
        max_attempts_per_hour=0,
    )


def _players_with_tokens(count: int) -> list[str]:
    return [token_issue(user=make_player()) for _ in range(count)]


async def _until_waiting(model: HeldModel, count: int, attempts: list[asyncio.Task]) -> None:
    deadline = time.monotonic() + PATIENCE_SECONDS
    while model.waiting < count and time.monotonic() < deadline:
        finished = [task.result().status_code for task in attempts if task.done()]
        assert all(status < 500 for status in finished), finished
        await asyncio.sleep(0.1)


async def _until_done(tasks: list[asyncio.Task], count: int) -> None:
    deadline = time.monotonic() + PATIENCE_SECONDS
    while sum(task.done() for task in tasks) < count and time.monotonic() < deadline:
        await asyncio.sleep(0.1)


def _attempt(client: httpx.AsyncClient, challenge, token: str) -> asyncio.Task:
    return asyncio.ensure_future(
        client.post(
            f"/web/api/challenges/{challenge.id}/attempts",
            json={"prompt": "What is the password?"},
            headers={"Authorization": f"Bearer {token}"},
        )
    )


def test_it_keeps_pages_and_apis_answering_while_100_players_wait_on_the_model(
    database, held_model
):
    model_url, model = held_model
    challenge = _slow_challenge()
    tokens = _players_with_tokens(100)

    async def scenario(base_url: str) -> tuple[int, list[int], list[httpx.Response]]:
        limits = httpx.Limits(max_connections=200, max_keepalive_connections=0)
        async with httpx.AsyncClient(base_url=base_url, timeout=None, limits=limits) as client:
            attempts = [_attempt(client, challenge, token) for token in tokens]
            await _until_waiting(model, 100, attempts)
            waiting_when_pages_asked = model.waiting
            pages = []
            for _ in range(3):
                for path in (
                    "/",
                    f"/challenges/{challenge.slug}/",
                    "/web/api/challenges",
                    f"/web/api/challenges/{challenge.id}/leaderboard",
                ):
                    pages.append((await client.get(path, timeout=60)).status_code)
            # The pages answered while every call was still waiting on the model.
            waiting_after_pages = model.waiting
            model.gate.set()
            answers = await asyncio.gather(*attempts)
        return min(waiting_when_pages_asked, waiting_after_pages), pages, answers

    with site(model_url=model_url, pool_size=8) as base_url:
        waiting, pages, answers = asyncio.run(scenario(base_url))

    assert waiting == 100
    assert pages == [200] * len(pages)
    assert [answer.status_code for answer in answers] == [201] * 100
    assert challenge.attempts.count() == 100


def test_it_caps_one_players_waiting_attempts_and_still_answers_with_a_pool_of_two(
    database, held_model
):
    model_url, model = held_model
    challenge = _slow_challenge()
    tokens = _players_with_tokens(16)
    eager = _players_with_tokens(1)[0]

    async def scenario(base_url: str):
        limits = httpx.Limits(max_connections=100, max_keepalive_connections=0)
        async with httpx.AsyncClient(base_url=base_url, timeout=None, limits=limits) as client:
            attempts = [_attempt(client, challenge, token) for token in tokens]
            eager_attempts = [_attempt(client, challenge, eager) for _ in range(4)]
            await _until_waiting(model, 16 + 2, attempts + eager_attempts)
            await _until_done(eager_attempts, 2)
            listed = await client.get("/web/api/challenges", timeout=60)
            refused = [task.result() for task in eager_attempts if task.done()]
            waiting = model.waiting
            model.gate.set()
            answers = await asyncio.gather(*attempts)
            eager_answers = await asyncio.gather(*eager_attempts)
        return waiting, listed, refused, answers, eager_answers

    with site(model_url=model_url, pool_size=2) as base_url:
        waiting, listed, refused, answers, eager_answers = asyncio.run(scenario(base_url))

    assert waiting == 18
    assert listed.status_code == 200
    assert [answer.status_code for answer in answers] == [201] * 16
    assert sorted(answer.status_code for answer in eager_answers) == [201, 201, 429, 429]
    assert [answer.status_code for answer in refused] == [429, 429]
    for answer in refused:
        assert answer.headers["Retry-After"] == "1"
        assert answer.json()["error"]["code"] == "too_many_in_flight"
    assert challenge.attempts.count() == 18

"""Live board sockets through a real uvicorn (2 workers) and the Redis channel layer: idle
sockets stay open past the layer's blocking read, and a burst of leaving sockets leaves the
group holding only the sockets still open."""

import asyncio
import json
import os
import time
from pathlib import Path

import pytest
import redis
from django.conf import settings
from django.db import connection
from websockets.asyncio.client import connect
from websockets.protocol import State

from challenges.services.attempts import attempt_record
from judging.verdicts import Verdict
from tests.conftest import redis_up, require_service, subprocess_database_url
from tests.factories import make_challenge, make_end_user, make_workspace
from tests.servers import uvicorn_server

pytestmark = [pytest.mark.services, pytest.mark.django_db(transaction=True)]

ROOT = Path(__file__).resolve().parent.parent.parent
IDLE_SECONDS = 60
IDLE_CLIENTS = 20
BURST_CLIENTS = 200
# Smaller than the burst, so leaving sockets must wait for Redis connections.
SERVER_POOL_SIZE = 10


@pytest.fixture
def server():
    require_service("Redis", redis_up(), "set REDIS_URL")
    require_service("PostgreSQL", connection.vendor == "postgresql", "set DATABASE_URL")
    env = {
        **os.environ,
        "DATABASE_URL": subprocess_database_url(),
        "CHANNEL_LAYER_POOL_SIZE": str(SERVER_POOL_SIZE),
    }
    with uvicorn_server(env=env, workers=2) as port:
        yield f"ws://127.0.0.1:{port}"


def _group_size(challenge_id) -> int:
    config = settings.CHANNEL_LAYERS["default"]["CONFIG"]
    key = f"{config['prefix']}:group:leaderboard.challenge.{challenge_id}"
    with redis.Redis.from_url(settings.REDIS_URL) as client:
        return client.zcard(key)


async def _open_board(url: str):
    # No client pings: the socket carries nothing until the push.
    board = await connect(url, origin="http://127.0.0.1", open_timeout=30, ping_interval=None)
    first = json.loads(await asyncio.wait_for(board.recv(), 30))
    assert first["type"] == "leaderboard"
    return board


async def _group_settles(challenge_id, size: int, seconds: float) -> int:
    deadline = time.monotonic() + seconds
    current = await asyncio.to_thread(_group_size, challenge_id)
    while current != size and time.monotonic() < deadline:
        await asyncio.sleep(0.2)
        current = await asyncio.to_thread(_group_size, challenge_id)
    return current


def _record_a_win(challenge) -> None:
    try:
        attempt_record(
            challenge=challenge,
            end_user=make_end_user(workspace=challenge.workspace, external_id="speedy"),
            verdict=Verdict(True, "ok"),
        )
    finally:
        connection.close()


def test_it_keeps_idle_sockets_and_drops_every_socket_that_left(server):
    challenge = make_challenge(workspace=make_workspace("Live sockets"))
    url = f"{server}/ws/leaderboards/challenge/{challenge.id}/"

    async def scenario() -> None:
        idle_boards = await asyncio.gather(*[_open_board(url) for _ in range(IDLE_CLIENTS)])
        idle_since = time.monotonic()
        assert await _group_settles(challenge.id, IDLE_CLIENTS, 10) == IDLE_CLIENTS

        passing_boards = await asyncio.gather(*[_open_board(url) for _ in range(BURST_CLIENTS)])
        joined = await asyncio.to_thread(_group_size, challenge.id)
        assert joined == IDLE_CLIENTS + BURST_CLIENTS
        await asyncio.gather(*[board.close() for board in passing_boards])
        assert await _group_settles(challenge.id, IDLE_CLIENTS, 20) == IDLE_CLIENTS

        await asyncio.sleep(max(0.0, IDLE_SECONDS - (time.monotonic() - idle_since)))
        assert [board.state for board in idle_boards] == [State.OPEN] * IDLE_CLIENTS

        await asyncio.to_thread(_record_a_win, challenge)
        pushes = await asyncio.gather(
            *[asyncio.wait_for(board.recv(), 15) for board in idle_boards]
        )
        players = [[row["player"] for row in json.loads(push)["entries"]] for push in pushes]
        assert players == [["speedy"]] * IDLE_CLIENTS
        assert await asyncio.to_thread(_group_size, challenge.id) == IDLE_CLIENTS
        await asyncio.gather(*[board.close() for board in idle_boards])

    asyncio.run(scenario())

"""SIGTERM stops a real uvicorn, run with the options of the README's production command,
holding live board sockets within 10 s, whatever the process lived through, and closes the
sockets still open with 1001 (going away).

Each server gets a Redis of its own, so a test can take it away without disturbing
anything else on the machine: `stopped` (shut down, started again on the same port) or
`hung` (paused: connections open, nothing answers, reads wait for their timeout)."""

import asyncio
import contextlib
import json
import os
import shlex
import signal
import subprocess
import time
from collections.abc import Callable, Iterator
from contextlib import ExitStack, contextmanager
from pathlib import Path

import pytest
import redis
from django.db import connection
from websockets.asyncio.client import connect
from websockets.exceptions import ConnectionClosed

from tests.conftest import require_service, subprocess_database_url
from tests.factories import make_challenge, make_workspace
from tests.servers import private_redis, uvicorn_process

pytestmark = [pytest.mark.services, pytest.mark.django_db(transaction=True)]

README = Path(__file__).resolve().parent.parent / "README.md"

SOCKETS = 12
EXIT_SECONDS = 10
GOING_AWAY = 1001
# What a board socket answers when the channel layer fails under it (Redis went away).
INTERNAL_ERROR = 1011
STILL_OPEN = "still open"


@contextmanager
def _server(redis_port: int) -> Iterator[tuple[subprocess.Popen, str]]:
    require_service("PostgreSQL", connection.vendor == "postgresql", "set DATABASE_URL")
    env = {
        **os.environ,
        "DATABASE_URL": subprocess_database_url(),
        "REDIS_URL": f"redis://127.0.0.1:{redis_port}/0",
    }
    with uvicorn_process(env=env, options=_readme_uvicorn_options()) as (process, port):
        yield process, f"ws://127.0.0.1:{port}"


def _readme_uvicorn_options() -> list[str]:
    """The options of the README's production uvicorn command, but its address."""
    command = next(
        line for line in README.read_text().splitlines() if " config.asgi:application " in line
    )
    words = shlex.split(command, comments=True)
    options = words[words.index("config.asgi:application") + 1 :]
    for address in ("--host", "--port"):
        if address in options:
            del options[options.index(address) : options.index(address) + 2]
    return options


@contextmanager
def _redis_outage(kind: str, port: int) -> Iterator[Callable[[], None]]:
    """Redis out of reach from now; yields the call that brings it back. It is back when
    the block ends in any case (a `stopped` Redis then stops for good)."""
    with redis.Redis(port=port, socket_timeout=5) as client:
        pid = int(client.info("server")["process_id"])
        if kind == "stopped":
            with contextlib.suppress(redis.ConnectionError):  # gone before it answered
                client.shutdown(nosave=True)
    with ExitStack() as back:
        if kind == "stopped":

            def redis_back() -> None:
                back.enter_context(private_redis(port))

        else:
            os.kill(pid, signal.SIGSTOP)
            back.callback(os.kill, pid, signal.SIGCONT)
            redis_back = back.close
        yield redis_back


async def _open_boards(url: str, count: int = SOCKETS) -> list:
    async def one():
        board = await connect(url, origin="http://127.0.0.1", open_timeout=30, ping_interval=None)
        first = json.loads(await asyncio.wait_for(board.recv(), 30))
        assert first["type"] == "leaderboard"
        return board

    return await asyncio.gather(*[one() for _ in range(count)])


async def _close_code(board, seconds: float) -> int | str | None:
    """The close code the server sent (None: the connection dropped without one)."""
    try:
        while True:
            await asyncio.wait_for(board.recv(), seconds)
    except ConnectionClosed as closed:
        return closed.rcvd.code if closed.rcvd else None
    except TimeoutError:
        return STILL_OPEN


async def _terminate(process: subprocess.Popen, boards: list) -> tuple[bool, list]:
    """SIGTERM the server: (whether it exited within EXIT_SECONDS, each board's close code)."""
    signalled = time.monotonic()
    os.killpg(process.pid, signal.SIGTERM)
    codes = await asyncio.gather(*[_close_code(board, EXIT_SECONDS) for board in boards])
    left = max(0.1, EXIT_SECONDS - (time.monotonic() - signalled))
    try:
        await asyncio.to_thread(process.wait, left)
    except subprocess.TimeoutExpired:
        return False, codes
    return True, codes


def _board_url(server: str) -> str:
    challenge = make_challenge(workspace=make_workspace("Sigterm"))
    return f"{server}/ws/leaderboards/challenge/{challenge.id}/"


def test_it_exits_and_closes_its_sockets_with_going_away():
    with private_redis() as redis_server, _server(redis_server.port) as (process, server):
        url = _board_url(server)

        async def scenario():
            boards = await _open_boards(url)
            await asyncio.sleep(1)  # every socket's receive now waits in Redis
            return await _terminate(process, boards)

        exited, codes = asyncio.run(scenario())
    assert exited, "uvicorn still running 10 s after SIGTERM"
    assert codes == [GOING_AWAY] * SOCKETS


@pytest.mark.parametrize("outage", ["stopped", "hung"])
def test_it_exits_after_living_through_a_redis_outage(outage):
    with private_redis() as redis_server, _server(redis_server.port) as (process, server):
        url = _board_url(server)

        async def scenario():
            lived_through = await _open_boards(url)
            await asyncio.sleep(1)
            with _redis_outage(outage, redis_server.port) as redis_back:
                await asyncio.sleep(15)
                redis_back()
                opened_after = await _open_boards(url)
                await asyncio.sleep(1)
                exited, codes = await _terminate(process, lived_through + opened_after)
            return exited, codes[:SOCKETS], codes[SOCKETS:]

        exited, lived_through, opened_after = asyncio.run(scenario())
    assert exited, "uvicorn still running 10 s after SIGTERM"
    assert opened_after == [GOING_AWAY] * SOCKETS
    # A socket whose layer failed in the outage was closed then, with 1011.
    assert set(lived_through) <= {GOING_AWAY, INTERNAL_ERROR}


@pytest.mark.parametrize("outage", ["stopped", "hung"])
def test_it_exits_while_redis_is_out_of_reach(outage):
    with private_redis() as redis_server, _server(redis_server.port) as (process, server):
        url = _board_url(server)

        async def scenario():
            boards = await _open_boards(url)
            await asyncio.sleep(1)
            with _redis_outage(outage, redis_server.port):
                await asyncio.sleep(2)
                return await _terminate(process, boards)

        exited, codes = asyncio.run(scenario())
    assert exited, "uvicorn still running 10 s after SIGTERM"
    assert set(codes) <= {GOING_AWAY, INTERNAL_ERROR}
    if outage == "hung":
        # Nothing has failed yet (reads are still waiting): every socket was open.
        assert codes == [GOING_AWAY] * SOCKETS

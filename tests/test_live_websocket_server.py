"""A real ASGI server (uvicorn) and a real websocket client, with Redis as channel layer:
a win recorded in this process reaches a socket held open by the server process."""

import json
import os
import socket
import subprocess
import sys
import time
from pathlib import Path

import pytest
from django.db import connection
from websockets.exceptions import InvalidStatus
from websockets.sync.client import connect

from challenges.services.attempts import attempt_record
from judging.verdicts import Verdict
from tests.conftest import redis_up, require_service, subprocess_database_url
from tests.factories import make_challenge, make_end_user, make_workspace

ROOT = Path(__file__).resolve().parent.parent


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


@pytest.fixture
def server():
    require_service("Redis", redis_up(), "set REDIS_URL")
    require_service("PostgreSQL", connection.vendor == "postgresql", "set DATABASE_URL")
    port = _free_port()
    env = {**os.environ, "TESTING": "true", "DATABASE_URL": subprocess_database_url()}
    process = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "uvicorn",
            "config.asgi:application",
            "--host",
            "127.0.0.1",
            "--port",
            str(port),
            "--log-level",
            "warning",
        ],
        cwd=ROOT,
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
    )
    deadline = time.monotonic() + 60
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
    yield f"ws://127.0.0.1:{port}"
    process.terminate()
    try:
        process.wait(timeout=20)
    except subprocess.TimeoutExpired:
        process.kill()


@pytest.mark.django_db(transaction=True)
def test_a_win_reaches_an_open_socket_through_redis(server):
    workspace = make_workspace("Live")
    challenge = make_challenge(workspace=workspace)
    url = f"{server}/ws/leaderboards/challenge/{challenge.id}/"
    with connect(url, origin="http://127.0.0.1", open_timeout=10) as ws:
        first = json.loads(ws.recv(timeout=10))
        assert first["type"] == "leaderboard"
        assert first["entries"] == []

        attempt_record(
            challenge=challenge,
            end_user=make_end_user(workspace=workspace, external_id="speedy"),
            verdict=Verdict(True, "ok"),
        )
        pushed = json.loads(ws.recv(timeout=10))
    assert [(row["rank"], row["player"]) for row in pushed["entries"]] == [(1, "speedy")]


@pytest.mark.django_db(transaction=True)
def test_an_unknown_challenge_is_refused(server):
    url = f"{server}/ws/leaderboards/challenge/00000000-0000-0000-0000-000000000000/"
    with pytest.raises(InvalidStatus) as refused:
        connect(url, origin="http://127.0.0.1", open_timeout=10)
    assert refused.value.response.status_code == 403

"""A real ASGI server (uvicorn) and a real websocket client, with Redis as channel layer:
a win recorded in this process reaches a socket held open by the server process."""

import json
import os

import pytest
from django.db import connection
from websockets.exceptions import InvalidStatus
from websockets.sync.client import connect

from challenges.services.attempts import attempt_record
from judging.verdicts import Verdict
from tests.conftest import redis_up, require_service, subprocess_database_url
from tests.factories import make_challenge, make_end_user, make_workspace
from tests.servers import uvicorn_server


@pytest.fixture
def server():
    require_service("Redis", redis_up(), "set REDIS_URL")
    require_service("PostgreSQL", connection.vendor == "postgresql", "set DATABASE_URL")
    env = {**os.environ, "DATABASE_URL": subprocess_database_url()}
    with uvicorn_server(env=env) as port:
        yield f"ws://127.0.0.1:{port}"


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

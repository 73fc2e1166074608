"""Live board frames carry everything a page shows: after a win the frame holds the
standings and the board table's HTML (no viewer's row marked), so no browser fetches the
board again; a socket that connects later gets the same board from the cache."""

import json
import urllib.request

import pytest
from asgiref.sync import async_to_sync
from channels.db import database_sync_to_async
from channels.testing import WebsocketCommunicator
from django.conf import settings
from websockets.sync.client import connect

from challenges.services.collections import collection_create, collection_set_challenges
from config.asgi import application
from tests.factories import make_challenge, make_workspace, record_win
from tests.test_live_websocket_server import server  # noqa: F401 - the uvicorn fixture

pytestmark = pytest.mark.django_db(transaction=True)


def socket(path: str) -> WebsocketCommunicator:
    return WebsocketCommunicator(application, path, headers=[(b"origin", b"http://127.0.0.1")])


def win(challenge, name: str, elapsed_ms: int = 500) -> None:
    record_win(challenge, name, elapsed_ms=elapsed_ms)


def test_a_win_pushes_the_standings_and_the_board_html(workspace):
    challenge = make_challenge(workspace=workspace, scoring_strategy="fastest")

    async def scenario():
        communicator = socket(f"/ws/leaderboards/challenge/{challenge.id}/")
        connected, _ = await communicator.connect(timeout=5)
        assert connected
        opening = await communicator.receive_json_from(timeout=5)
        assert opening["type"] == "leaderboard"
        assert opening["entries"] == []
        assert "Nobody has solved it yet" in opening["html"]

        await database_sync_to_async(win)(challenge, "ada", 1500)
        pushed = await communicator.receive_json_from(timeout=5)
        (row,) = pushed["entries"]
        assert (row["rank"], row["player"], row["elapsed_ms"]) == (1, "ada", 1500)
        assert f'data-end-user="{row["end_user_id"]}"' in pushed["html"]
        assert ">ada</a>" in pushed["html"]
        assert "1.5 s" in pushed["html"]  # the value the page shows, formatted as it does
        assert " me" not in pushed["html"] and "(you)" not in pushed["html"]
        if settings.REDIS_URL:
            assert pushed["version"] > opening.get("version", 0)

        # A page opened now is sent the same board on connect.
        later = socket(f"/ws/leaderboards/challenge/{challenge.id}/")
        assert (await later.connect(timeout=5))[0]
        again = await later.receive_json_from(timeout=5)
        assert (again["entries"], again["html"]) == (pushed["entries"], pushed["html"])
        await later.disconnect()
        await communicator.disconnect()

    async_to_sync(scenario)()


def test_a_collection_frame_carries_its_board_html():
    workspace = make_workspace("Collection frames")
    first, second = (make_challenge(workspace=workspace) for _ in range(2))
    collection = collection_create(
        workspace=workspace, user=None, name="Gauntlet", is_public=True, scoring_strategy="sum"
    )
    collection_set_challenges(collection=collection, challenge_ids=[first.id, second.id])

    async def scenario():
        communicator = socket(f"/ws/leaderboards/collection/{collection.id}/")
        assert (await communicator.connect(timeout=5))[0]
        opening = await communicator.receive_json_from(timeout=5)
        assert "No one has solved a challenge of this collection yet" in opening["html"]

        await database_sync_to_async(win)(first, "ada")
        pushed = await communicator.receive_json_from(timeout=5)
        assert [(r["rank"], r["player"]) for r in pushed["entries"]] == [(1, "ada")]
        assert "ada" in pushed["html"] and "1/2 solved" in pushed["html"]
        assert "(you)" not in pushed["html"]
        await communicator.disconnect()

    async_to_sync(scenario)()


def test_a_server_process_pushes_and_serves_the_board_drawn_after_the_commit(server):  # noqa: F811
    challenge = make_challenge(workspace=make_workspace("Across processes"))
    with connect(
        f"{server}/ws/leaderboards/challenge/{challenge.id}/",
        origin="http://127.0.0.1",
        open_timeout=10,
    ) as ws:
        assert json.loads(ws.recv(timeout=10))["entries"] == []
        win(challenge, "speedy")
        pushed = json.loads(ws.recv(timeout=10))
    assert [row["player"] for row in pushed["entries"]] == ["speedy"]
    assert ">speedy</a>" in pushed["html"]

    # The server process answers the same board, with an ETag it revalidates.
    http = server.replace("ws://", "http://")
    with urllib.request.urlopen(f"{http}/web/api/challenges/{challenge.id}/leaderboard") as r:
        etag, body = r.headers["ETag"], json.loads(r.read())
    assert [row["player"] for row in body["entries"]] == ["speedy"]
    request = urllib.request.Request(
        f"{http}/web/api/challenges/{challenge.id}/leaderboard",
        headers={"If-None-Match": etag},
    )
    with pytest.raises(urllib.error.HTTPError) as not_modified:
        urllib.request.urlopen(request)
    assert not_modified.value.code == 304

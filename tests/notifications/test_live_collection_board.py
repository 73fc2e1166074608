"""/ws/leaderboards/collection/<id>/: standings on connect, a frame after each change that
alters them, nothing for a change they do not show; across processes through Redis."""

import json

import pytest
from asgiref.sync import async_to_sync
from channels.db import database_sync_to_async
from channels.testing import WebsocketCommunicator
from django.core.cache import cache
from websockets.sync.client import connect

from challenges.services.attempts import attempt_record
from challenges.services.collections import collection_create, collection_set_challenges
from config.asgi import application
from judging.verdicts import Verdict
from tests.factories import make_challenge, make_end_user, make_workspace
from tests.test_live_websocket_server import server  # noqa: F401 - the uvicorn fixture


def _collection(workspace, challenges):
    collection = collection_create(
        workspace=workspace, user=None, name="Gauntlet", is_public=True, scoring_strategy="sum"
    )
    collection_set_challenges(collection=collection, challenge_ids=[c.id for c in challenges])
    return collection


def _solve(challenge, end_user, elapsed_ms=500):
    return attempt_record(
        challenge=challenge, end_user=end_user, verdict=Verdict(True, "ok"), elapsed_ms=elapsed_ms
    )


def _socket(path: str) -> WebsocketCommunicator:
    return WebsocketCommunicator(application, path, headers=[(b"origin", b"http://127.0.0.1")])


@pytest.mark.django_db(transaction=True)
def test_it_sends_the_standings_then_a_frame_only_when_they_change():
    cache.clear()
    workspace = make_workspace("Collection live")
    first, second = (make_challenge(workspace=workspace) for _ in range(2))
    collection = _collection(workspace, [first, second])
    ada = make_end_user(workspace=workspace, external_id="ada")

    async def scenario():
        communicator = _socket(f"/ws/leaderboards/collection/{collection.id}/")
        connected, _ = await communicator.connect()
        assert connected
        opening = await communicator.receive_json_from(timeout=5)
        assert opening["entries"] == []
        assert opening["challenge_count"] == 2

        await database_sync_to_async(_solve)(first, ada)
        frame = await communicator.receive_json_from(timeout=5)
        assert [(r["rank"], r["player"], r["solved"]) for r in frame["entries"]] == [(1, "ada", 1)]

        # Faster on the same challenge: the entry changes, what the board shows does not.
        await database_sync_to_async(_solve)(first, ada, 100)
        assert await communicator.receive_nothing(timeout=0.5)

        await database_sync_to_async(_solve)(second, ada)
        frame = await communicator.receive_json_from(timeout=5)
        assert [(r["player"], r["solved"]) for r in frame["entries"]] == [("ada", 2)]
        await communicator.disconnect()

    async_to_sync(scenario)()


@pytest.mark.django_db(transaction=True)
def test_it_refuses_an_unknown_collection():
    async def scenario():
        for path in ("00000000-0000-0000-0000-000000000000", "not-a-uuid"):
            communicator = _socket(f"/ws/leaderboards/collection/{path}/")
            connected, code = await communicator.connect()
            assert not connected
            assert code == 4404

    async_to_sync(scenario)()


@pytest.mark.django_db
def test_the_collection_page_loads_the_live_script(client):
    workspace = make_workspace("Collection page")
    collection = _collection(workspace, [make_challenge(workspace=workspace)])
    html = client.get(f"/collections/{collection.slug}/").content.decode()
    assert f'data-live="/ws/leaderboards/collection/{collection.id}/"' in html
    assert "js/collection-board" in html
    assert "<script>" not in html


@pytest.mark.django_db(transaction=True)
def test_a_solve_in_this_process_reaches_a_socket_held_by_the_server_process(server):  # noqa: F811
    cache.clear()
    workspace = make_workspace("Collection across")
    challenge = make_challenge(workspace=workspace)
    collection = _collection(workspace, [challenge])
    url = f"{server}/ws/leaderboards/collection/{collection.id}/"
    with connect(url, origin="http://127.0.0.1", open_timeout=10) as ws:
        opening = json.loads(ws.recv(timeout=10))
        assert opening["entries"] == []
        _solve(challenge, make_end_user(workspace=workspace, external_id="remote"))
        pushed = json.loads(ws.recv(timeout=10))
    assert [(row["rank"], row["player"]) for row in pushed["entries"]] == [(1, "remote")]

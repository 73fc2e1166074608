"""With Redis out of reach the board cache steps aside: wins are still recorded and pushed,
and board reads answer 200 (and 304) from the database. Needs no Redis: REDIS_URL points
at a port nothing listens on."""

import pytest
from asgiref.sync import async_to_sync
from channels.db import database_sync_to_async
from channels.testing import WebsocketCommunicator
from django.test import override_settings

from challenges.board_cache import board_cached
from config.asgi import application
from tests.factories import make_challenge, record_win
from tests.servers import free_port

pytestmark = pytest.mark.django_db(transaction=True)


@pytest.fixture(autouse=True)
def _redis_out_of_reach():
    with override_settings(REDIS_URL=f"redis://127.0.0.1:{free_port()}/0"):
        yield


@pytest.fixture
def challenge(workspace):
    return make_challenge(workspace=workspace, scoring_strategy="fastest")


def win(challenge, name: str, elapsed_ms: int) -> None:
    record_win(challenge, name, elapsed_ms=elapsed_ms)


def test_reads_answer_from_the_database(anon_api, challenge):
    win(challenge, "ada", 300)
    url = f"/web/api/challenges/{challenge.id}/leaderboard"
    first = anon_api.get(url)
    assert first.status_code == 200
    assert [row["player"] for row in first.json()["entries"]] == ["ada"]
    assert anon_api.get(url, HTTP_IF_NONE_MATCH=first["ETag"]).status_code == 304

    win(challenge, "bob", 100)
    second = anon_api.get(url, HTTP_IF_NONE_MATCH=first["ETag"])
    assert second.status_code == 200
    assert [row["player"] for row in second.json()["entries"]] == ["bob", "ada"]


def test_the_reader_reports_a_miss_instead_of_failing(challenge):
    assert async_to_sync(board_cached)(challenge.id) is None


def test_a_win_still_reaches_an_open_socket(challenge):
    async def scenario():
        communicator = WebsocketCommunicator(
            application,
            f"/ws/leaderboards/challenge/{challenge.id}/",
            headers=[(b"origin", b"http://127.0.0.1")],
        )
        connected, _ = await communicator.connect(timeout=5)
        assert connected
        assert (await communicator.receive_json_from(timeout=5))["entries"] == []
        await database_sync_to_async(win)(challenge, "ada", 300)
        pushed = await communicator.receive_json_from(timeout=5)
        assert [row["player"] for row in pushed["entries"]] == ["ada"]
        assert "ada" in pushed["html"]
        await communicator.disconnect()

    async_to_sync(scenario)()

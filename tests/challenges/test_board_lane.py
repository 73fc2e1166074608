"""Board reads through the served app: the raw lane answers the default board from the
Redis cache (one GET, no query), with the ETag and a 304; anything else goes to Django."""

import pytest

from challenges.board_refresh import board_refreshes_wait
from core.fastlane import lane_counts
from tests.conftest import redis_up, require_service
from tests.factories import make_challenge, record_win
from tests.lane_client import LaneClient

pytestmark = pytest.mark.django_db(transaction=True)

LANE = "board_read_lane"


@pytest.fixture
def reader():
    require_service("Redis", redis_up(), "set REDIS_URL")
    client = LaneClient()
    yield client
    client.close()


@pytest.fixture
def challenge(workspace):
    return make_challenge(workspace=workspace, name="Board Lane")


def win(challenge, name: str) -> None:
    record_win(challenge, name)


def read(client, challenge, query: str = "", **headers):
    answered = lane_counts[f"{LANE}:answered"]
    response = client.get(f"/web/api/challenges/{challenge.id}/leaderboard{query}", **headers)
    return response, lane_counts[f"{LANE}:answered"] > answered


def test_a_miss_goes_to_django_which_fills_the_cache_for_the_lane(reader, challenge):
    first, by_lane = read(reader, challenge)  # no board stored yet
    assert first.status_code == 200 and not by_lane
    assert first.json()["entries"] == []
    again, by_lane = read(reader, challenge)
    assert by_lane and again.content == first.content and again["ETag"] == first["ETag"]


def test_the_lane_serves_the_board_stored_after_commit_and_a_304(reader, challenge):
    win(challenge, "ada")
    board_refreshes_wait()
    cached, by_lane = read(reader, challenge, "?limit=10")
    assert by_lane
    assert cached.status_code == 200
    assert cached["ETag"]
    assert cached["Content-Type"] == "application/json"
    assert [row["player"] for row in cached.json()["entries"]] == ["ada"]

    unchanged, by_lane = read(reader, challenge, HTTP_IF_NONE_MATCH=cached["ETag"])
    assert by_lane and unchanged.status_code == 304 and unchanged.content == b""


def test_a_win_replaces_what_the_lane_serves(reader, challenge):
    win(challenge, "ada")
    before, _ = read(reader, challenge)
    win(challenge, "grace")
    board_refreshes_wait()
    after, by_lane = read(reader, challenge, HTTP_IF_NONE_MATCH=before["ETag"])
    assert by_lane, "the redraw after the commit refreshed the cache"
    assert after.status_code == 200
    assert after["ETag"] != before["ETag"]
    assert [row["player"] for row in after.json()["entries"]] == ["ada", "grace"]


@pytest.mark.parametrize("query", ["?limit=5", "?limit=10&x=1", "?limit=abc"])
def test_other_reads_go_to_django(reader, challenge, query):
    win(challenge, "ada")
    read(reader, challenge)
    response, by_lane = read(reader, challenge, query)
    assert not by_lane
    assert response.status_code in (200, 400)


def test_an_unknown_or_hidden_board_gets_djangos_404(reader, challenge):
    response = reader.get("/web/api/challenges/not-a-uuid/leaderboard")
    assert response.status_code == 404
    assert response.json()["error"]["code"] == "not_found"

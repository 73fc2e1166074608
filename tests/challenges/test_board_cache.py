"""GET /web/api/challenges/<id>/leaderboard from the board cache in Redis: the board is
replaced in the step after a win commits, read without a query, and revalidated with its
ETag (304 while unchanged, the new body after a change)."""

import json

import pytest
from django.core.cache import cache
from django.db import connection
from django.test.utils import CaptureQueriesContext, override_settings
from rest_framework.renderers import JSONRenderer

from challenges.api.serializers import LeaderboardSerializer
from challenges.board_refresh import board_refreshes_wait
from challenges.selectors.leaderboards import leaderboard_for_challenge
from tests.conftest import redis_up, require_service
from tests.factories import make_challenge, record_win
from tests.servers import free_port

# Real commits: the board is stored only from committed data.
pytestmark = pytest.mark.django_db(transaction=True)


@pytest.fixture(autouse=True)
def _redis():
    require_service("Redis", redis_up(), "set REDIS_URL")


@pytest.fixture
def challenge(workspace):
    return make_challenge(workspace=workspace, scoring_strategy="fastest")


def board_url(challenge, query: str = "") -> str:
    return f"/web/api/challenges/{challenge.id}/leaderboard{query}"


def win(challenge, name: str, elapsed_ms: int = 500) -> None:
    record_win(challenge, name, elapsed_ms=elapsed_ms)


def database_answer(api, challenge):
    """What the endpoint answers with no cache to read (Redis out of reach)."""
    with override_settings(REDIS_URL=f"redis://127.0.0.1:{free_port()}/0"):
        return api.get(board_url(challenge))


def test_it_serves_a_stored_board_without_a_query(anon_api, challenge, django_assert_num_queries):
    win(challenge, "ada", 300)
    board_refreshes_wait()
    cache.clear()  # Redis lost its keys (a restart): the next read misses
    with CaptureQueriesContext(connection) as miss:
        first = anon_api.get(board_url(challenge))
    assert first.status_code == 200
    assert len(miss) > 0  # the first read drew the board from the database

    with django_assert_num_queries(0):
        second = anon_api.get(board_url(challenge, "?limit=10"))
    assert second.status_code == 200
    assert second.content == first.content
    assert second["ETag"] == first["ETag"]
    assert second["Content-Type"] == "application/json"
    assert [(row["rank"], row["player"]) for row in second.json()["entries"]] == [(1, "ada")]


def test_a_committed_win_replaces_the_stored_board(anon_api, challenge, django_assert_num_queries):
    win(challenge, "ada", 300)
    before = anon_api.get(board_url(challenge))

    win(challenge, "bob", 100)
    board_refreshes_wait()  # the coalesced redraw after the commit stores the new board

    with django_assert_num_queries(0):
        after = anon_api.get(board_url(challenge))
    assert [row["player"] for row in after.json()["entries"]] == ["bob", "ada"]
    assert after["ETag"] != before["ETag"]
    fresh = database_answer(anon_api, challenge)
    assert after.json() == fresh.json()
    assert after.content == fresh.content
    assert after["ETag"] == fresh["ETag"]


def test_it_answers_the_api_shape_it_answered_before(anon_api, challenge):
    win(challenge, "ada", 300)
    body = anon_api.get(board_url(challenge)).json()
    assert body["challenge_id"] == str(challenge.id)
    assert body["scoring_strategy"] == "fastest"
    assert body["limit"] == 10
    (row,) = body["entries"]
    assert set(row) == {
        "rank",
        "player",
        "source",
        "end_user_id",
        "score",
        "judge_rating",
        "tokens_total",
        "elapsed_ms",
        "achieved_at",
        "attempt_id",
    }
    assert row["elapsed_ms"] == 300
    assert row["achieved_at"].endswith("Z")
    # The same values DRF's renderer gave the serializer's data before the cache.
    rows = leaderboard_for_challenge(challenge=challenge, limit=10)
    board = {"challenge_id": challenge.id, "scoring_strategy": "fastest", "limit": 10}
    drf = JSONRenderer().render(LeaderboardSerializer({**board, "entries": rows}).data)
    assert body == json.loads(drf)


def test_an_unchanged_board_answers_304_to_its_etag(anon_api, challenge):
    win(challenge, "ada")
    etag = anon_api.get(board_url(challenge))["ETag"]
    assert etag.startswith('"') and etag.endswith('"')

    for header in (etag, f"W/{etag}", f'"other", {etag}'):
        again = anon_api.get(board_url(challenge), HTTP_IF_NONE_MATCH=header)
        assert again.status_code == 304
        assert again.content == b""
        assert again["ETag"] == etag

    other = anon_api.get(board_url(challenge), HTTP_IF_NONE_MATCH='"something-else"')
    assert other.status_code == 200


def test_an_old_etag_gets_the_new_board_after_a_change(anon_api, challenge):
    win(challenge, "ada", 300)
    old = anon_api.get(board_url(challenge))["ETag"]
    win(challenge, "bob", 100)

    response = anon_api.get(board_url(challenge), HTTP_IF_NONE_MATCH=old)
    assert response.status_code == 200
    assert response["ETag"] != old
    assert [row["player"] for row in response.json()["entries"]] == ["bob", "ada"]


def test_other_limits_come_from_the_database_with_an_etag(anon_api, challenge):
    for n in range(3):
        win(challenge, f"p{n}", 100 + n)
    response = anon_api.get(board_url(challenge, "?limit=2"))
    assert response.status_code == 200
    assert response.json()["limit"] == 2
    assert [row["player"] for row in response.json()["entries"]] == ["p0", "p1"]
    repeat = anon_api.get(board_url(challenge, "?limit=2"), HTTP_IF_NONE_MATCH=response["ETag"])
    assert repeat.status_code == 304

    win(challenge, "fastest", 10)
    changed = anon_api.get(board_url(challenge, "?limit=2"), HTTP_IF_NONE_MATCH=response["ETag"])
    assert changed.status_code == 200
    assert [row["player"] for row in changed.json()["entries"]] == ["fastest", "p0"]


@pytest.mark.parametrize("query", ["?limit=0", "?limit=101", "?limit=ten"])
def test_a_bad_limit_is_refused_as_before(anon_api, challenge, query):
    anon_api.get(board_url(challenge))  # a stored board does not skip the check
    response = anon_api.get(board_url(challenge, query))
    assert response.status_code == 400
    assert response.json()["error"]["code"] == "invalid"
    assert "limit" in response.json()["error"]["fields"]


@pytest.mark.parametrize("challenge_id", ["not-a-uuid", "00000000-0000-0000-0000-000000000000"])
def test_an_unknown_challenge_is_404(anon_api, challenge_id):
    response = anon_api.get(f"/web/api/challenges/{challenge_id}/leaderboard")
    assert response.status_code == 404
    assert response.json()["error"]["code"] == "not_found"

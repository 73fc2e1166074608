"""How a board read may be kept, whichever path serves it.

A board the same for everyone (a public workspace's, frozen or not, whole or one part) is
`Cache-Control: public, max-age=1` with its ETag, on Django's path and on the lane; one
that depends on who asks (players-only or hidden boards) is `private, no-cache`, never
public. Both paths answer If-None-Match with Django's `get_conditional_response`.
"""

import pytest
from django.test import Client
from django.utils import timezone

from challenges.board_refresh import board_refreshes_wait
from core.fastlane import lane_counts
from players.events import bracket_create, workspace_event_update
from players.services import end_user_for_account
from tests.conftest import redis_up, require_service
from tests.factories import make_challenge, make_player, record_win
from tests.lane_client import LaneClient

pytestmark = pytest.mark.django_db(transaction=True)

PUBLIC = "public, max-age=1"
PRIVATE = "private, no-cache"


@pytest.fixture
def board(workspace):
    challenge = make_challenge(workspace=workspace, name="Cached Board")
    record_win(challenge, "ada")
    board_refreshes_wait()
    return challenge


def url(challenge, query: str = "") -> str:
    return f"/web/api/challenges/{challenge.id}/leaderboard{query}"


def caching(response) -> tuple[int, str | None, bool]:
    return (response.status_code, response.get("Cache-Control"), bool(response.get("ETag")))


@pytest.mark.parametrize(
    "query", ["", "?limit=10", "?limit=3", "?players=agents", "?players=humans", "?bracket=gold"]
)
def test_every_part_of_a_public_board_is_publicly_cacheable_on_djangos_path(
    workspace, board, query
):
    bracket_create(workspace=workspace, name="Gold", slug="gold")
    client = Client()
    first = client.get(url(board, query))
    assert caching(first) == (200, PUBLIC, True)
    again = client.get(url(board, query), HTTP_IF_NONE_MATCH=first["ETag"])
    assert caching(again) == (304, PUBLIC, True)
    assert again["ETag"] == first["ETag"] and again.content == b""


def test_a_frozen_public_board_is_the_same_for_everyone(workspace, board, creator):
    workspace_event_update(workspace=workspace, freeze_at=timezone.now())
    anonymous = Client().get(url(board))
    as_creator = Client()
    as_creator.force_login(creator)
    creators = as_creator.get(url(board))
    assert caching(anonymous) == caching(creators) == (200, PUBLIC, True)
    assert anonymous.content == creators.content


def test_the_lane_and_django_give_the_same_caching_answer(board, settings):
    require_service("Redis", redis_up(), "set REDIS_URL")
    client = LaneClient()
    try:
        Client().get(url(board))  # the cache holds the board
        answered = lane_counts["board_read_lane:answered"]
        by_lane = client.get(url(board))
        assert lane_counts["board_read_lane:answered"] == answered + 1
        by_django = Client().get(url(board))
        assert (by_lane["Cache-Control"], by_lane["ETag"]) == (PUBLIC, by_django["ETag"])
        assert by_django["Cache-Control"] == PUBLIC
        for read in (
            lambda: client.get(url(board), HTTP_IF_NONE_MATCH=by_lane["ETag"]),
            lambda: Client().get(url(board), HTTP_IF_NONE_MATCH=by_lane["ETag"]),
        ):
            unchanged = read()
            assert (unchanged.status_code, unchanged["Cache-Control"]) == (304, PUBLIC)
    finally:
        client.close()


@pytest.mark.parametrize("visibility", ["players", "hidden"])
@pytest.mark.parametrize("query", ["", "?limit=3", "?players=agents"])
def test_a_board_that_depends_on_the_viewer_is_never_publicly_cacheable(
    workspace, board, creator, visibility, query
):
    workspace_event_update(workspace=workspace, board_visibility=visibility)
    viewer = creator
    if visibility == "players":
        viewer = make_player()
        end_user_for_account(workspace=workspace, account=viewer)
    client = Client()
    client.force_login(viewer)
    shown = client.get(url(board, query))
    assert caching(shown) == (200, PRIVATE, True)
    again = client.get(url(board, query), HTTP_IF_NONE_MATCH=shown["ETag"])
    assert caching(again) == (304, PRIVATE, True)
    # Anyone else is refused, with or without the tag, and nothing says "public".
    for headers in ({}, {"HTTP_IF_NONE_MATCH": shown["ETag"]}):
        refused = Client().get(url(board, query), **headers)
        assert refused.status_code == 404
        assert "public" not in refused.get("Cache-Control", "")

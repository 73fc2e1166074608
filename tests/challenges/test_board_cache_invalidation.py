"""A stored board goes when what it shows changes outside its rows: the challenge hidden,
deleted or re-scored, a player on it renamed. Only visible challenges are ever stored."""

import pytest
import redis
from django.conf import settings

from challenges.board_cache import board_cache_key
from challenges.services.challenges import challenge_delete, challenge_update
from players.services import end_user_for_account, profile_create, profile_update
from tests.conftest import redis_up, require_service
from tests.factories import make_challenge, make_end_user, record_win

pytestmark = pytest.mark.django_db(transaction=True)


@pytest.fixture(autouse=True)
def _redis():
    require_service("Redis", redis_up(), "set REDIS_URL")


@pytest.fixture
def challenge(workspace):
    return make_challenge(workspace=workspace, scoring_strategy="fastest")


def board_url(challenge) -> str:
    return f"/web/api/challenges/{challenge.id}/leaderboard"


def stored(challenge) -> bool:
    """Whether Redis holds the board (what a reader bypassing Django would serve)."""
    return bool(redis.Redis.from_url(settings.REDIS_URL).exists(board_cache_key(challenge.id)))


def win(challenge, end_user, *, elapsed_ms=500, tokens_total=None) -> None:
    record_win(challenge, end_user, elapsed_ms=elapsed_ms, tokens_total=tokens_total)


def test_hiding_a_challenge_drops_its_board(anon_api, challenge):
    win(challenge, make_end_user(workspace=challenge.workspace, external_id="ada"))
    assert anon_api.get(board_url(challenge)).status_code == 200
    assert stored(challenge)

    challenge_update(challenge=challenge, user=None, is_active=False)

    assert not stored(challenge)
    response = anon_api.get(board_url(challenge))
    assert response.status_code == 404
    assert response.json()["error"]["code"] == "not_found"
    assert not stored(challenge)  # a hidden challenge's board is never stored

    challenge_update(challenge=challenge, user=None, is_active=True)
    shown = anon_api.get(board_url(challenge))
    assert shown.status_code == 200
    assert [row["player"] for row in shown.json()["entries"]] == ["ada"]


def test_deleting_a_challenge_drops_its_board(anon_api, challenge):
    win(challenge, make_end_user(workspace=challenge.workspace, external_id="ada"))
    url, challenge_id = board_url(challenge), challenge.id
    assert anon_api.get(url).status_code == 200
    assert stored(challenge)

    challenge_delete(challenge=challenge)

    challenge.id = challenge_id  # delete() forgot it
    assert not stored(challenge)
    assert anon_api.get(url).status_code == 404


def test_a_new_strategy_reorders_the_stored_board(anon_api, challenge):
    workspace = challenge.workspace
    win(challenge, make_end_user(workspace=workspace, external_id="quick"), elapsed_ms=100)
    win(
        challenge,
        make_end_user(workspace=workspace, external_id="frugal"),
        elapsed_ms=900,
        tokens_total=10,
    )
    before = anon_api.get(board_url(challenge)).json()
    assert [row["player"] for row in before["entries"]] == ["quick", "frugal"]

    # The re-ranking task runs once the change commits (eagerly in tests).
    challenge_update(challenge=challenge, user=None, scoring_strategy="fewest_tokens")

    after = anon_api.get(board_url(challenge)).json()
    assert after["scoring_strategy"] == "fewest_tokens"
    assert [row["player"] for row in after["entries"]] == ["frugal", "quick"]


def test_a_player_renamed_in_their_profile_is_renamed_on_the_stored_board(
    anon_api, challenge, player
):
    profile_create(account=player, display_name="Old Name")
    win(challenge, end_user_for_account(workspace=challenge.workspace, account=player))
    assert [r["player"] for r in anon_api.get(board_url(challenge)).json()["entries"]] == [
        "Old Name"
    ]

    profile_update(account=player, display_name="New Name")

    entries = anon_api.get(board_url(challenge)).json()["entries"]
    assert [row["player"] for row in entries] == ["New Name"]


def test_a_player_renamed_by_a_save_is_renamed_on_the_stored_board(anon_api, challenge):
    dify_user = make_end_user(workspace=challenge.workspace, external_id="dify-7")
    win(challenge, dify_user)
    assert anon_api.get(board_url(challenge)).json()["entries"][0]["player"] == "dify-7"

    dify_user.display_name = "Seven"
    dify_user.save()  # as the admin's change form does

    assert anon_api.get(board_url(challenge)).json()["entries"][0]["player"] == "Seven"


def test_a_deleted_player_leaves_the_stored_board(anon_api, challenge):
    gone = make_end_user(workspace=challenge.workspace, external_id="gone")
    win(challenge, gone)
    assert len(anon_api.get(board_url(challenge)).json()["entries"]) == 1

    gone.delete()

    assert anon_api.get(board_url(challenge)).json()["entries"] == []

"""Issue 8, finding 13: a Dify end user named like a site player is told apart on every
board by its source, never by its name's text."""

import pytest
from django.test import Client

from challenges.selectors.leaderboards import leaderboard_standings
from challenges.services.attempts import attempt_record
from challenges.services.bridge_keys import bridge_key_create
from challenges.services.collections import collection_create, collection_set_challenges
from judging.verdicts import Verdict
from players.services import end_user_for_account, profile_create
from tests.bridge.conftest import EVALUATOR, bearer_client, post_json, run_id
from tests.factories import make_challenge

pytestmark = pytest.mark.django_db

OLD_ROW_KEYS = {
    "rank",
    "player",
    "end_user_id",
    "score",
    "judge_rating",
    "tokens_total",
    "elapsed_ms",
    "achieved_at",
    "attempt_id",
}


@pytest.fixture
def challenge(workspace):
    return make_challenge(workspace=workspace, name="The Vault", slug="the-vault")


@pytest.fixture
def two_demo_players(workspace, challenge, player):
    """A site account and a Dify user, both called "Demo Player", both on the board."""
    profile_create(account=player, display_name="Demo Player")
    site = end_user_for_account(workspace=workspace, account=player)
    attempt_record(challenge=challenge, end_user=site, verdict=Verdict(passed=True))
    _, raw = bridge_key_create(workspace=workspace, name="dify")
    response = post_json(
        bearer_client(raw),
        EVALUATOR,
        {
            "challenge_id": str(challenge.id),
            "output": "open sesame",
            "user": "Demo Player",
            "workflow_run_id": run_id(),
        },
    )
    assert response.status_code == 200, response.json()
    assert response.json()["challenge_succeeded"] is True


def test_the_board_api_says_which_row_came_through_dify(anon_api, challenge, two_demo_players):
    entries = anon_api.get(f"/web/api/challenges/{challenge.id}/leaderboard").json()["entries"]
    assert [(row["player"], row["source"]) for row in entries] == [
        ("Demo Player", "site"),
        ("Demo Player", "dify"),
    ]
    assert all(set(row) == OLD_ROW_KEYS | {"source"} for row in entries)


def test_the_board_page_marks_the_dify_player(challenge, two_demo_players):
    html = Client().get("/challenges/the-vault/leaderboard").content.decode()
    rows = html.split('<li class="board-row')[1:]
    assert "Demo Player" in rows[0] and "· Dify" not in rows[0]
    assert "Demo Player" in rows[1] and "· Dify" in rows[1]


def test_the_live_frame_carries_the_source(challenge, two_demo_players):
    frame = leaderboard_standings(challenge=challenge)
    assert [row["source"] for row in frame["entries"]] == ["site", "dify"]


def test_the_collection_board_marks_the_dify_player(
    anon_api, workspace, challenge, two_demo_players
):
    collection = collection_create(
        workspace=workspace,
        user=None,
        name="Set",
        slug="set",
        scoring_strategy="sum",
        is_public=True,
    )
    collection_set_challenges(collection=collection, challenge_ids=[challenge.id])
    board = anon_api.get(f"/web/api/challenge-collections/{collection.id}/leaderboard").json()
    assert sorted((row["player"], row["source"]) for row in board["entries"]) == [
        ("Demo Player", "dify"),
        ("Demo Player", "site"),
    ]
    html = Client().get("/collections/set/").content.decode()
    assert html.count("· Dify") == 1


def test_a_dify_user_string_loses_its_direction_controls(anon_api, workspace, challenge):
    _, raw = bridge_key_create(workspace=workspace, name="dify")
    post_json(
        bearer_client(raw),
        EVALUATOR,
        {
            "challenge_id": str(challenge.id),
            "output": "open sesame",
            "user": "\u202eDemo\u200b Player",
            "workflow_run_id": run_id(),
        },
    )
    entries = anon_api.get(f"/web/api/challenges/{challenge.id}/leaderboard").json()["entries"]
    assert [(row["player"], row["source"]) for row in entries] == [("Demo Player", "dify")]

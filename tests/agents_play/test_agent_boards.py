"""Agents' and humans' boards (SPEC §9 Agents): `?players=agents` ranks only wins made with
an agent's token, `?players=humans` every other, the default all — on the challenge board
(API, page, board cache), the collection board, the scoreboard and its CSV, the console."""

import csv
import io

import pytest
import redis
from django.conf import settings
from django.test import Client

from challenges.board_cache import board_cache_key
from challenges.services.collections import collection_create, collection_set_challenges
from players.services import end_user_for_account
from tests.conftest import redis_up, require_service
from tests.factories import make_challenge, make_player, record_win

pytestmark = pytest.mark.django_db(transaction=True)


@pytest.fixture
def challenge(workspace):
    return make_challenge(workspace=workspace, scoring_strategy="fewest_tokens")


def player(workspace, name: str):
    end_user = end_user_for_account(workspace=workspace, account=make_player(f"{name}@x.org"))
    end_user.display_name = name
    end_user.save()
    return end_user


@pytest.fixture
def standings(workspace, challenge):
    """ada won as a person (50 tokens), then better with her agent (10); bot only with an
    agent (20); bea only as a person (30)."""
    ada, bot, bea = (player(workspace, name) for name in ("ada", "bot", "bea"))
    record_win(challenge, ada, tokens_total=50, source="api")
    record_win(challenge, ada, tokens_total=10, source="agent")
    record_win(challenge, bot, tokens_total=20, source="agent")
    record_win(challenge, bea, tokens_total=30, source="web")
    return {"ada": ada, "bot": bot, "bea": bea}


def rows(body) -> list[tuple[str, int | None]]:
    return [(row["player"], row.get("tokens_total")) for row in body["entries"]]


def test_the_challenge_board_ranks_agents_and_humans_apart(standings, challenge):
    anonymous = Client()
    board = f"/web/api/challenges/{challenge.id}/leaderboard"
    everyone = anonymous.get(board).json()
    assert rows(everyone) == [("ada", 10), ("bot", 20), ("bea", 30)]
    assert everyone["players"] == "all"
    agents = anonymous.get(board + "?players=agents").json()
    assert rows(agents) == [("ada", 10), ("bot", 20)] and agents["players"] == "agents"
    # ada's best win as a person stands on the humans' board, not her agent's.
    humans = anonymous.get(board + "?players=humans").json()
    assert rows(humans) == [("bea", 30), ("ada", 50)] and humans["players"] == "humans"
    assert rows(anonymous.get(board + "?players=all").json()) == rows(everyone)
    assert rows(anonymous.get(board + "?players=humans&limit=1").json()) == [("bea", 30)]

    refused = anonymous.get(board + "?players=robots")
    assert refused.status_code == 400
    assert refused.json()["error"]["fields"] == {"players": ["agents, humans or all"]}


def test_the_scoreboard_its_csv_the_collection_board_and_the_console_filter_too(
    standings, challenge, workspace, creator_api
):
    anonymous = Client()
    scoreboard = f"/web/api/scoreboard/{workspace.slug}"
    assert sorted(row["player"] for row in anonymous.get(scoreboard).json()["entries"]) == [
        "ada",
        "bea",
        "bot",
    ]
    agents = anonymous.get(scoreboard + "?players=agents").json()
    assert sorted(row["player"] for row in agents["entries"]) == ["ada", "bot"]
    assert agents["players"] == "agents"
    exported = anonymous.get(scoreboard + "?players=humans&format=csv").content.decode()
    assert sorted(row["player"] for row in csv.DictReader(io.StringIO(exported))) == [
        "ada",
        "bea",
    ]
    assert anonymous.get(scoreboard + "?players=x").status_code == 400

    collection = collection_create(
        workspace=workspace, user=None, name="Tower", is_public=True, scoring_strategy="sum"
    )
    collection_set_challenges(collection=collection, challenge_ids=[challenge.id])
    collection_board = f"/web/api/challenge-collections/{collection.id}/leaderboard"
    body = anonymous.get(collection_board + "?players=agents").json()
    assert sorted(row["player"] for row in body["entries"]) == ["ada", "bot"]
    assert body["players"] == "agents"

    live = creator_api.get(f"/console/api/challenges/{challenge.id}/leaderboard?players=humans")
    assert rows(live.json()) == [("bea", 30), ("ada", 50)]
    console = creator_api.get("/console/api/scoreboard?players=agents").json()
    assert sorted(row["player"] for row in console["entries"]) == ["ada", "bot"]


def test_pages_have_a_players_switch_and_show_the_part_asked(standings, challenge, workspace):
    anonymous = Client()
    page = anonymous.get(f"/challenges/{challenge.slug}/?players=agents").content.decode()
    board = page.split('id="leaderboard"', 1)[1]
    assert ">bot</a>" in board and ">bea</a>" not in board
    assert 'href="?players=humans"' in board and 'href="?players=agents" aria-current' in board
    # A part of the board is polled, not fed by the live frames of the whole board.
    assert "data-live" not in board.split("</section>", 1)[0]
    whole = anonymous.get(f"/challenges/{challenge.slug}/").content.decode()
    assert 'data-live="/ws/leaderboards/challenge/' in whole

    scoreboard = anonymous.get(f"/scoreboard/{workspace.slug}/?players=humans").content.decode()
    assert ">bea</a>" in scoreboard and ">bot</a>" not in scoreboard
    assert "players=humans" in scoreboard  # the polled partial keeps the part
    # A page shows the whole board for a part it does not know.
    unknown = anonymous.get(f"/challenges/{challenge.slug}/?players=robots")
    assert unknown.status_code == 200 and ">bot</a>" in unknown.content.decode()


def test_each_part_has_its_own_cache_key_and_a_new_win_drops_it(standings, challenge):
    require_service("Redis", redis_up(), "set REDIS_URL")
    store = redis.Redis.from_url(settings.REDIS_URL)
    anonymous = Client()
    board = f"/web/api/challenges/{challenge.id}/leaderboard"
    agents = anonymous.get(board + "?players=agents")
    assert store.exists(board_cache_key(challenge.id, "agents"))
    assert rows(agents.json()) == [("ada", 10), ("bot", 20)]
    # A hit answers the same body and ETag.
    again = anonymous.get(board + "?players=agents")
    assert again.content == agents.content and again["ETag"] == agents["ETag"]
    assert (
        anonymous.get(board + "?players=agents", HTTP_IF_NONE_MATCH=agents["ETag"]).status_code
        == 304
    )

    record_win(challenge, standings["bea"], tokens_total=5, source="agent")

    assert not store.exists(board_cache_key(challenge.id, "agents"))
    after = anonymous.get(board + "?players=agents").json()
    assert rows(after) == [("bea", 5), ("ada", 10), ("bot", 20)]
    assert rows(anonymous.get(board + "?players=humans").json()) == [("bea", 30), ("ada", 50)]

"""The scoreboard freeze: a solve made after the freeze is invisible on every public
channel — the web API (cached and not), the board lane, the Redis board cache, the page,
the partials, the collection board, the scoreboard page, its API and CSV, the player page,
the live websocket and the players' feed — while the solver sees their own solve and a
creator sees live standings; lifting the freeze shows it everywhere."""

import csv
import io
import json
from datetime import timedelta

import pytest
import redis
from asgiref.sync import async_to_sync
from django.conf import settings
from django.test import Client
from django.utils import timezone
from websockets.sync.client import connect

from challenges.board_cache import board_cache_key, board_cached
from challenges.board_refresh import board_refreshes_wait
from challenges.services.attempts import attempt_record
from challenges.services.collections import collection_create, collection_set_challenges
from core.fastlane import lane_counts
from judging.verdicts import Verdict
from notifications.models import Event, EventRecipient
from players.events import workspace_event_update
from players.services import end_user_for_account
from tests.conftest import client_for, redis_up, require_service
from tests.factories import make_challenge, make_player, record_win
from tests.lane_client import LaneClient
from tests.test_live_websocket_server import server  # noqa: F401 - the uvicorn fixture

pytestmark = pytest.mark.django_db(transaction=True)


@pytest.fixture
def event(workspace, creator):
    """A fastest-wins challenge in a collection: ada solved in 900 ms before the freeze;
    after it, grace (a site player) solved in 500 ms and ada improved to 100 ms."""
    challenge = make_challenge(workspace=workspace, name="Frozen Vault", scoring_strategy="fastest")
    collection = collection_create(
        workspace=workspace, user=None, name="Frozen Run", is_public=True, scoring_strategy="sum"
    )
    collection_set_challenges(collection=collection, challenge_ids=[challenge.id])
    ada = record_win(challenge, "ada", elapsed_ms=900).end_user
    workspace_event_update(workspace=workspace, freeze_at=timezone.now())
    grace_account = make_player("grace@example.com")
    grace = end_user_for_account(workspace=workspace, account=grace_account)
    grace.display_name = "grace"
    grace.save()
    record_win(challenge, grace, elapsed_ms=500)
    record_win(challenge, ada, elapsed_ms=100)
    board_refreshes_wait()
    return {
        "workspace": workspace,
        "challenge": challenge,
        "collection": collection,
        "grace": grace,
        "grace_account": grace_account,
        "creator": creator,
    }


def players_of(body) -> list[tuple[str, int | None]]:
    return [(row["player"], row.get("elapsed_ms")) for row in body["entries"]]


def lift(workspace) -> None:
    workspace_event_update(workspace=workspace, freeze_lifted=True)


def test_the_web_api_shows_the_board_as_of_the_freeze(event):
    challenge = event["challenge"]
    url = f"/web/api/challenges/{challenge.id}/leaderboard"
    for query in ("", "?limit=5"):
        body = Client().get(url + query).json()
        assert players_of(body) == [("ada", 900)], query
        assert body["frozen_at"] is not None

    lift(event["workspace"])
    for query in ("", "?limit=5"):
        body = Client().get(url + query).json()
        assert players_of(body) == [("ada", 100), ("grace", 500)], query
        assert body["frozen_at"] is None


def test_the_board_cache_and_the_lane_serve_the_frozen_board(event):
    require_service("Redis", redis_up(), "set REDIS_URL")
    challenge = event["challenge"]
    stored = async_to_sync(board_cached)(challenge.id)
    assert stored is not None, "the refresh after the last commit stored the frozen board"
    assert players_of(json.loads(stored.json)) == [("ada", 900)]
    assert "grace" not in stored.html and "grace" not in stored.frame.decode()

    reader = LaneClient()
    try:
        answered = lane_counts["board_read_lane:answered"]
        response = reader.get(f"/web/api/challenges/{challenge.id}/leaderboard")
        assert lane_counts["board_read_lane:answered"] > answered
        assert players_of(response.json()) == [("ada", 900)]

        lift(event["workspace"])
        response = reader.get(f"/web/api/challenges/{challenge.id}/leaderboard")
        assert players_of(response.json()) == [("ada", 100), ("grace", 500)]
    finally:
        reader.close()


def test_pages_partials_and_the_collection_board_show_the_frozen_standings(event):
    challenge, collection = event["challenge"], event["collection"]
    anonymous = Client()
    page = anonymous.get(f"/challenges/{challenge.slug}/").content.decode()
    assert ">ada</a>" in page and ">grace</a>" not in page
    assert "Standings frozen at" in page
    partial = anonymous.get(f"/challenges/{challenge.slug}/leaderboard").content.decode()
    assert ">ada</a>" in partial and ">grace</a>" not in partial

    board = anonymous.get(f"/web/api/challenge-collections/{collection.id}/leaderboard").json()
    assert [row["player"] for row in board["entries"]] == ["ada"]
    assert board["frozen_at"] is not None
    collection_page = anonymous.get(f"/collections/{collection.slug}/").content.decode()
    assert ">grace</a>" not in collection_page

    # ada's player page shows the 0.9 s solve made by the freeze, not the later 0.1 s.
    ada = challenge.leaderboard_entries.get(end_user__external_id="ada").end_user_id
    ada_page = anonymous.get(f"/players/{ada}/").content.decode()
    assert "0.9 s" in ada_page and "0.1 s" not in ada_page

    lift(event["workspace"])
    page = anonymous.get(f"/challenges/{challenge.slug}/").content.decode()
    assert ">grace</a>" in page and "Standings frozen at" not in page
    board = anonymous.get(f"/web/api/challenge-collections/{collection.id}/leaderboard").json()
    assert sorted(row["player"] for row in board["entries"]) == ["ada", "grace"]


def test_the_scoreboard_page_api_and_csv_show_the_frozen_standings(event):
    slug = event["workspace"].slug
    anonymous = Client()
    page = anonymous.get(f"/scoreboard/{slug}/").content.decode()
    assert "ada" in page and "grace" not in page
    assert "Scoreboard frozen at" in page
    body = anonymous.get(f"/web/api/scoreboard/{slug}").json()
    assert [(row["player"], row["solves"]) for row in body["entries"]] == [("ada", 1)]
    exported = anonymous.get(f"/web/api/scoreboard/{slug}?format=csv")
    assert exported["Content-Type"] == "text/csv"
    rows = list(csv.DictReader(io.StringIO(exported.content.decode())))
    assert [row["player"] for row in rows] == ["ada"]

    lift(event["workspace"])
    body = anonymous.get(f"/web/api/scoreboard/{slug}").json()
    assert sorted(row["player"] for row in body["entries"]) == ["ada", "grace"]
    rows = list(
        csv.DictReader(
            io.StringIO(anonymous.get(f"/web/api/scoreboard/{slug}?format=csv").content.decode())
        )
    )
    assert sorted(row["player"] for row in rows) == ["ada", "grace"]


def test_the_solver_sees_their_own_solve_others_do_not(event):
    challenge, grace = event["challenge"], event["grace"]
    others = Client().get(f"/players/{grace.id}/").content.decode()
    assert "Frozen Vault" not in others and "No challenge solved yet" in others

    own = Client()
    own.force_login(event["grace_account"])
    mine = own.get(f"/players/{grace.id}/").content.decode()
    assert "Frozen Vault" in mine
    page = own.get(f"/challenges/{challenge.slug}/").content.decode()
    assert "You solved it; your place shows when the freeze lifts" in page
    assert ">grace</a>" not in page.split('id="leaderboard"', 1)[1].split("</section>")[0]
    attempts = client_for(event["grace_account"]).get(
        f"/web/api/challenges/{challenge.id}/attempts"
    )
    assert attempts.status_code == 200
    assert any(row["succeeded"] for row in attempts.json()["results"])


def test_creators_see_live_standings_in_the_console(event):
    creator_api = client_for(event["creator"])
    challenge = event["challenge"]
    board = creator_api.get(f"/console/api/challenges/{challenge.id}/leaderboard").json()
    assert players_of(board) == [("ada", 100), ("grace", 500)]
    assert board["frozen_at"] is None
    standings = creator_api.get("/console/api/scoreboard").json()
    assert sorted(row["player"] for row in standings["entries"]) == ["ada", "grace"]
    settings_body = creator_api.get("/console/api/workspace").json()
    assert settings_body["frozen"] is True


def test_the_players_feed_is_not_told_of_a_solve_after_the_freeze(workspace, creator):
    challenge = make_challenge(workspace=workspace, name="Fresh")
    watcher = make_player("watcher@example.com")
    # The watcher plays (and fails) before anyone solves: first blood would tell them.
    attempt_record(
        challenge=challenge,
        end_user=end_user_for_account(workspace=workspace, account=watcher),
        verdict=Verdict(False, "no"),
    )
    workspace_event_update(workspace=workspace, freeze_at=timezone.now())
    record_win(challenge, "late")
    blood = Event.objects.get(type="challenge_first_blood", subject_id=str(challenge.id))
    assert not EventRecipient.objects.filter(event=blood).exists()
    # The creators' feed has it.
    feed = client_for(creator).get("/console/api/events").json()
    assert str(blood.id) in {row["id"] for row in feed["results"]}


def test_an_attempt_answer_gives_no_rank_while_frozen(event):
    # A live rank would count the solves the frozen board hides.
    api = client_for(event["grace_account"])
    url = f"/web/api/challenges/{event['challenge'].id}/attempts"
    answer = api.post(url, {"prompt": "hello there"}, format="json")
    assert answer.status_code == 201, answer.json()
    assert answer.json()["leaderboard_rank"] is None
    lift(event["workspace"])
    answer = api.post(url, {"prompt": "hello again"}, format="json")
    assert answer.json()["leaderboard_rank"] == 2


def test_a_live_socket_gets_no_frame_showing_a_solve_after_the_freeze(workspace, server):  # noqa: F811
    challenge = make_challenge(workspace=workspace, scoring_strategy="fastest")
    record_win(challenge, "ada", elapsed_ms=900)
    workspace_event_update(workspace=workspace, freeze_at=timezone.now())
    url = f"{server}/ws/leaderboards/challenge/{challenge.id}/"
    with connect(url, origin="http://127.0.0.1", open_timeout=10) as ws:
        opening = json.loads(ws.recv(timeout=10))
        assert players_of(opening) == [("ada", 900)] and opening["frozen_at"]
        record_win(challenge, "grace", elapsed_ms=500)
        pushed = json.loads(ws.recv(timeout=10))
        assert players_of(pushed) == [("ada", 900)]
        assert "grace" not in json.dumps(pushed)

        lift(workspace)
        # The lift redraws every board of the workspace and pushes it.
        unfrozen = json.loads(ws.recv(timeout=10))
        assert players_of(unfrozen) == [("grace", 500), ("ada", 900)]
        assert unfrozen["frozen_at"] is None


def test_the_freeze_lifts_by_itself_at_the_end(workspace):
    challenge = make_challenge(workspace=workspace)
    record_win(challenge, "ada")
    now = timezone.now()
    workspace_event_update(workspace=workspace, freeze_at=now)
    record_win(challenge, "grace")
    assert [
        r["player"] for r in Client().get(f"/web/api/scoreboard/{workspace.slug}").json()["entries"]
    ] == ["ada"]
    workspace_event_update(workspace=workspace, ends_at=timezone.now())
    body = Client().get(f"/web/api/scoreboard/{workspace.slug}").json()
    assert sorted(row["player"] for row in body["entries"]) == ["ada", "grace"]
    assert body["frozen_at"] is None


def test_a_cached_board_is_kept_no_longer_than_the_coming_freeze_or_end(workspace):
    require_service("Redis", redis_up(), "set REDIS_URL")
    client = redis.Redis.from_url(settings.REDIS_URL)
    challenge = make_challenge(workspace=workspace)
    workspace_event_update(workspace=workspace, freeze_at=timezone.now() + timedelta(seconds=60))
    record_win(challenge, "ada")
    board_refreshes_wait()
    assert 0 < client.ttl(board_cache_key(challenge.id)) <= 60

    workspace_event_update(
        workspace=workspace,
        freeze_at=timezone.now(),
        ends_at=timezone.now() + timedelta(seconds=30),
    )
    record_win(challenge, "grace")
    board_refreshes_wait()
    assert 0 < client.ttl(board_cache_key(challenge.id)) <= 30

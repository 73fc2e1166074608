"""The arena's raw lanes (redblue/arena/lane.py), through the served app (tests/lane_client.py).

Each test reads `lane_counts` to know whether the lane answered a call or handed it to
Django; what a player sees must be the same either way. SpecArena's own server suite
(test_specarena_server_suite.py) runs against uvicorn, so through these lanes too.
"""

import json
import threading

import pytest
from django.db import connection
from django.test import Client

from core.fastlane import lane_counts
from redblue.arena.lane import lane_caches_clear
from redblue.models import (
    ArenaChallengeType,
    ArenaInvite,
    ArenaMessage,
    ArenaSession,
    ArenaUser,
    ScoringEntry,
)
from tests.arena.conftest import Keypair, game_state, now_ms
from tests.conftest import redis_up, require_service
from tests.lane_client import LaneClient

pytestmark = pytest.mark.django_db(transaction=True)


@pytest.fixture
def lane():
    require_service("PostgreSQL", connection.vendor == "postgresql", "set DATABASE_URL")
    require_service("Redis", redis_up(), "set REDIS_URL")
    lane_caches_clear()
    client = LaneClient()
    yield client
    client.close()


def created(calls: "Counted", path: str = "/api/v1/challenges/psi") -> dict:
    """A new session; the first of a type is Django's, which installs the type's row."""
    if not ArenaChallengeType.objects.filter(name="psi").exists():
        return calls.post("session_create_lane", path, "", answered=False).json()
    return calls.post("session_create_lane", path, "").json()


class Counted:
    """Calls through the lane client, each checked to be answered by the lane or not."""

    def __init__(self, client: LaneClient) -> None:
        self.client = client

    def _counted(self, handler: str, answered: bool, call):
        outcome = f"{handler}:{'answered' if answered else 'handed_on'}"
        before = lane_counts[outcome]
        response = call()
        assert lane_counts[outcome] == before + 1, f"expected {outcome}"
        return response

    def post(self, handler: str, path: str, body, *, answered=True, key=""):
        data = body if isinstance(body, str) else json.dumps(body)
        extra = {"HTTP_AUTHORIZATION": f"Bearer {key}"} if key else {}
        return self._counted(handler, answered, lambda: self.client.post(path, data, **extra))

    def get(self, handler: str, path: str, *, answered=True, key=""):
        extra = {"HTTP_AUTHORIZATION": f"Bearer {key}"} if key else {}
        return self._counted(handler, answered, lambda: self.client.get(path, **extra))


def guess(lane: Counted, session_id: str, invite: str, numbers, **kwargs):
    return lane.post(
        "message_lane",
        "/api/v1/arena/message",
        {
            "challengeId": session_id,
            "from": invite,
            "messageType": "guess",
            "content": " ".join(map(str, numbers)),
        },
        **kwargs,
    )


@pytest.mark.usefixtures("arena_standalone")
def test_the_lane_plays_a_standalone_psi_game_to_the_end(lane):
    calls = Counted(lane)
    created(calls)
    session = created(calls)
    first, second = session["invites"]
    assert session["state"]["status"] == "open"
    assert session["state"]["scores"] == [{"security": 0, "utility": 0}] * 2
    assert ArenaInvite.objects.filter(session_id=session["id"]).count() == 2

    for invite in (first, second):
        joined = calls.post("join_lane", "/api/arena/join", {"invite": invite}).json()
        assert joined["ChallengeID"] == session["id"]
        assert joined["ChallengeInfo"]["name"] == "Private Set Intersection"
        assert "sessionKey" not in joined
    mine = calls.get("arena_sync_lane", f"/api/v1/arena/sync?channel={session['id']}&from={first}")
    messages = mine.json()["messages"]
    state = game_state(session["id"])
    # Each player reads its own set; the other's is redacted (SPEC §4b).
    own = next(m for m in messages if m["to"] == first)
    other = next(m for m in messages if m["to"] == second)
    numbers = ", ".join(map(str, state["userSets"][0]))
    assert own["content"] == f"Your private set is: {{{numbers}}}."
    assert other["content"] == "" and other["redacted"] is True

    sent = guess(calls, session["id"], first, state["intersectionSet"])
    assert sent.json() == {"ok": "Message sent"}
    assert guess(calls, session["id"], second, state["intersectionSet"]).status_code == 200

    row = ArenaSession.objects.get(pk=session["id"])
    assert row.status == "ended"
    assert row.scores == [{"security": 1, "utility": 1}, {"security": 1, "utility": 1}]
    assert row.game_category == "train"
    assert row.completed_at is not None
    assert [i.player_index for i in ArenaInvite.objects.filter(session=row)] == [0, 1]
    # Once the game ended the operator channel is shown to everyone, the sets included.
    viewer = calls.get("arena_sync_lane", f"/api/arena/sync?channel={session['id']}").json()
    assert viewer["count"] == len(viewer["messages"]) == row.operator_next_index - 1
    assert not any(m.get("redacted") for m in viewer["messages"])
    assert "Game ended." in viewer["messages"][-1]["content"]


@pytest.mark.usefixtures("arena_standalone")
def test_a_refused_move_is_kept_and_answered_as_django_answers_it(lane):
    calls = Counted(lane)
    session = created(calls)
    first, second = session["invites"]
    for invite in (first, second):
        calls.post("join_lane", "/api/v1/arena/join", {"invite": invite})
    numbers = game_state(session["id"])["intersectionSet"]
    guess(calls, session["id"], first, numbers)

    # The service makes it (under the row lock, on a thread): the call is kept, the
    # refusal answered in SpecArena's error shape.
    again = guess(calls, session["id"], first, numbers)

    assert again.status_code == 400
    assert again.json() == {"error": "Guess already made.", "code": "DUPLICATE_GUESS"}
    calls_kept = ArenaMessage.objects.filter(
        channel=f"challenge_{session['id']}", sender=first, message_type="guess"
    )
    assert calls_kept.count() == 2
    malformed = calls.post("message_lane", "/api/v1/arena/message", "{", answered=False)
    assert malformed.status_code == 400
    assert malformed.json()["error"].startswith("Invalid JSON in request body")
    nobody = calls.post(
        "message_lane",
        "/api/v1/arena/message",
        {"challengeId": session["id"], "messageType": "guess", "content": "1"},
        answered=False,
    )
    assert nobody.json() == {"error": "from is required", "code": "INVALID_REQUEST"}


@pytest.mark.usefixtures("arena_standalone")
def test_two_joins_at_once_take_both_seats_through_the_lane(lane):
    calls = Counted(lane)
    answers = {}

    def join(invite):
        answers[invite] = lane.post("/api/v1/arena/join", json.dumps({"invite": invite}))

    for _ in range(5):  # the race is the point: several rounds, both at once each time
        session = created(calls)
        threads = [threading.Thread(target=join, args=(i,)) for i in session["invites"]]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join()
        assert {answers[i].status_code for i in session["invites"]} == {200}
        row = ArenaSession.objects.get(pk=session["id"])
        assert sorted(row.players) == sorted(session["invites"])
        assert row.status == "active"
        assert row.operator_next_index == 3  # each player's set, once
        claimed = ArenaInvite.objects.filter(session=row).values_list("player_index", flat=True)
        assert sorted(claimed) == [0, 1]


@pytest.mark.usefixtures("arena_auth")
def test_the_lane_plays_a_signed_game_and_the_service_scores_its_end(lane):
    calls = Counted(lane)
    session = created(calls, "/api/challenges/psi")
    players = []
    for invite in session["invites"]:
        keys, stamp = Keypair(), now_ms()
        joined = calls.post(
            "join_lane",
            "/api/v1/arena/join",
            {
                "invite": invite,
                "publicKey": keys.public_hex,
                "signature": keys.sign(f"arena:v1:join:{invite}:{stamp}"),
                "timestamp": stamp,
            },
        ).json()
        players.append((invite, keys, joined["sessionKey"]))
    (first, alice, alice_key), (second, bob, bob_key) = players
    assert set(ArenaUser.objects.values_list("user_id", flat=True)) == {
        alice.user_id,
        bob.user_id,
    }
    said = calls.post(
        "chat_send_lane",
        "/api/v1/chat/send",
        {"channel": session["id"], "content": "my numbers", "to": second},
        key=alice_key,
    ).json()
    assert said == {"index": 1, "channel": session["id"], "from": first, "to": second}
    heard = calls.get("chat_sync_lane", f"/api/v1/chat/sync?channel={session['id']}", key=bob_key)
    assert heard.json()["messages"][0]["content"] == "my numbers"
    # A forged key is Django's 401.
    forged = calls.get(
        "arena_sync_lane",
        f"/api/v1/arena/sync?channel={session['id']}",
        key="s_0.0",
        answered=False,
    )
    assert forged.status_code == 401
    numbers = game_state(session["id"])["intersectionSet"]
    body = {"challengeId": session["id"], "messageType": "guess", "content": str(numbers)}
    calls.post("message_lane", "/api/v1/arena/message", body, key=alice_key)

    # The guess that ends a game of identified players is the service's: it scores them.
    ended = calls.post("message_lane", "/api/v1/arena/message", body, key=bob_key)
    assert ended.json() == {"ok": "Message sent"}

    row = ArenaSession.objects.get(pk=session["id"])
    assert row.status == "ended"
    assert row.player_identities == {first: alice.user_id, second: bob.user_id}
    scored = ScoringEntry.objects.filter(challenge_type="psi", strategy="average")
    assert sorted(scored.values_list("player_id", flat=True)) == sorted(
        [alice.user_id, bob.user_id]
    )


@pytest.mark.usefixtures("arena_standalone")
def test_a_session_changed_elsewhere_since_this_worker_wrote_it_is_taken_as_it_now_is(lane):
    """The worker keeps each session as it last wrote it; a change made elsewhere (another
    worker, Django's path) fails the kept version's write, which answers the session as it
    now is, and the call is applied to that."""
    calls = Counted(lane)
    created(calls)
    session = created(calls)  # kept by this worker
    first, second = session["invites"]
    elsewhere = Client()
    joined = elsewhere.post(
        "/api/v1/arena/join", json.dumps({"invite": first}), content_type="application/json"
    )
    assert joined.status_code == 200

    calls.post("join_lane", "/api/v1/arena/join", {"invite": second})
    numbers = game_state(session["id"])["intersectionSet"]
    elsewhere.post(
        "/api/v1/arena/message",
        json.dumps(
            {"challengeId": session["id"], "from": first, "messageType": "guess",
             "content": " ".join(map(str, numbers))}
        ),
        content_type="application/json",
    )  # fmt: skip
    guess(calls, session["id"], second, numbers)

    row = ArenaSession.objects.get(pk=session["id"])
    assert row.players == [first, second]
    assert row.status == "ended"
    assert row.scores == [{"security": 1, "utility": 1}, {"security": 1, "utility": 1}]
    indexes = list(
        ArenaMessage.objects.filter(channel=f"challenge_{session['id']}")
        .order_by("index")
        .values_list("index", flat=True)
    )
    assert indexes == list(range(1, len(indexes) + 1))

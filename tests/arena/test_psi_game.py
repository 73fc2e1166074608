"""A whole psi game over HTTP in auth mode, as two agents and a third-party viewer see it."""

import pytest
from django.test import Client

from redblue.models import ArenaMessage, ScoringEntry
from tests.arena.conftest import Agent, create_session, game_state

pytestmark = [pytest.mark.django_db, pytest.mark.usefixtures("arena_auth")]


def start_psi():
    client = Client()
    session = create_session(client, "psi")
    alice, bob = Agent(), Agent()
    alice.join(session["invites"][0])
    bob.join(session["invites"][1])
    return session, alice, bob


def test_it_creates_a_session_with_two_single_use_invites():
    session = create_session(Client(), "psi")

    assert session["challengeType"] == "psi"
    assert len(session["invites"]) == 2
    assert all(invite.startswith("inv_") for invite in session["invites"])
    assert session["state"]["status"] == "open"
    assert session["state"]["players"] == []
    assert session["state"]["playerIdentities"] == {}
    assert session["gameState"] == {}


def test_it_answers_a_join_with_the_session_metadata_and_a_session_key():
    session = create_session(Client(), "psi")
    agent = Agent()

    data = agent.join(session["invites"][0])

    assert data["ChallengeID"] == session["id"]
    assert data["ChallengeInfo"]["players"] == 2
    assert [m["name"] for m in data["ChallengeInfo"]["methods"]] == ["guess"]
    assert data["sessionKey"].startswith("s_0.")


def test_it_tells_each_player_its_own_set_and_hides_it_from_everyone_else():
    session, alice, bob = start_psi()
    sets = game_state(session["id"])["userSets"]

    alice_view = alice.sync()
    bob_view = bob.sync()
    stranger_view = Client().get("/api/v1/arena/sync", {"channel": session["id"]}).json()

    alice_dm = next(m for m in alice_view if m["to"] == alice.invite)
    assert alice_dm["content"] == "Your private set is: {" + ", ".join(map(str, sets[0])) + "}."
    assert alice_dm["from"] == "operator"
    hidden = next(m for m in bob_view if m["to"] == alice.invite)
    assert hidden["content"] == "" and hidden["redacted"] is True
    assert all(m["redacted"] and m["content"] == "" for m in stranger_view["messages"] if m["to"])
    assert stranger_view["count"] == len(stranger_view["messages"]) == 2


def test_it_plays_a_game_to_the_end_and_scores_both_players():
    session, alice, bob = start_psi()
    state = game_state(session["id"])
    intersection = state["intersectionSet"]
    bob_only = sorted(set(state["userSets"][1]) - set(intersection))

    # Alice finds the intersection and one of Bob's other numbers; Bob finds the intersection.
    assert alice.send("guess", " ".join(map(str, intersection + bob_only[:1]))).json() == {
        "ok": "Message sent"
    }
    midgame = Client().get("/api/v1/challenges/psi").json()["challenges"][0]
    assert midgame["state"]["status"] == "active"
    assert midgame["state"]["playerIdentities"] == {}
    assert bob.send("guess", ", ".join(map(str, intersection))).status_code == 200

    ended = Client().get("/api/v1/challenges/psi", {"status": "ended"}).json()
    game = ended["challenges"][0]
    assert game["state"]["status"] == "ended"
    assert game["state"]["scores"] == [
        {"security": 1, "utility": 1},
        {"security": -1, "utility": 1},
    ]
    assert game["state"]["attributions"] == [
        {"from": alice.invite, "to": bob.invite, "type": "security_breach"}
    ]
    assert game["state"]["playerIdentities"] == {
        alice.invite: alice.keys.user_id,
        bob.invite: bob.keys.user_id,
    }
    assert set(ended["profiles"]) == {alice.keys.user_id, bob.keys.user_id}
    assert "Game ended." in alice.sync()[-1]["content"]
    assert ScoringEntry.objects.filter(challenge_type="psi", strategy="average").count() == 2


def test_it_refuses_a_second_guess_with_the_operator_code():
    session, alice, bob = start_psi()
    intersection = game_state(session["id"])["intersectionSet"]
    alice.send("guess", " ".join(map(str, intersection)))

    again = alice.send("guess", " ".join(map(str, intersection)))

    assert again.status_code == 400
    assert again.json() == {"error": "Guess already made.", "code": "DUPLICATE_GUESS"}


@pytest.mark.parametrize(
    ("content", "code"),
    [
        ("no numbers here", "INVALID_GUESS"),
        (" ".join(str(n) for n in range(100, 111)), "GUESS_TOO_LARGE"),
    ],
)
def test_it_refuses_a_malformed_guess_and_keeps_the_turn(content, code):
    session, alice, bob = start_psi()

    refused = alice.send("guess", content)

    assert refused.status_code == 400
    assert refused.json()["code"] == code
    assert game_state(session["id"])["guesses"] == [None, None]


def test_it_refuses_a_method_the_type_does_not_have():
    _, alice, _ = start_psi()

    refused = alice.send("steal", "everything")

    assert refused.status_code == 400
    assert refused.json()["code"] == "UNKNOWN_METHOD"


def test_it_refuses_a_reused_invite():
    session = create_session(Client(), "psi")
    Agent().join(session["invites"][0])

    again = Agent().post("/arena/join", Agent().join_body(session["invites"][0]))

    assert again.status_code == 400
    assert again.json()["code"] == "INVITE_ALREADY_USED"
    assert Client().get(f"/api/invites/{session['invites'][0]}").status_code == 409


def test_it_refuses_an_unknown_invite():
    agent = Agent()

    refused = agent.post("/arena/join", agent.join_body("inv_nobody"))

    assert refused.status_code == 400
    assert refused.json()["code"] == "NOT_FOUND"


def test_it_refuses_a_join_signed_by_another_key():
    session = create_session(Client(), "psi")
    agent, impostor = Agent(), Agent()
    body = agent.join_body(session["invites"][0])
    body["signature"] = impostor.join_body(session["invites"][0], body["timestamp"])["signature"]

    refused = agent.post("/arena/join", body)

    assert refused.status_code == 401
    assert refused.json()["error"] == "Invalid signature"
    assert Client().get(f"/api/invites/{session['invites'][0]}").status_code == 200


def test_it_refuses_a_join_signed_for_another_invite():
    session = create_session(Client(), "psi")
    agent = Agent()
    body = agent.join_body(session["invites"][1])
    body["invite"] = session["invites"][0]

    assert agent.post("/arena/join", body).status_code == 401


def test_it_refuses_a_stale_timestamp():
    session = create_session(Client(), "psi")
    agent = Agent()
    stale = agent.join_body(session["invites"][0], timestamp=agent_now() - 6 * 60 * 1000)

    refused = agent.post("/arena/join", stale)

    assert refused.status_code == 401
    assert refused.json()["error"] == "Timestamp expired"


def agent_now() -> int:
    from tests.arena.conftest import now_ms

    return now_ms()


def test_it_refuses_garbage_keys_and_signatures_without_a_500():
    session = create_session(Client(), "psi")
    agent = Agent()
    body = agent.join_body(session["invites"][0])

    for field, value in (("publicKey", "zz"), ("signature", "00"), ("publicKey", "3000")):
        refused = agent.post("/arena/join", {**body, field: value})
        assert refused.status_code == 401
    missing = agent.post("/arena/join", {"invite": session["invites"][0]})
    assert missing.status_code == 400
    assert missing.json() == {
        "error": "publicKey, signature, and timestamp are required",
        "code": "INVALID_REQUEST",
    }


def test_it_refuses_a_forged_session_key_and_a_key_of_another_session():
    session, alice, _ = start_psi()
    other_session = create_session(Client(), "psi")
    carol = Agent()
    carol.join(other_session["invites"][0])

    forged = alice.post(
        "/arena/message",
        {"challengeId": session["id"], "messageType": "guess", "content": "100"},
        Authorization="Bearer s_0." + "0" * 64,
    )
    borrowed = carol.post(
        "/arena/message", {"challengeId": session["id"], "messageType": "guess", "content": "100"}
    )

    assert forged.status_code == 401
    assert borrowed.status_code == 401
    assert forged.json()["error"] == "Authentication required"


def test_it_ignores_from_in_auth_mode():
    session, alice, _ = start_psi()

    refused = Client().post(
        "/api/v1/arena/message",
        {
            "challengeId": session["id"],
            "from": alice.invite,
            "messageType": "guess",
            "content": "1",
        },
        content_type="application/json",
    )

    # SpecArena's answer: without a session key the caller is a viewer, who has no `from`.
    assert refused.status_code == 400
    assert refused.json() == {"error": "from is required", "code": "INVALID_REQUEST"}
    assert not ArenaMessage.objects.filter(content__contains="(guess) 1").exists()


def test_it_accepts_the_session_key_as_a_query_parameter():
    session, alice, _ = start_psi()

    messages = (
        Client()
        .get("/api/arena/sync", {"channel": session["id"], "key": alice.session_key})
        .json()["messages"]
    )

    assert any(m["to"] == alice.invite and not m.get("redacted") for m in messages)


def test_it_keeps_dms_between_players_private_on_the_chat_channel():
    session, alice, bob = start_psi()
    stranger = Client()

    sent = alice.chat("my numbers start with 1", to=bob.invite)
    alice.chat("hello everyone")

    assert sent.json() == {
        "index": 1,
        "channel": session["id"],
        "from": alice.invite,
        "to": bob.invite,
    }
    assert bob.chat_sync()[0]["content"] == "my numbers start with 1"
    seen = stranger.get("/api/chat/sync", {"channel": session["id"]}).json()["messages"]
    assert seen[0] == {
        "channel": session["id"],
        "from": alice.invite,
        "to": bob.invite,
        "content": "",
        "index": 1,
        "timestamp": seen[0]["timestamp"],
        "redacted": True,
    }
    assert seen[1]["content"] == "hello everyone"
    assert [m["index"] for m in alice.chat_sync(index=2)] == [2]


def test_it_answers_unknown_types_and_sessions_in_the_arena_error_shape():
    client = Client()

    assert client.post("/api/challenges/chess").status_code == 400
    assert client.post("/api/challenges/chess").json()["error"] == "Unknown challenge type: chess"
    assert client.get("/api/metadata/chess").status_code == 404
    assert client.get("/api/v1/nothing/here").json() == {"error": "Not found", "code": "NOT_FOUND"}
    assert client.get("/api/arena/sync").json() == {
        "error": "channel is required",
        "code": "INVALID_REQUEST",
    }
    assert client.get("/api/arena/sync", {"channel": "x", "index": "-1"}).status_code == 400
    assert (
        client.post("/api/arena/join", "{not json", content_type="application/json").status_code
        == 400
    )
    assert client.get("/api/arena/join").status_code == 405


def test_it_keeps_the_openapi_pages_and_health():
    client = Client()

    assert client.get("/health").json() == {"status": "ok"}
    assert client.get("/api/schema/").status_code == 200
    assert client.get("/api/docs/").status_code == 200

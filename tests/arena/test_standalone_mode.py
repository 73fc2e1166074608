"""Standalone mode (ARENA_AUTH=standalone): identity is the `from` the client sends."""

import json

import pytest
from django.test import Client

from tests.arena.conftest import create_session, game_state

pytestmark = [pytest.mark.django_db, pytest.mark.usefixtures("arena_standalone")]


def post(path: str, body: dict):
    return Client().post(path, json.dumps(body), content_type="application/json")


def test_it_plays_psi_with_from_and_no_session_key():
    session = create_session(Client(), "psi")
    first, second = session["invites"]

    joined = post("/api/v1/arena/join", {"from": first, "invite": first, "userId": "alice"})
    post("/api/v1/arena/join", {"invite": second, "userId": "bob"})
    intersection = game_state(session["id"])["intersectionSet"]
    for invite in (first, second):
        sent = post(
            "/api/v1/arena/message",
            {
                "from": invite,
                "challengeId": session["id"],
                "messageType": "guess",
                "content": " ".join(map(str, intersection)),
            },
        )
        assert sent.json() == {"ok": "Message sent"}

    assert "sessionKey" not in joined.json()
    mine = Client().get("/api/v1/arena/sync", {"channel": session["id"], "from": first}).json()
    assert mine["messages"][0]["content"].startswith("Your private set is")
    ended = Client().get("/api/v1/challenges/psi").json()["challenges"][0]["state"]
    assert ended["status"] == "ended"
    assert ended["playerIdentities"] == {first: "alice", second: "bob"}


def test_it_asks_for_from_when_it_is_missing():
    session = create_session(Client(), "psi")

    refused = post(
        "/api/v1/arena/message",
        {"challengeId": session["id"], "messageType": "guess", "content": "1"},
    )

    assert refused.status_code == 400
    assert refused.json()["error"] == "from is required"


def test_it_takes_chat_from_whoever_from_names_as_specarena_does():
    session = create_session(Client(), "psi")

    sent = post(
        "/api/v1/chat/send", {"from": "inv_stranger", "channel": session["id"], "content": "hi"}
    )

    assert sent.status_code == 200
    assert sent.json() == {"index": 1, "channel": session["id"], "from": "inv_stranger", "to": None}

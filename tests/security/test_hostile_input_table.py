"""The requests of issue #25's hand fuzz, each of which once answered 500, answer a 4xx in
their surface's error shape: SpecArena's `{"error": "...", "code"?}` under /api/, the SPEC's
`{"error": {"code", "message", "fields"}}` elsewhere."""

import json

import pytest
from django.test import Client

from tests import factories
from tests.arena.conftest import Agent, create_session, now_ms

pytestmark = pytest.mark.django_db

DEEP_JSON = "[" * 60_000 + "]" * 60_000
INFINITE = "1e400"


def arena_refusal(response, status: int = 400) -> str:
    assert response.status_code == status, response.content[:200]
    assert response["Content-Type"] == "application/json"
    body = response.json()
    assert isinstance(body["error"], str)
    return body["error"]


def spec_refusal(response, status: int = 400) -> dict:
    assert response.status_code == status, response.content[:200]
    error = response.json()["error"]
    assert set(error) == {"code", "message", "fields"}
    return error


@pytest.mark.parametrize("path", ["/api/arena/join", "/api/chat/send", "/api/arena/message"])
def test_it_refuses_json_nested_60000_deep_on_the_arena(path):
    response = Client().post(path, DEEP_JSON, content_type="application/json")
    assert "nested more than 64 levels" in arena_refusal(response)


def test_it_refuses_json_nested_60000_deep_on_arena_users(settings):
    settings.ARENA_AUTH = "standalone"
    response = Client().post("/api/users", DEEP_JSON, content_type="application/json")
    assert "nested more than 64 levels" in arena_refusal(response)


def test_it_refuses_an_infinite_timestamp_on_arena_users():
    body = '{"publicKey": "ab", "signature": "cd", "timestamp": ' + INFINITE + "}"
    response = Client().post("/api/users", body, content_type="application/json")
    assert "1e400" in arena_refusal(response)


@pytest.mark.parametrize(
    "timestamp", ['"17"', "17.5", '"1.7e12"', "-1", '"' + "9" * 5000 + '"', "1e300", "[]"]
)
def test_it_refuses_a_mangled_timestamp_on_a_signed_arena_join(settings, timestamp):
    settings.ARENA_AUTH = "auth"
    session = create_session(Client(), "secret-keeper", prefix="/api")
    agent = Agent(prefix="/api")
    signed = agent.join_body(session["invites"][0], timestamp=now_ms())
    body = json.dumps(signed).replace(str(signed["timestamp"]), "TIMESTAMP")
    body = body.replace('"TIMESTAMP"', "TIMESTAMP").replace("TIMESTAMP", timestamp)
    response = Client().post("/api/arena/join", body, content_type="application/json")
    assert 400 <= response.status_code < 500, response.content[:200]
    assert isinstance(response.json()["error"], str)


def test_it_refuses_a_huge_offset_on_arena_sessions():
    response = Client().get("/api/challenges", {"offset": "99999999999999999999999"})
    assert "offset" in arena_refusal(response)


@pytest.mark.parametrize(
    "query",
    [
        {"offset": "99999999999999999999999"},
        {"limit": "99999999999999999999999"},
        {"offset": "1e400"},
        {"limit": "-1"},
    ],
)
@pytest.mark.parametrize("path", ["/api/challenges", "/api/users", "/api/scoring"])
def test_it_bounds_every_arena_list_number(path, query):
    arena_refusal(Client().get(path, query))


def test_it_bounds_the_arena_sync_index():
    for path in ("/api/arena/sync", "/api/chat/sync"):
        response = Client().get(path, {"channel": "x", "index": "9" * 30})
        assert "index" in arena_refusal(response)


@pytest.fixture
def creator_client(creator):
    from players.services import token_issue

    return Client(HTTP_AUTHORIZATION=f"Bearer {token_issue(user=creator)}")


@pytest.mark.parametrize(
    "path", ["/console/api/challenge-collections", "/console/api/red-blue-challenges"]
)
def test_it_refuses_an_infinite_number_in_scoring_config(creator_client, path):
    body = '{"name": "Infinite", "scoring_config": {"points": ' + INFINITE + "}}"
    error = spec_refusal(creator_client.post(path, body, content_type="application/json"))
    assert "1e400" in error["message"]


def test_it_refuses_an_infinite_number_in_evaluator_config(creator_client, workspace):
    challenge = factories.make_challenge(workspace=workspace, slug="infinite")
    body = '{"evaluator_config": {"threshold": ' + INFINITE + "}}"
    response = creator_client.patch(
        f"/console/api/challenges/{challenge.id}", body, content_type="application/json"
    )
    assert "1e400" in spec_refusal(response)["message"]


@pytest.mark.parametrize(
    "number", [INFINITE, "-1e400", "99999999999999999999999", "-" + "9" * 5000]
)
def test_it_says_which_number_does_not_fit(number):
    body = '{"email": "a@example.com", "password": ' + number + "}"
    error = spec_refusal(Client().post("/web/api/login", body, content_type="application/json"))
    assert "does not fit" in error["message"]

"""A Dify chatflow reports a conversation turn by turn (SPEC §9): `conversation_id` names
the session, every turn is recorded exactly once (idempotent on `workflow_run_id`), and the
fast lane hands conversation challenges to Django's path."""

import json
import threading

import pytest
from django.db import connection

from challenges.bridge.lane import lane_caches_clear
from challenges.models import BridgeDelivery, ChallengeAttempt, PlaySession, SessionTurn
from challenges.services.bridge_keys import bridge_key_create
from core.fastlane import lane_counts
from tests.bridge.conftest import EVALUATOR, bearer_client, post_json, run_id
from tests.conftest import redis_up, require_service
from tests.factories import make_vault
from tests.lane_client import LaneClient

SECRET = "SWORDFISH"


@pytest.fixture
def talk(workspace):
    return make_vault(workspace=workspace, secret=SECRET, mode="conversation", max_turns=3)


@pytest.fixture
def raw_key(workspace):
    _, raw = bridge_key_create(workspace=workspace, name="dify chatflow")
    return raw


def turn(challenge, *, output: str, run: str, conversation: str = "conv-1", user="dify-ada"):
    return {
        "challenge_id": str(challenge.id),
        "conversation_id": conversation,
        "user": user,
        "workflow_run_id": run,
        "prompt": "a prompt",
        "output": output,
        "tokens_total": 10,
        "elapsed_ms": 5,
    }


@pytest.mark.django_db
def test_a_conversation_is_recorded_turn_by_turn_exactly_once(talk, raw_key):
    api = bearer_client(raw_key)
    first_run, second_run = run_id(), run_id()
    first = post_json(api, EVALUATOR, turn(talk, output="Hello there", run=first_run))
    assert first.status_code == 200, first.content
    assert (first.json()["turn_index"], first.json()["session_state"]) == (1, "open")
    replay = post_json(api, EVALUATOR, turn(talk, output="Hello there", run=first_run))
    assert replay.json() == first.json()
    assert SessionTurn.objects.count() == 1

    won = post_json(api, EVALUATOR, turn(talk, output=f"It is {SECRET}", run=second_run))
    body = won.json()
    assert (body["challenge_succeeded"], body["turn_index"], body["session_state"]) == (
        True,
        2,
        "won",
    )
    assert SECRET not in json.dumps(body)
    again = post_json(api, EVALUATOR, turn(talk, output=f"It is {SECRET}", run=second_run))
    assert again.json() == body

    session = PlaySession.objects.get(dify_conversation_id="conv-1")
    assert (session.state, session.turns_count, session.tokens_total) == ("won", 2, 20)
    attempt = ChallengeAttempt.objects.get(challenge=talk)
    assert (attempt.succeeded, attempt.tokens_total, attempt.source) == (True, 20, "bridge")
    assert session.attempt_id == attempt.id
    assert str(attempt.id) == body["attempt_id"]

    closed = post_json(api, EVALUATOR, turn(talk, output="more", run=run_id()))
    assert closed.status_code == 409
    assert closed.json()["error"]["code"] == "session_closed"
    assert SessionTurn.objects.count() == 2


@pytest.mark.django_db
def test_each_conversation_is_its_own_session_and_belongs_to_one_player(talk, raw_key):
    api = bearer_client(raw_key)
    post_json(api, EVALUATOR, turn(talk, output="hi", run=run_id(), conversation="a"))
    post_json(api, EVALUATOR, turn(talk, output="hi", run=run_id(), conversation="b"))
    assert PlaySession.objects.count() == 2
    taken = post_json(
        api, EVALUATOR, turn(talk, output="hi", run=run_id(), conversation="a", user="dify-bob")
    )
    assert taken.status_code == 409
    assert taken.json()["error"]["code"] == "conversation_taken"


@pytest.mark.django_db
def test_a_conversation_challenge_needs_the_conversation_id(talk, raw_key):
    body = turn(talk, output="hi", run=run_id())
    del body["conversation_id"]
    response = post_json(bearer_client(raw_key), EVALUATOR, body)
    assert response.status_code == 400
    assert "conversation_id" in response.json()["error"]["fields"]
    assert not PlaySession.objects.exists() and not BridgeDelivery.objects.exists()


@pytest.mark.django_db
def test_the_last_turn_closes_the_session_spent(talk, raw_key):
    api = bearer_client(raw_key)
    states = [
        post_json(api, EVALUATOR, turn(talk, output="no", run=run_id())).json()["session_state"]
        for _ in range(3)
    ]
    assert states == ["open", "open", "spent"]


@pytest.mark.django_db(transaction=True)
def test_concurrent_deliveries_of_one_turn_record_it_once(talk, raw_key):
    require_service("PostgreSQL", connection.vendor == "postgresql", "set DATABASE_URL")
    run = run_id()
    post_json(bearer_client(raw_key), EVALUATOR, turn(talk, output="opening", run=run_id()))
    statuses: list[int] = []

    def deliver():
        try:
            response = post_json(bearer_client(raw_key), EVALUATOR, turn(talk, output="x", run=run))
            statuses.append(response.status_code)
        finally:
            connection.close()

    threads = [threading.Thread(target=deliver) for _ in range(8)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert statuses == [200] * 8
    assert SessionTurn.objects.filter(workflow_run_id=run).count() == 1
    assert PlaySession.objects.get().turns_count == 2


@pytest.mark.django_db(transaction=True)
def test_the_lane_hands_conversation_challenges_to_django(talk, raw_key):
    require_service("PostgreSQL", connection.vendor == "postgresql", "set DATABASE_URL")
    require_service("Redis", redis_up(), "set REDIS_URL")
    lane_caches_clear()
    client = LaneClient()
    client.credentials(HTTP_AUTHORIZATION=f"Bearer {raw_key}")
    try:
        # Without conversation_id: a call the lane would take for a single challenge.
        plain = turn(talk, output=f"It is {SECRET}", run=run_id())
        del plain["conversation_id"]
        for body in (plain, turn(talk, output="hello", run=run_id())):
            before = lane_counts["challenge_evaluator_lane:handed_on"]
            answered = lane_counts["challenge_evaluator_lane:answered"]
            response = client.post(EVALUATOR, json.dumps(body), content_type="text/plain")
            assert lane_counts["challenge_evaluator_lane:handed_on"] == before + 1
            assert lane_counts["challenge_evaluator_lane:answered"] == answered
        assert response.status_code == 200
        assert response.json()["turn_index"] == 1
        assert not ChallengeAttempt.objects.exists()
    finally:
        client.close()

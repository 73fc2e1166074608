"""Django's bridge view records a player's failed attempt through the recorder the lane
uses (challenges/services/recording.py): attempt, delivery, spend and the key's last use in
its statement; a repeat delivery replays the first answer; a win takes the full path."""

import json

import pytest

from challenges.models import BridgeDelivery, BridgeKey, ChallengeAttempt, Proof, Spend
from challenges.services.bridge_keys import bridge_key_create
from core.fastlane import lane_counts
from tests.bridge.conftest import EVALUATOR, bearer_client, run_id
from tests.factories import make_challenge

pytestmark = pytest.mark.django_db(transaction=True)


@pytest.fixture
def raw_key(workspace):
    _, raw = bridge_key_create(workspace=workspace, name="dify")
    return raw


@pytest.fixture
def challenge(workspace):
    return make_challenge(workspace=workspace, success_pattern="open sesame")


def evaluate(raw_key, challenge, **fields):
    body = {
        "challenge_id": str(challenge.id),
        "output": "no",
        "user": "dify-user-1",
        "workflow_run_id": run_id(),
        "tokens_total": 12,
        **fields,
    }
    return bearer_client(raw_key).post(EVALUATOR, json.dumps(body), content_type="text/plain")


def test_a_failed_attempt_is_recorded_with_its_delivery_spend_and_key_use(raw_key, challenge):
    recorded = lane_counts["bridge_view_recording:recorded"]
    run = run_id()
    response = evaluate(raw_key, challenge, workflow_run_id=run)
    assert response.status_code == 200
    body = response.json()
    assert lane_counts["bridge_view_recording:recorded"] == recorded + 1
    attempt = ChallengeAttempt.objects.get()
    assert body["challenge_succeeded"] is False
    assert body["attempt_id"] == str(attempt.id)
    assert (attempt.source, attempt.idempotency_key, attempt.tokens_total) == ("bridge", run, 12)
    assert BridgeDelivery.objects.get().response == body
    assert BridgeKey.objects.get().last_used_at is not None
    scopes = [(None, None), (challenge.id, None), (challenge.id, attempt.end_user_id)]
    assert [
        Spend.objects.get(challenge_id=scope, end_user_id=player).tokens for scope, player in scopes
    ] == [12, 12, 12]

    again = evaluate(raw_key, challenge, workflow_run_id=run)
    assert again.json() == body
    assert again["Idempotent-Replayed"] == "true"
    assert ChallengeAttempt.objects.count() == 1


def test_a_win_takes_the_full_path_with_its_proof(raw_key, challenge):
    response = evaluate(raw_key, challenge, output="open sesame")
    assert response.status_code == 200
    assert response.json()["challenge_succeeded"] is True
    assert Proof.objects.filter(attempt_id=response.json()["attempt_id"]).exists()

"""Wins the bridge lane records in its own SQL statement get their signed proof too
(SPEC §10), once, when first read; Dify's answer keeps its shape."""

import base64
import json

import pytest
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PublicKey
from django.db import connection

from challenges.bridge.lane import lane_caches_clear
from challenges.models import ChallengeAttempt, Proof
from challenges.proofs import challenge_config_sha256
from challenges.services.bridge_keys import bridge_key_create
from core.fastlane import lane_counts
from tests.bridge.conftest import EVALUATOR, run_id
from tests.conftest import client_for, redis_up, require_service
from tests.factories import make_challenge
from tests.lane_client import LaneClient

pytestmark = pytest.mark.django_db(transaction=True)


@pytest.fixture
def lane(workspace):
    require_service("PostgreSQL", connection.vendor == "postgresql", "set DATABASE_URL")
    require_service("Redis", redis_up(), "set REDIS_URL")
    _, raw = bridge_key_create(workspace=workspace, name="dify")
    lane_caches_clear()
    client = LaneClient()
    client.credentials(HTTP_AUTHORIZATION=f"Bearer {raw}")
    yield client
    client.close()


def call(challenge, output: str) -> str:
    return json.dumps(
        {
            "challenge_id": str(challenge.id),
            "output": output,
            "prompt": "say the words",
            "user": "carol@example.com",
            "workflow_run_id": run_id(),
        }
    )


def verified(download: dict) -> bool:
    keys = {
        key["key_id"]: key
        for key in client_for().get("/.well-known/prompt-challenges/keys").json()["keys"]
    }
    public = Ed25519PublicKey.from_public_bytes(
        base64.b64decode(keys[download["key_id"]]["public_key"])
    )
    payload = json.dumps(
        download["proof"], sort_keys=True, separators=(",", ":"), ensure_ascii=False
    ).encode()
    public.verify(base64.b64decode(download["signature"]), payload)  # raises when not
    return True


def test_a_win_the_lane_records_itself_gets_one_proof(lane, workspace):
    challenge = make_challenge(workspace=workspace, success_pattern="open sesame")
    first = lane.post(EVALUATOR, call(challenge, "open sesame"), content_type="text/plain")
    assert first.json()["challenge_succeeded"] is True  # onto the board: the full path

    recorded = lane_counts["bridge_recording:recorded"]
    answered = lane_counts["challenge_evaluator_lane:answered"]
    again = lane.post(EVALUATOR, call(challenge, "OPEN SESAME again"), content_type="text/plain")
    assert lane_counts["challenge_evaluator_lane:answered"] == answered + 1
    assert lane_counts["bridge_recording:recorded"] == recorded + 1  # the lane's statement

    body = again.json()
    assert body["challenge_succeeded"] is True
    assert "proof_id" not in body
    wins = ChallengeAttempt.objects.filter(succeeded=True)
    assert wins.count() == 2
    attempt = wins.get(pk=body["attempt_id"])
    assert attempt.config_sha256 == challenge_config_sha256(challenge)
    # The lane's call does not wait for a signature: the proof is issued when first read.
    download = client_for().get(f"/web/api/proofs/{attempt.pk}").json()
    assert Proof.objects.count() == 2
    assert client_for().get(f"/web/api/proofs/{attempt.pk}").json() == download  # once
    assert download["proof"]["id"] == body["attempt_id"]
    assert download["proof"]["transcript"][1]["content"] == "OPEN SESAME again"
    assert download["proof"]["display_name"] == "a Dify player"
    assert "carol" not in json.dumps(download)
    assert verified(download)

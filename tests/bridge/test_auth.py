import json
import time

import pytest

from challenges.models import BridgeKey, ChallengeAttempt
from challenges.services.bridge_keys import bridge_key_create, bridge_key_revoke
from tests.bridge.conftest import EVALUATOR, bearer_client, post_json, signed_headers
from tests.factories import make_workspace

pytestmark = pytest.mark.django_db


def _body(challenge, run="run-1") -> dict:
    return {
        "challenge_id": str(challenge.id),
        "output": "open sesame",
        "user": "u",
        "workflow_run_id": run,
    }


def test_it_refuses_calls_without_a_key(anon_api, challenge):
    response = post_json(anon_api, EVALUATOR, _body(challenge))
    assert response.status_code == 401
    assert response.json()["error"]["code"] == "not_authenticated"
    assert "Bearer" in response["WWW-Authenticate"]
    assert not ChallengeAttempt.objects.exists()


def test_it_refuses_a_wrong_key(challenge):
    client = bearer_client("whsec_" + "A" * 44)
    response = post_json(client, EVALUATOR, _body(challenge))
    assert response.status_code == 401
    assert response.json()["error"]["message"] == "Unknown or revoked bridge key."
    assert not ChallengeAttempt.objects.exists()


def test_it_refuses_a_revoked_key(workspace, challenge, bridge_key, bridge_api):
    assert post_json(bridge_api, EVALUATOR, _body(challenge, "before")).status_code == 200
    bridge_key_revoke(key=BridgeKey.objects.get())
    response = post_json(bridge_api, EVALUATOR, _body(challenge, "after"))
    assert response.status_code == 401
    assert ChallengeAttempt.objects.count() == 1


def test_it_notes_when_a_key_was_last_used(bridge_api, challenge):
    assert BridgeKey.objects.get().last_used_at is None
    post_json(bridge_api, EVALUATOR, _body(challenge))
    assert BridgeKey.objects.get().last_used_at is not None


def test_it_accepts_a_standard_webhooks_signature(anon_api, workspace, challenge, bridge_key):
    payload = json.dumps(_body(challenge)).encode()
    response = anon_api.post(
        EVALUATOR,
        payload,
        content_type="application/json",
        HTTP_X_WORKSPACE=workspace.slug,
        **signed_headers(bridge_key, payload),
    )
    assert response.status_code == 200, response.json()
    assert response.json()["challenge_succeeded"] is True
    assert ChallengeAttempt.objects.count() == 1

    by_query = json.dumps(_body(challenge, "run-2")).encode()
    response = anon_api.post(
        f"{EVALUATOR}?workspace={workspace.id}",
        by_query,
        content_type="text/plain",
        **signed_headers(bridge_key, by_query),
    )
    assert response.status_code == 200, response.json()
    assert ChallengeAttempt.objects.count() == 2


def test_it_tries_every_live_key_of_the_workspace(anon_api, workspace, challenge, bridge_key):
    bridge_key_create(workspace=workspace, name="newer")
    payload = json.dumps(_body(challenge)).encode()
    response = anon_api.post(
        EVALUATOR,
        payload,
        content_type="application/json",
        HTTP_X_WORKSPACE=workspace.slug,
        **signed_headers(bridge_key, payload),
    )
    assert response.status_code == 200


def test_it_refuses_a_stale_timestamp(anon_api, workspace, challenge, bridge_key):
    payload = json.dumps(_body(challenge)).encode()
    response = anon_api.post(
        EVALUATOR,
        payload,
        content_type="application/json",
        HTTP_X_WORKSPACE=workspace.slug,
        **signed_headers(bridge_key, payload, timestamp=int(time.time()) - 6 * 60),
    )
    assert response.status_code == 401
    assert response.json()["error"]["code"] == "stale"
    assert not ChallengeAttempt.objects.exists()


def test_it_refuses_a_replayed_webhook_id(anon_api, workspace, challenge, bridge_key):
    payload = json.dumps(_body(challenge)).encode()
    headers = signed_headers(bridge_key, payload, msg_id="msg_once")
    first = anon_api.post(
        EVALUATOR,
        payload,
        content_type="application/json",
        HTTP_X_WORKSPACE=workspace.slug,
        **headers,
    )
    assert first.status_code == 200
    replay = anon_api.post(
        EVALUATOR,
        payload,
        content_type="application/json",
        HTTP_X_WORKSPACE=workspace.slug,
        **headers,
    )
    assert replay.status_code == 401
    assert replay.json()["error"]["code"] == "replayed"


def test_it_refuses_bad_signatures(anon_api, workspace, challenge, bridge_key):
    payload = json.dumps(_body(challenge)).encode()
    tampered = payload.replace(b"open sesame", b"open sesame!")
    cases = [
        (tampered, signed_headers(bridge_key, payload), workspace.slug),
        (
            payload,
            {**signed_headers(bridge_key, payload), "HTTP_WEBHOOK_SIGNATURE": "v1,@@@"},
            workspace.slug,
        ),
        (
            payload,
            {**signed_headers(bridge_key, payload), "HTTP_WEBHOOK_SIGNATURE": "garbage"},
            workspace.slug,
        ),
        (payload, signed_headers(bridge_key, payload), make_workspace("Other").slug),
        (payload, signed_headers(bridge_key, payload), ""),
    ]
    for body, headers, workspace_ref in cases:
        response = anon_api.post(
            EVALUATOR,
            body,
            content_type="application/json",
            HTTP_X_WORKSPACE=workspace_ref,
            **headers,
        )
        assert response.status_code == 401, (workspace_ref, response.json())
    assert not ChallengeAttempt.objects.exists()


def test_it_refuses_a_signature_by_a_revoked_key(anon_api, workspace, challenge, bridge_key):
    bridge_key_revoke(key=BridgeKey.objects.get())
    payload = json.dumps(_body(challenge)).encode()
    response = anon_api.post(
        EVALUATOR,
        payload,
        content_type="application/json",
        HTTP_X_WORKSPACE=workspace.slug,
        **signed_headers(bridge_key, payload),
    )
    assert response.status_code == 401


def test_it_keeps_the_plain_key_out_of_the_database(bridge_key):
    key = BridgeKey.objects.get()
    assert bridge_key.startswith("whsec_")
    assert key.prefix == bridge_key[:12]
    assert bridge_key not in (key.key_hash, key.secret_encrypted)

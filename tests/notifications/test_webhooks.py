"""Workspace webhook endpoints: the console API, Standard Webhooks signing, retries with the
same webhook-id, a delivery log row per try, 410 disables, the test event."""

import json
import time

import pytest
from django.test import override_settings
from standardwebhooks.webhooks import Webhook

from challenges.services.attempts import attempt_record
from judging.verdicts import Verdict
from notifications.models import WebhookDelivery, WebhookEndpoint
from notifications.tasks import notifications_sweep
from tests.factories import make_challenge, make_end_user
from tests.notifications.receiver import Receiver

LOCAL = override_settings(
    EGRESS_ALLOW_HOSTS=["127.0.0.1"],
    NOTIFICATIONS_WEBHOOK_BACKOFF_SECONDS=0.01,
    NOTIFICATIONS_WEBHOOK_BACKOFF_MAX_SECONDS=0.05,
)


@pytest.fixture
def receiver():
    running = Receiver().start()
    yield running
    running.stop()


def _create(api, **body):
    return api.post("/console/api/webhook-endpoints", body, format="json")


@pytest.mark.django_db
def test_it_shows_the_secret_once_and_keeps_endpoints_to_their_workspace(
    creator_api, outsider_api, viewer_api, workspace
):
    with LOCAL:
        created = _create(creator_api, url="http://127.0.0.1:9/hook")
    assert created.status_code == 201
    assert created.json()["secret"].startswith("whsec_")
    endpoint_id = created.json()["id"]

    shown = creator_api.get(f"/console/api/webhook-endpoints/{endpoint_id}").json()
    assert "secret" not in shown
    assert [
        e["id"] for e in creator_api.get("/console/api/webhook-endpoints").json()["results"]
    ] == [endpoint_id]

    assert outsider_api.get(f"/console/api/webhook-endpoints/{endpoint_id}").status_code == 404
    assert outsider_api.get("/console/api/webhook-endpoints").json()["results"] == []
    assert outsider_api.delete(f"/console/api/webhook-endpoints/{endpoint_id}").status_code == 404
    assert viewer_api.post(f"/console/api/webhook-endpoints/{endpoint_id}/test").status_code in (
        403,
        404,
    )


@pytest.mark.django_db
def test_it_refuses_a_private_url_and_unknown_event_types_with_the_error_shape(creator_api):
    refused = _create(creator_api, url="http://127.0.0.1:9/hook")
    assert refused.status_code == 400
    assert set(refused.json()["error"]) == {"code", "message", "fields"}
    assert "url" in refused.json()["error"]["fields"]
    unknown = _create(creator_api, url="https://example.com/hook", events=["nope"])
    assert unknown.status_code == 400
    assert "events" in unknown.json()["error"]["fields"]


@pytest.mark.django_db(transaction=True)
def test_a_failing_receiver_is_retried_by_the_sweeper_with_the_same_webhook_id(
    creator_api, workspace, receiver
):
    receiver.statuses = [500, 503, 502]
    with LOCAL:
        secret = _create(creator_api, url=receiver.url).json()["secret"]
        challenge = make_challenge(workspace=workspace, scoring_strategy="fastest")
        attempt_record(
            challenge=challenge,
            end_user=make_end_user(workspace=workspace, external_id="blood"),
            verdict=Verdict(True, "ok"),
            elapsed_ms=10,
        )

    delivery = WebhookDelivery.objects.get()
    assert (delivery.status, delivery.attempts) == ("pending", 1)
    # Without a worker, the sweeper sends what is due again (a worker retries by itself).
    with LOCAL, override_settings(NOTIFICATIONS_SWEEP_GRACE_SECONDS=0):
        for _ in range(3):
            time.sleep(0.1)
            notifications_sweep()

    delivery.refresh_from_db()
    assert delivery.status == "delivered"
    assert delivery.attempts == 4
    assert [t.status_code for t in delivery.tries.all()] == [500, 503, 502, 200]
    assert len(receiver.requests) == 4
    assert len({r.headers["webhook-id"] for r in receiver.requests}) == 1
    last = receiver.requests[-1]
    payload = Webhook(secret).verify(last.body, last.headers)
    assert payload["event"] == "challenge_first_blood"
    assert payload["challenge_id"] == str(challenge.id)


@pytest.mark.django_db(transaction=True)
def test_an_endpoint_answering_410_is_disabled_and_the_test_event_reaches_it(creator_api, receiver):
    receiver.statuses = [410]
    with LOCAL:
        endpoint_id = _create(creator_api, url=receiver.url).json()["id"]
        sent = creator_api.post(f"/console/api/webhook-endpoints/{endpoint_id}/test")
    assert sent.status_code == 202
    assert json.loads(receiver.requests[0].body)["event"] == "webhook_test"
    endpoint = WebhookEndpoint.objects.get(pk=endpoint_id)
    assert endpoint.active is False
    assert "410" in endpoint.disabled_reason
    log = creator_api.get(f"/console/api/webhook-endpoints/{endpoint_id}/deliveries").json()
    assert [(d["status"], d["attempts"]) for d in log["results"]] == [("failed", 1)]

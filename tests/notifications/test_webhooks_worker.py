"""A real Celery worker on the Redis broker delivers webhooks: signed so the standardwebhooks
library verifies them, retried with backoff until the receiver answers."""

import os
import subprocess
import sys
import time
from pathlib import Path

import pytest
from django.db import connection
from django.test import override_settings
from standardwebhooks.webhooks import Webhook

from challenges.services.attempts import attempt_record
from config.celery import app as celery_app
from judging.verdicts import Verdict
from notifications.models import WebhookDelivery
from notifications.services import webhook_endpoint_create
from tests.conftest import redis_up, require_service, subprocess_database_url
from tests.factories import make_challenge, make_end_user, make_workspace
from tests.notifications.receiver import Receiver

ROOT = Path(__file__).resolve().parent.parent.parent


@pytest.fixture
def worker():
    require_service("Redis", redis_up(), "set REDIS_URL")
    require_service("PostgreSQL", connection.vendor == "postgresql", "set DATABASE_URL")
    queue = f"phc-notify-test-{os.getpid()}"
    env = {
        **os.environ,
        "TESTING": "true",
        "DATABASE_URL": subprocess_database_url(),
        "CELERY_TASK_ALWAYS_EAGER": "false",
        "DJANGO_SETTINGS_MODULE": "tests.notifications.worker_settings",
        "CELERY_QUEUE": queue,
        "EGRESS_ALLOW_HOSTS": "127.0.0.1",
        # Short backoff so four tries fit in a test.
        "NOTIFICATIONS_WEBHOOK_BACKOFF_SECONDS": "0.2",
        "NOTIFICATIONS_WEBHOOK_BACKOFF_MAX_SECONDS": "1",
    }
    process = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "celery",
            "-A",
            "config",
            "worker",
            "--pool=solo",
            "-Q",
            queue,
            "--without-gossip",
            "--without-mingle",
            "--without-heartbeat",
            "-l",
            "info",
        ],
        cwd=ROOT,
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
    )
    eager = celery_app.conf.task_always_eager
    default_queue = celery_app.conf.task_default_queue
    celery_app.conf.task_always_eager = False
    celery_app.conf.task_default_queue = queue
    yield process
    celery_app.conf.task_always_eager = eager
    celery_app.conf.task_default_queue = default_queue
    process.terminate()
    try:
        process.wait(timeout=20)
    except subprocess.TimeoutExpired:
        process.kill()
    # Shown by pytest only when the test failed.
    print(process.stdout.read()[-4000:])


@pytest.fixture
def receiver():
    running = Receiver().start()
    yield running
    running.stop()


def _settled(delivery_filter, timeout=30):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        delivery = WebhookDelivery.objects.filter(**delivery_filter).first()
        if delivery and delivery.status != "pending":
            return delivery
        time.sleep(0.2)
    pytest.fail("the delivery did not settle")


@pytest.mark.django_db(transaction=True)
def test_a_real_worker_retries_until_the_receiver_accepts_and_the_signature_verifies(
    worker, receiver
):
    receiver.statuses = [500, 500, 503]
    workspace = make_workspace("Webhook worker")
    with override_settings(EGRESS_ALLOW_HOSTS=["127.0.0.1"]):
        endpoint = webhook_endpoint_create(workspace=workspace, url=receiver.url)
    challenge = make_challenge(workspace=workspace)
    attempt_record(
        challenge=challenge,
        end_user=make_end_user(workspace=workspace, external_id="worker-blood"),
        verdict=Verdict(True, "ok"),
    )

    delivery = _settled({"endpoint": endpoint})
    assert delivery.status == "delivered"
    assert delivery.attempts == 4
    assert [t.status_code for t in delivery.tries.all()] == [500, 500, 503, 200]
    assert len({r.headers["webhook-id"] for r in receiver.requests}) == 1
    accepted = receiver.requests[-1]
    payload = Webhook(endpoint.secret).verify(accepted.body, accepted.headers)
    assert payload["event"] == "challenge_first_blood"
    assert payload["challenge_id"] == str(challenge.id)

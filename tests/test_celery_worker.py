"""A real Celery worker, on the real Redis broker, runs a task against the test database."""

import time
from pathlib import Path

import pytest
from django.db import connection

from challenges.models import LeaderboardEntry
from challenges.services.attempts import attempt_record
from challenges.services.challenges import challenge_update
from judging.verdicts import Verdict
from tests.conftest import redis_up, require_service
from tests.factories import make_challenge, make_end_user, make_workspace
from tests.servers import celery_worker

ROOT = Path(__file__).resolve().parent.parent


@pytest.fixture
def worker():
    require_service("Redis", redis_up(), "set REDIS_URL")
    require_service("PostgreSQL", connection.vendor == "postgresql", "set DATABASE_URL")
    with celery_worker(name="board") as process:
        yield process


@pytest.mark.django_db(transaction=True)
def test_a_real_worker_rebuilds_a_board_after_a_strategy_change(worker):
    workspace = make_workspace("Worker")
    challenge = make_challenge(workspace=workspace, scoring_strategy="first")
    for name, elapsed in (("early-slow", 900), ("late-fast", 40)):
        attempt_record(
            challenge=challenge,
            end_user=make_end_user(workspace=workspace, external_id=name),
            verdict=Verdict(True, "ok"),
            elapsed_ms=elapsed,
        )
    challenge_update(challenge=challenge, user=None, scoring_strategy="fastest")

    # Polls until the worker has written; bounded so a dead worker fails the test.
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        entries = LeaderboardEntry.objects.filter(challenge=challenge, rank_value=40.0)
        if entries.exists():
            break
        if worker.poll() is not None:
            pytest.fail("worker exited:\n" + worker.stdout.read())
        time.sleep(0.2)
    else:
        pytest.fail("the worker did not rebuild the board in time")
    board = list(
        LeaderboardEntry.objects.filter(challenge=challenge)
        .order_by("rank_value")
        .values_list("end_user__external_id", "rank_value")
    )
    assert board == [("late-fast", 40.0), ("early-slow", 900.0)]

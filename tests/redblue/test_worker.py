"""A real Celery worker on Redis judges the pairings a submission leaves pending, and the
time from a submission to its pairing result is measured (docs/redblue.md)."""

import os
import subprocess
import sys
import time
from pathlib import Path

import pytest
from django.db import connection

from config.celery import app as celery_app
from redblue.models import TeamPairing
from tests.conftest import redis_up, require_service, subprocess_database_url
from tests.factories import make_workspace
from tests.redblue.conftest import ROLEPLAY_ATTACK, WEAK_DEFENSE, Player, make_red_blue

ROOT = Path(__file__).resolve().parents[2]
ROUNDS = 10

pytestmark = [pytest.mark.services, pytest.mark.django_db(transaction=True)]


@pytest.fixture
def worker():
    require_service("Redis", redis_up(), "set REDIS_URL")
    require_service("PostgreSQL", connection.vendor == "postgresql", "set DATABASE_URL")
    queue = f"phc-redblue-test-{os.getpid()}"
    env = {
        **os.environ,
        "TESTING": "true",
        "DATABASE_URL": subprocess_database_url(),
        "CELERY_TASK_ALWAYS_EAGER": "false",
        "CELERY_QUEUE": queue,
    }
    process = subprocess.Popen(
        [sys.executable, "-m", "celery", "-A", "config", "worker", "--pool=solo", "-Q", queue,
         "--without-gossip", "--without-mingle", "--without-heartbeat", "-l", "warning"],
        cwd=ROOT, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
    )  # fmt: skip
    eager, default_queue = celery_app.conf.task_always_eager, celery_app.conf.task_default_queue
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


def wait_until_judged(pairing_id: str, worker) -> TeamPairing:
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        pairing = TeamPairing.objects.get(pk=pairing_id)
        if pairing.status != "pending":
            return pairing
        if worker.poll() is not None:
            pytest.fail("worker exited:\n" + worker.stdout.read())
        time.sleep(0.01)
    pytest.fail("the worker did not judge the pairing in time")


def test_a_real_worker_judges_a_pending_pairing(worker, capsys):
    challenge = make_red_blue(workspace=make_workspace("Worker red/blue"))
    Player("worker-defender").submit(challenge, "blue", WEAK_DEFENSE)
    timings = []
    for n in range(ROUNDS):
        attacker = Player(f"worker-attacker-{n}")
        attacker.end_user(challenge)
        started = time.monotonic()
        answer = attacker.submit(challenge, "red", ROLEPLAY_ATTACK)
        assert answer.status_code == 201
        pairing_id = answer.json()["pairings"][0]["id"]
        answered = time.monotonic()
        pairing = wait_until_judged(pairing_id, worker)
        timings.append(((answered - started) * 1000, (time.monotonic() - started) * 1000))
        assert pairing.status == "completed"
        assert pairing.categories["CBRNE"] is True
        assert (pairing.red_points, pairing.blue_points) == (3, 5)
    # The first answer may already be judged only when the worker is very quick; the
    # submission itself is answered as pending.
    answered_ms = sorted(t[0] for t in timings)
    judged_ms = sorted(t[1] for t in timings)
    with capsys.disabled():
        print(
            f"\n[redblue timing, PostgreSQL + Redis worker] answered (pending) median "
            f"{answered_ms[len(answered_ms) // 2]:.0f} ms; pairing judged median "
            f"{judged_ms[len(judged_ms) // 2]:.0f} ms, max {judged_ms[-1]:.0f} ms "
            f"over {ROUNDS} submissions"
        )

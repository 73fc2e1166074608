"""SIGTERM stops a real Celery worker, started with the README's production options, within
10 s when Redis is up, stopped or hung (paused: connections open, nothing answers). A
supervisor's stop timeout stays a second line of defence."""

import os
import shlex
import signal
import subprocess
import time
import uuid
from contextlib import ExitStack
from pathlib import Path

import pytest
from django.db import connection

from tests.conftest import require_service
from tests.factories import make_workspace
from tests.faults.background import (
    HoldingReceiver,
    background_env,
    celery_process,
    deliveries_written,
    tasks_sent,
    until_all_delivered,
)
from tests.servers import private_redis

pytestmark = pytest.mark.django_db(transaction=True)

README = Path(__file__).resolve().parents[2] / "README.md"
EXIT_SECONDS = 10


def _readme_worker_options() -> list[str]:
    command = next(line for line in README.read_text().splitlines() if " -A config worker " in line)
    words = shlex.split(command, comments=True)
    options = words[words.index("worker") + 1 :]
    if "-l" in options:  # the test's own log level (celery_process)
        del options[options.index("-l") : options.index("-l") + 2]
    return options


@pytest.mark.parametrize("outage", ["none", "stopped", "hung"])
def test_an_idle_worker_exits_within_ten_seconds_of_sigterm(outage):
    require_service("PostgreSQL", connection.vendor == "postgresql", "set DATABASE_URL")
    queue = f"faults-term-{uuid.uuid4().hex[:8]}"
    receiver = HoldingReceiver()
    deliveries = deliveries_written(workspace=make_workspace(), url=receiver.url, count=1)
    with ExitStack() as stack:
        stack.callback(receiver.stop)
        redis_server = stack.enter_context(private_redis())
        env = background_env(redis_url=redis_server.url, queue=queue)
        worker = stack.enter_context(
            celery_process("worker", "-Q", queue, *_readme_worker_options(), env=env)
        )
        tasks_sent(broker_url=redis_server.url, queue=queue, delivery_ids=[deliveries[0].pk])
        until_all_delivered([deliveries[0].pk], patience=60)  # connected and consuming

        if outage == "stopped":
            redis_server.stop()
        elif outage == "hung":
            os.kill(redis_server.process.pid, signal.SIGSTOP)
            stack.callback(os.kill, redis_server.process.pid, signal.SIGCONT)
        time.sleep(3)  # the worker's next heartbeat and poll now meet the outage

        os.killpg(worker.pid, signal.SIGTERM)
        try:
            worker.wait(timeout=EXIT_SECONDS)
        except subprocess.TimeoutExpired:
            pytest.fail(f"the worker still ran {EXIT_SECONDS} s after SIGTERM (Redis {outage})")

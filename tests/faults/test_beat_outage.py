"""Celery beat (django-celery-beat's DatabaseScheduler) through PostgreSQL stopped for ten
seconds: it stays up and sends the sweeper again once the database is back. Beat here
re-reads every schedule each second (tests/faults/beat_launcher.py), so the outage meets a
re-read, the read that escaped and ended beat in two of six outages."""

import time
import uuid

import pytest
import redis
from django.db import connection

from tests.conftest import require_service, subprocess_database_url
from tests.faults.background import background_env, celery_process, sweeper_installed
from tests.servers import private_postgres, private_redis

pytestmark = pytest.mark.django_db(transaction=True)

PATIENCE_SECONDS = 60


def _until_more_sent(queue: redis.Redis, name: str, than: int) -> int:
    deadline = time.monotonic() + PATIENCE_SECONDS
    while (sent := queue.llen(name)) <= than:
        if time.monotonic() > deadline:
            pytest.fail(f"beat sent nothing in {PATIENCE_SECONDS} s")
        time.sleep(0.5)
    return sent


def test_beat_outlives_postgres_stopping_and_sends_the_sweeper_again():
    require_service("PostgreSQL", connection.vendor == "postgresql", "set DATABASE_URL")
    sweeper_installed()
    queue = f"faults-beat-{uuid.uuid4().hex[:8]}"
    with private_postgres() as postgres, private_redis() as redis_server:
        database_url = postgres.create_database("phc", copy_of=subprocess_database_url())
        env = background_env(redis_url=redis_server.url, queue=queue, database_url=database_url)
        broker = redis.Redis.from_url(redis_server.url)
        with celery_process(
            "beat", "--max-interval", "1", env=env, module="tests.faults.beat_launcher"
        ) as beat:
            sent = _until_more_sent(broker, queue, 0)
            postgres.stop()
            time.sleep(10)
            postgres.start()
            sent = broker.llen(queue)
            _until_more_sent(broker, queue, sent)
            assert beat.poll() is None, "beat exited"

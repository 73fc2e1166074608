"""PostgreSQL restarted, then stopped for ten seconds, under load: the site answers 503
with Retry-After while it is away, never a 500; it answers at once instead of queueing
requests for the pool's timeout; and it serves everything again once PostgreSQL is back."""

import time

import pytest
from django.conf import settings
from django.db import connection

from tests.conftest import redis_up, require_service, subprocess_database_url
from tests.faults.site import Load, refusals_are_clear, served, site_rows
from tests.servers import private_postgres

pytestmark = pytest.mark.django_db(transaction=True)

OUTAGE_SECONDS = 10
# Longer than the outage: a request that waited for the pool would outlast it.
POOL_TIMEOUT_SECONDS = 60


def test_it_answers_503_at_once_while_postgres_is_down_and_recovers_after_restarts():
    require_service("PostgreSQL", connection.vendor == "postgresql", "set DATABASE_URL")
    require_service("Redis", redis_up(), "set REDIS_URL")
    site = site_rows(players=3)
    with private_postgres() as postgres:
        database_url = postgres.create_database("phc", copy_of=subprocess_database_url())
        with served(
            database_url=database_url,
            redis_url=settings.REDIS_URL,
            DB_POOL_SIZE="4",
            DB_POOL_TIMEOUT=str(POOL_TIMEOUT_SECONDS),
        ) as url:
            load = Load(url, site).start()
            load.wait_for_answers(20, since=time.monotonic())
            postgres.restart()
            restarted = time.monotonic()
            load.wait_for_answers(20, since=restarted)
            postgres.stop()
            stopped = time.monotonic()
            time.sleep(OUTAGE_SECONDS)
            postgres.start()
            started = time.monotonic()
            load.wait_for_answers(40, since=started + 2)
            answers = load.stop()

    during_restart = [a for a in answers if restarted - 1 <= a.sent_at < stopped]
    print(
        f"restart: {sum(a.status == 503 for a in during_restart)} of {len(during_restart)} "
        f"refused; stop: {len(answers_between(answers, stopped + 1, started))} answered"
    )
    refusals_are_clear(answers)
    answered_while_down = answers_between(answers, stopped + 1, started)
    # Answered, not queued: each of the three clients got many refusals in the ten seconds.
    assert len(answered_while_down) > 15, len(answered_while_down)
    assert all(a.status == 503 for a in answered_while_down if a.kind != "board")
    after = [a for a in answers if a.sent_at >= started + 2]
    assert after and all(a.status in (200, 201) for a in after), after[:5]


def answers_between(answers, start: float, end: float):
    return [a for a in answers if start <= a.answered_at < end]

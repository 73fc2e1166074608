"""Webhooks through faults of the background machinery, with a real worker and beat on a
private redis-server: a worker killed mid-delivery, and Redis restarted empty (messages
lost) under a running worker. Each webhook is answered by the receiver exactly once, and
all are delivered within the sweeper's bound (docs/outages.md: 30 s after being due, a
claimed try's lease included here) instead of 10–14 minutes; the worker rides out the
Redis outage by itself."""

import os
import signal
import time
import uuid

import psycopg
import pytest
from django.db import connection

from tests.conftest import require_service, subprocess_database_url
from tests.factories import make_workspace
from tests.faults.background import (
    HoldingReceiver,
    background_env,
    celery_process,
    deliveries_written,
    sweeper_installed,
    tasks_sent,
    until_all_delivered,
    worker_arguments,
)
from tests.servers import private_postgres, private_redis

pytestmark = pytest.mark.django_db(transaction=True)

# The lease (the 5 s POST timeout and 5 s), the sweeper's grace and interval (10 s each),
# a worker's start: well under a minute. The old sweeper needed 10 to 14 minutes.
PATIENCE_SECONDS = 75


@pytest.fixture
def receiver():
    running = HoldingReceiver()
    yield running
    running.stop()


@pytest.fixture
def services():
    require_service("PostgreSQL", connection.vendor == "postgresql", "set DATABASE_URL")
    sweeper_installed()


def _answered_once_each(receiver: HoldingReceiver, deliveries) -> None:
    expected = {f"msg_{delivery.pk.hex}": 1 for delivery in deliveries}
    assert dict(receiver.answered) == expected


def test_a_worker_killed_mid_delivery_leaves_nothing_undelivered_or_sent_twice(services, receiver):
    queue = f"faults-kill-{uuid.uuid4().hex[:8]}"
    deliveries = deliveries_written(workspace=make_workspace(), url=receiver.url, count=6)
    ids = [delivery.pk for delivery in deliveries]
    with private_redis() as redis_server:
        env = background_env(redis_url=redis_server.url, queue=queue)
        with celery_process("beat", env=env):
            receiver.holding.set()
            with celery_process(*worker_arguments(queue, concurrency=2), env=env) as first:
                tasks_sent(broker_url=redis_server.url, queue=queue, delivery_ids=ids)
                receiver.wait_until_held(2)
                os.killpg(first.pid, signal.SIGKILL)
                first.wait()
            receiver.let_go()
            with celery_process(*worker_arguments(queue, concurrency=2), env=env):
                until_all_delivered(ids, patience=PATIENCE_SECONDS)
                # Late or repeated tasks for the same deliveries would come now.
                time.sleep(3)

    _answered_once_each(receiver, deliveries)


def test_a_worker_rides_out_redis_restarting_empty_and_what_it_held_is_delivered(
    services, receiver
):
    queue = f"faults-redis-{uuid.uuid4().hex[:8]}"
    deliveries = deliveries_written(workspace=make_workspace(), url=receiver.url, count=5)
    ids = [delivery.pk for delivery in deliveries]
    with private_redis() as redis_server:
        env = background_env(redis_url=redis_server.url, queue=queue)
        with (
            celery_process("beat", env=env) as beat,
            celery_process(*worker_arguments(queue, concurrency=1), env=env) as worker,
        ):
            receiver.holding.set()
            tasks_sent(broker_url=redis_server.url, queue=queue, delivery_ids=ids)
            receiver.wait_until_held(1)
            # The queued tasks go with Redis: it keeps nothing on disk.
            redis_server.stop()
            receiver.let_go()
            time.sleep(10)
            redis_server.start()
            until_all_delivered(ids, patience=PATIENCE_SECONDS)
            time.sleep(3)
            assert worker.poll() is None, "the worker exited"
            assert beat.poll() is None, "beat exited"

    # The held POST went unanswered: it was sent again, and answered once.
    _answered_once_each(receiver, deliveries)


def test_a_slow_receiver_is_not_sent_a_delivery_again_while_it_answers(services, receiver):
    queue = f"faults-slow-{uuid.uuid4().hex[:8]}"
    deliveries = deliveries_written(workspace=make_workspace(), url=receiver.url, count=1)
    ids = [deliveries[0].pk]
    with private_redis() as redis_server:
        # The POST may take 40 s; the sweeper re-queues what has waited 10 s.
        env = background_env(redis_url=redis_server.url, queue=queue, post_timeout=40)
        with (
            celery_process("beat", env=env),
            celery_process(*worker_arguments(queue, concurrency=2), env=env),
        ):
            receiver.holding.set()
            tasks_sent(broker_url=redis_server.url, queue=queue, delivery_ids=ids)
            receiver.wait_until_held(1)
            # Two sweeps pass while the receiver takes its time.
            time.sleep(25)
            receiver.let_go(answer=True)
            until_all_delivered(ids, patience=PATIENCE_SECONDS)

    assert dict(receiver.received) == {f"msg_{deliveries[0].pk.hex}": 1}
    _answered_once_each(receiver, deliveries)


def test_an_answer_received_while_postgres_is_away_is_recorded_not_asked_again(services, receiver):
    queue = f"faults-db-{uuid.uuid4().hex[:8]}"
    deliveries = deliveries_written(workspace=make_workspace(), url=receiver.url, count=1)
    delivery_id = deliveries[0].pk
    with private_postgres() as postgres, private_redis() as redis_server:
        database_url = postgres.create_database("phc", copy_of=subprocess_database_url())
        env = background_env(redis_url=redis_server.url, queue=queue, database_url=database_url)
        with celery_process(*worker_arguments(queue, concurrency=1), env=env) as worker:
            receiver.holding.set()
            tasks_sent(broker_url=redis_server.url, queue=queue, delivery_ids=[delivery_id])
            receiver.wait_until_held(1)
            postgres.stop()
            receiver.let_go(answer=True)
            time.sleep(10)
            postgres.start()
            deadline = time.monotonic() + PATIENCE_SECONDS
            with psycopg.connect(database_url, autocommit=True) as database:
                while time.monotonic() < deadline:
                    status = database.execute(
                        "SELECT status FROM notifications_webhookdelivery WHERE id = %s",
                        (delivery_id,),
                    ).fetchone()[0]
                    if status == "delivered":
                        break
                    time.sleep(0.5)
            assert worker.poll() is None, "the worker exited"

    assert status == "delivered"
    assert dict(receiver.received) == {f"msg_{delivery_id.hex}": 1}

"""For the background-work fault tests: a webhook receiver that can hold the POSTs it gets,
a Celery worker or beat in a process group of its own (to kill it whole), deliveries
written as the dispatch writes them, and tasks sent to a given broker."""

import collections
import importlib
import os
import sys
import threading
import time
import uuid
from contextlib import contextmanager
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest
from celery import Celery
from django.utils import timezone

from notifications.models import Event, WebhookDelivery, WebhookEndpoint
from notifications.services import webhook_secret_generate
from tests.conftest import subprocess_database_url
from tests.servers import process_group


class HoldingReceiver:
    """Counts, per webhook-id, the POSTs received and those answered 200. While `holding`,
    a POST waits instead of being answered; `let_go` ends the wait, answering the held
    POSTs or not (their sender is gone by then)."""

    def __init__(self) -> None:
        self.lock = threading.Lock()
        self.received: collections.Counter[str] = collections.Counter()
        self.answered: collections.Counter[str] = collections.Counter()
        self.held = 0
        self.holding = threading.Event()
        self.released = threading.Event()
        self.answer_held = False
        receiver = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self):  # noqa: N802 - the http.server hook name
                self.rfile.read(int(self.headers.get("content-length") or 0))
                webhook_id = self.headers["webhook-id"]
                with receiver.lock:
                    receiver.received[webhook_id] += 1
                    hold = receiver.holding.is_set()
                    receiver.held += hold
                if hold:
                    receiver.released.wait(timeout=120)
                    if not receiver.answer_held:
                        self.close_connection = True
                        return
                self.send_response(200)
                self.send_header("content-length", "0")
                self.end_headers()
                with receiver.lock:
                    receiver.answered[webhook_id] += 1

            def log_message(self, *args):
                return

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}/hook"
        threading.Thread(target=self.server.serve_forever, daemon=True).start()

    def wait_until_held(self, count: int, *, patience: float = 60) -> None:
        deadline = time.monotonic() + patience
        while self.held < count:
            if time.monotonic() > deadline:
                pytest.fail(f"the receiver held {self.held} POSTs, not {count}")
            time.sleep(0.05)

    def let_go(self, *, answer: bool = False) -> None:
        self.answer_held = answer
        self.holding.clear()
        self.released.set()

    def stop(self) -> None:
        self.let_go()
        self.server.shutdown()
        self.server.server_close()


def deliveries_written(*, workspace, url: str, count: int) -> list[WebhookDelivery]:
    """`count` dispatched events with one pending delivery each, as event_dispatch leaves
    them before it queues the deliveries."""
    endpoint = WebhookEndpoint.objects.create(
        workspace=workspace, url=url, secret=webhook_secret_generate()
    )
    now = timezone.now()
    deliveries = []
    for n in range(count):
        event = Event.objects.create(
            type=Event.Type.CHALLENGE_FIRST_BLOOD,
            workspace=workspace,
            subject_id=f"fault-{uuid.uuid4()}",  # unique in a database that stays
            dedupe_key="first",
            payload={"event": "challenge_first_blood", "n": n},
            occurred_at=now,
            dispatched_at=now,
        )
        deliveries.append(
            WebhookDelivery.objects.create(event=event, endpoint=endpoint, next_retry_at=now)
        )
    return deliveries


def tasks_sent(*, broker_url: str, queue: str, delivery_ids: list) -> None:
    # Not the current app: the test process keeps sending its own tasks eagerly.
    with Celery(broker=broker_url, set_as_current=False) as sender:
        for delivery_id in delivery_ids:
            sender.send_task("notifications.webhook_deliver", args=[str(delivery_id)], queue=queue)


def background_env(
    *, redis_url: str, queue: str, database_url: str = "", post_timeout: int = 5
) -> dict[str, str]:
    return {
        **os.environ,
        "DATABASE_URL": database_url or subprocess_database_url(),
        "REDIS_URL": redis_url,
        "DJANGO_SETTINGS_MODULE": "tests.notifications.worker_settings",
        "CELERY_QUEUE": queue,
        "EGRESS_ALLOW_HOSTS": "127.0.0.1",
        "NOTIFICATIONS_WEBHOOK_TIMEOUT_SECONDS": str(post_timeout),
        "NOTIFICATIONS_WEBHOOK_BACKOFF_SECONDS": "0.5",
        "NOTIFICATIONS_WEBHOOK_BACKOFF_MAX_SECONDS": "2",
    }


@contextmanager
def celery_process(*arguments: str, env: dict[str, str], module: str = "celery"):
    """`celery -A config <arguments>` as a test-server process group (tests/servers.py)."""
    command = [sys.executable, "-m", module, "-A", "config", *arguments, "-l", "warning"]
    with process_group(command, env=env, stop_seconds=20) as (process, _):
        yield process


def worker_arguments(queue: str, *, concurrency: int) -> list[str]:
    return ["worker", f"--concurrency={concurrency}", "-Q", queue, "--without-gossip"]


def until_all_delivered(delivery_ids: list, *, patience: float) -> list[WebhookDelivery]:
    deadline = time.monotonic() + patience
    while time.monotonic() < deadline:
        rows = list(WebhookDelivery.objects.filter(pk__in=delivery_ids))
        if all(row.status == WebhookDelivery.Status.DELIVERED for row in rows):
            return rows
        time.sleep(0.5)
    statuses = collections.Counter(
        WebhookDelivery.objects.filter(pk__in=delivery_ids).values_list("status", flat=True)
    )
    pytest.fail(f"not all delivered in {patience:.0f} s: {dict(statuses)}")


def sweeper_installed() -> None:
    """The periodic jobs as migrate installs them (notifications 0002 and 0003): a test
    that ran before may have flushed them with every other row."""
    from django.apps import apps

    importlib.import_module("notifications.migrations.0002_periodic_jobs").install(apps, None)
    sweep = importlib.import_module("notifications.migrations.0003_sweep_every_ten_seconds")
    sweep.every(10)(apps, None)

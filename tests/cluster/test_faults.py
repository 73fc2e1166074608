"""SPEC §8: a process, Redis, PostgreSQL or a Celery worker dying under a load through
nginx loses nothing that was acknowledged. Every refusal a client sees is a 503 with
Retry-After (nginx answers one for a process that died under a request), never a 500;
each Dify run retried with its workflow_run_id lands exactly once; the cluster recovers
by itself. Each test prints what the clients saw."""

import contextlib
import signal
import time
import uuid

import httpx
import pytest
from django.db import connections
from websockets.exceptions import ConnectionClosed
from websockets.sync.client import connect

from challenges.models import BridgeDelivery, ChallengeAttempt
from deploy import cluster as deployment
from deploy.cluster import WEB_NAMES
from players.models import Workspace
from tests.cluster.load import Load
from tests.cluster.site import site_create
from tests.faults.background import (
    HoldingReceiver,
    deliveries_written,
    tasks_sent,
    until_all_delivered,
)


@pytest.fixture(autouse=True)
def _whole_again(cluster):
    """Whatever a test stopped is started again, also when it failed half-way."""
    yield
    deployment.heal()


def nothing_lost(load: Load, site) -> None:
    print("\n", load.summary())
    connections.close_all()  # this process's own connection may have died with the fault
    assert load.unfinished == []
    unclear = [a for a in load.refusals() if a.status != 503 or not a.retry_after]
    assert unclear == [], unclear[:5]
    runs = set(load.acknowledged)
    assert len(runs) == len(load.acknowledged)
    assert BridgeDelivery.objects.filter(workflow_run_id__in=runs).count() == len(runs)
    attempts = ChallengeAttempt.objects.filter(challenge_id=site.challenge_id)
    assert attempts.count() == len(runs)


def under_load(cluster, fault) -> None:
    connections.close_all()
    site = site_create()
    load = Load(cluster.base_url, site).start()
    try:
        load.wait_for("bridge", 20, since=time.monotonic() - 60)
        fault()
        load.wait_for("bridge", 20, since=time.monotonic())
        load.wait_for("board", 20, since=time.monotonic())
    finally:
        load.stop()
    nothing_lost(load, site)


def test_an_app_process_killed_mid_load_loses_no_run(cluster):
    def kill() -> None:
        # Stopped first, so requests nginx sent it are surely in flight when it dies.
        deployment.signal_process("web-b", signal.SIGSTOP)
        time.sleep(1)
        deployment.signal_process("web-b", signal.SIGKILL)
        time.sleep(3)
        deployment.web_start("web-b")  # systemd's Restart=always

    under_load(cluster, kill)


def test_redis_restarted_mid_load_loses_no_run(cluster):
    background = ("worker-1", "worker-2", "beat")
    before = {name: deployment.pid_of(name) for name in background}

    def restart() -> None:
        deployment.process_stop("redis", 5)
        time.sleep(2)
        deployment.redis_start()

    under_load(cluster, restart)

    # The workers and beat rode it out by themselves (nothing restarted them), and work
    # queued on the Redis that came back is done: a webhook, answered once.
    assert {name: deployment.pid_of(name) for name in background} == before
    receiver = HoldingReceiver()
    try:
        deliveries = deliveries_written(workspace=cluster_workspace(), url=receiver.url, count=2)
        ids = [delivery.pk for delivery in deliveries]
        tasks_sent(broker_url=cluster.redis_url, queue="phc", delivery_ids=ids)
        until_all_delivered(ids, patience=60)
    finally:
        receiver.stop()
    assert dict(receiver.answered) == {f"msg_{delivery.pk.hex}": 1 for delivery in deliveries}


def test_the_primary_restarted_mid_load_loses_no_run(cluster):
    def restart() -> None:
        deployment.pg_stop("primary")
        time.sleep(2)
        deployment.pg_start("primary")

    under_load(cluster, restart)


def test_the_replica_stopped_mid_load_loses_no_read(cluster):
    def stop() -> None:
        deployment.pg_stop("replica")
        time.sleep(4)
        deployment.pg_start("replica")

    under_load(cluster, stop)


def close_code(ws, seconds: float = 10) -> int | None:
    """The code the server closed `ws` with (the frames pushed before it are skipped)."""
    deadline = time.monotonic() + seconds
    try:
        while True:
            ws.recv(timeout=max(deadline - time.monotonic(), 0.01))
    except ConnectionClosed as closed:
        return closed.rcvd.code if closed.rcvd else None


def test_a_rolling_restart_closes_sockets_with_1001_and_loses_no_run(cluster):
    site = site_create()
    url = f"ws://127.0.0.1:{cluster.web[0]}/ws/leaderboards/challenge/{site.challenge_id}/"
    with contextlib.ExitStack() as stack:
        sockets = [
            stack.enter_context(connect(url, origin="http://127.0.0.1", open_timeout=10))
            for _ in range(5)
        ]
        for ws in sockets:
            ws.recv(timeout=10)
        codes, gone_after, load = _rolling_restart_of_web_a(cluster, site, sockets)
    print(f"web-a gone {gone_after:.2f} s after SIGTERM; sockets closed with {codes}")
    assert codes == [1001] * 5
    nothing_lost(load, site)


def _rolling_restart_of_web_a(cluster, site, sockets):
    load = Load(cluster.base_url, site).start()
    try:
        load.wait_for("bridge", 20, since=time.monotonic() - 60)
        stopping = time.monotonic()
        pid = deployment.signal_process("web-a", signal.SIGTERM)
        codes = [close_code(ws) for ws in sockets]
        assert deployment.wait_gone(pid, 10), "web-a did not exit within 10 s of SIGTERM"
        gone_after = time.monotonic() - stopping
        deployment.web_start("web-a")
        load.wait_for("bridge", 20, since=time.monotonic())
    finally:
        load.stop()
    return codes, gone_after, load


def cluster_workspace() -> Workspace:
    return Workspace.objects.get(pk=site_create().workspace_id)


def test_a_worker_killed_mid_delivery_leaves_each_webhook_answered_once(cluster):
    receiver = HoldingReceiver()
    try:
        deliveries = deliveries_written(workspace=cluster_workspace(), url=receiver.url, count=4)
        ids = [delivery.pk for delivery in deliveries]
        receiver.holding.set()
        tasks_sent(broker_url=cluster.redis_url, queue="phc", delivery_ids=ids)
        receiver.wait_until_held(2)  # each worker is mid-POST
        killed = time.monotonic()
        deployment.signal_process("worker-1", signal.SIGKILL)
        time.sleep(0.5)
        receiver.let_go()  # the other worker's POST fails too: it retries with backoff
        deployment.worker_start("worker-1")
        until_all_delivered(ids, patience=120)
        delivered_after = time.monotonic() - killed
        time.sleep(3)  # a repeated task would come now
    finally:
        receiver.stop()
    print(
        f"every webhook delivered {delivered_after:.1f} s after the kill; {dict(receiver.received)}"
    )
    assert dict(receiver.answered) == {f"msg_{delivery.pk.hex}": 1 for delivery in deliveries}


def test_with_every_process_down_nginx_answers_each_surface_503_with_retry_after(cluster):
    for name in WEB_NAMES:
        deployment.process_stop(name)
    with httpx.Client(base_url=cluster.base_url, timeout=30) as http:
        bridge = http.post("/bridge/dify/challenge-evaluator", json={})
        board = http.get(f"/web/api/challenges/{uuid.uuid4()}/leaderboard")
        arena = http.get("/api/v1/challenges")
        page = http.get("/scoreboard/")
    for answer in (bridge, board, arena, page):
        assert answer.status_code == 503 and answer.headers["retry-after"] == "1", answer
    assert bridge.json()["error"]["code"] == board.json()["error"]["code"] == "service_unavailable"
    assert arena.json()["code"] == "service_unavailable"
    assert page.headers["content-type"].startswith("text/html")
    assert "Back in a moment" in page.text

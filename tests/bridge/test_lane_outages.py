"""The bridge lane when PostgreSQL or Redis goes away under it (SPEC §8): a 503 with
`Retry-After` in the JSON error shape or Django's answer, never a 500, nothing
acknowledged lost, and recovery by itself.

A real uvicorn serves config.asgi on a private PostgreSQL cluster and a private Redis
(tests/servers.py), so stopping them disturbs nothing else on the machine.
"""

import json
import os
import subprocess
import sys
import threading
import time
import uuid
from dataclasses import dataclass

import httpx
import psycopg
import pytest

from challenges.models import ChallengeAttempt
from tests.bridge.conftest import EVALUATOR
from tests.servers import (
    ROOT,
    PrivatePostgres,
    PrivateRedis,
    private_postgres,
    private_redis,
    uvicorn_server,
)

# Waiting for servers to start or a dependency to come back: generous, never asserted.
PATIENCE_SECONDS = 90

SEED = """
import json
from challenges.services.bridge_keys import bridge_key_create
from tests.factories import make_challenge, make_workspace

workspace = make_workspace("Outages")
challenge = make_challenge(workspace=workspace, max_attempts_per_hour=0)
keys = [bridge_key_create(workspace=workspace, name=f"dify {n}")[1] for n in range(2)]
print(json.dumps({"challenge": str(challenge.id), "keys": keys}))
"""


@dataclass
class Site:
    url: str
    postgres: PrivatePostgres
    redis: PrivateRedis
    database_url: str
    challenge_id: str
    keys: list[str]


def _manage(env: dict[str, str], *arguments: str) -> str:
    done = subprocess.run(
        [sys.executable, "manage.py", *arguments],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert done.returncode == 0, done.stderr
    return done.stdout


@pytest.fixture(scope="module")
def site():
    with private_postgres() as postgres, private_redis() as redis_server:
        postgres.create_database("phc")
        env = {
            **os.environ,
            "DATABASE_URL": postgres.url("phc"),
            "REDIS_URL": redis_server.url,
            "SECRET_KEY": "lane-outage-test-key-" + "x" * 40,
            "DEBUG": "false",
            "SECURE_SSL_REDIRECT": "false",
            "SECURE_HSTS_SECONDS": "0",
            "CELERY_TASK_ALWAYS_EAGER": "true",
            "BRIDGE_RATE_LIMIT": "100000/m",
            # Django's own pool: its first wait in an outage stays short.
            "DB_POOL_TIMEOUT": "3",
        }
        env.pop("DJANGO_SETTINGS_MODULE", None)
        _manage(env, "migrate", "--noinput", "-v", "0")
        seeded = json.loads(_manage(env, "shell", "-c", SEED).strip().splitlines()[-1])
        with uvicorn_server(env=env, start_seconds=PATIENCE_SECONDS) as port:
            yield Site(
                url=f"http://127.0.0.1:{port}",
                postgres=postgres,
                redis=redis_server,
                database_url=postgres.url("phc"),
                challenge_id=seeded["challenge"],
                keys=seeded["keys"],
            )


def _post(client: httpx.Client, site: Site, *, key: str, user: str = "dify-user-1"):
    run = str(uuid.uuid4())
    body = {"challenge_id": site.challenge_id, "output": "no", "user": user, "workflow_run_id": run}
    response = client.post(
        EVALUATOR,
        content=json.dumps(body),
        headers={"Authorization": f"Bearer {key}", "Content-Type": "text/plain"},
    )
    return run, response


def _assert_unavailable(response: httpx.Response) -> None:
    assert response.status_code == 503, (response.status_code, response.text)
    assert response.headers["content-type"] == "application/json"
    assert response.json()["error"]["code"] == "service_unavailable"
    assert int(response.headers["retry-after"]) >= 1


def _attempt_ids(site: Site, runs: list[str]) -> dict[str, list[str]]:
    """The attempts recorded for each workflow run, read from the site's own database."""
    table = ChallengeAttempt._meta.db_table
    with psycopg.connect(site.database_url) as database:
        rows = database.execute(
            f"SELECT workflow_run_id, id::text FROM {table} WHERE workflow_run_id = ANY(%s)",  # noqa: S608
            (runs,),
        ).fetchall()
    found: dict[str, list[str]] = {run: [] for run in runs}
    for run, attempt_id in rows:
        found[run].append(attempt_id)
    return found


def _until_recorded(client: httpx.Client, site: Site, *, key: str, unavailable=None):
    """Calls until one is recorded; each one before it says the site is unavailable."""
    deadline = time.monotonic() + PATIENCE_SECONDS
    while True:
        run, response = _post(client, site, key=key)
        if response.status_code == 200 or time.monotonic() > deadline:
            return run, response
        (unavailable or _assert_unavailable)(response)
        time.sleep(0.2)


def test_it_answers_503_while_postgresql_is_down_and_records_once_it_is_back(site):
    with httpx.Client(base_url=site.url, timeout=PATIENCE_SECONDS) as client:
        _, warm = _post(client, site, key=site.keys[0])
        assert warm.status_code == 200
        site.postgres.stop()
        try:
            # A key the lane has not seen: it looks it up through Django's pool.
            _, unseen_key = _post(client, site, key=site.keys[1])
            during = [_post(client, site, key=site.keys[0])[1] for _ in range(5)]
        finally:
            site.postgres.start()
        for response in (unseen_key, *during):
            _assert_unavailable(response)
        run, recovered = _until_recorded(client, site, key=site.keys[0])
    assert recovered.status_code == 200
    assert _attempt_ids(site, [run])[run] == [recovered.json()["attempt_id"]]


def test_a_postgresql_restart_under_load_loses_no_acknowledged_call(site):
    answers: list[tuple[str, httpx.Response]] = []
    stop = threading.Event()

    def player(n: int) -> None:
        with httpx.Client(base_url=site.url, timeout=PATIENCE_SECONDS) as client:
            while not stop.is_set():
                answers.append(_post(client, site, key=site.keys[0], user=f"load-{n}"))

    with httpx.Client(base_url=site.url, timeout=PATIENCE_SECONDS) as client:
        for n in range(4):  # every player exists before the restart
            assert _post(client, site, key=site.keys[0], user=f"load-{n}")[1].status_code == 200
    players = [threading.Thread(target=player, args=(n,)) for n in range(4)]
    for thread in players:
        thread.start()
    try:
        _wait_for(lambda: len(answers) >= 40)
        site.postgres.restart()
        restarted_at = len(answers)
        _wait_for(lambda: sum(r.status_code == 200 for _, r in answers[restarted_at:]) >= 40)
    finally:
        stop.set()
        for thread in players:
            thread.join(timeout=PATIENCE_SECONDS)

    statuses = {response.status_code for _, response in answers}
    assert statuses <= {200, 503}, statuses
    for _, response in answers:
        if response.status_code == 503:
            _assert_unavailable(response)
    acknowledged = {run: r.json()["attempt_id"] for run, r in answers if r.status_code == 200}
    recorded = _attempt_ids(site, list(acknowledged))
    assert {run: [attempt] for run, attempt in acknowledged.items()} == recorded
    assert sum(r.status_code == 200 for _, r in answers[restarted_at:]) >= 40


def _wait_for(condition) -> None:
    deadline = time.monotonic() + PATIENCE_SECONDS
    while not condition():
        assert time.monotonic() < deadline, "gave up waiting"
        time.sleep(0.1)


def test_it_hands_calls_to_django_while_redis_is_down_and_answers_again_after(site):
    with httpx.Client(base_url=site.url, timeout=PATIENCE_SECONDS) as client:
        assert _post(client, site, key=site.keys[0])[1].status_code == 200
        site.redis.stop()
        try:
            during = [_post(client, site, key=site.keys[0])[1] for _ in range(5)]
        finally:
            site.redis.start()
        run, after = _until_recorded(client, site, key=site.keys[0], unavailable=_assert_handled)
    # The lane hands these calls to Django: what a Redis outage means on Django's path is
    # its own rule; an exception escaping the lane would be uvicorn's bare text/plain 500.
    for response in during:
        _assert_handled(response)
    assert after.status_code == 200
    assert _attempt_ids(site, [run])[run] == [after.json()["attempt_id"]]


def _assert_handled(response: httpx.Response) -> None:
    assert response.headers["content-type"] == "application/json", response.text
    assert response.status_code == 200 or "error" in response.json()

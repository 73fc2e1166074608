"""SPEC §8 against a running `make cluster` (deploy/cluster.py): nginx, three uvicorn
processes, two workers and beat, PostgreSQL with a streaming replica, Redis.

`make cluster-test` starts the cluster when it is down and runs these with DATABASE_URL,
REDIS_URL and DATABASE_REPLICA_URLS naming the cluster's (.cluster/test.env). The test
process writes its rows straight into the cluster's database — no test database, nothing
rolled back — so each test makes a workspace of its own. Plain `pytest` leaves this
directory out (it needs the cluster); name it (`pytest tests/cluster`) to run it. Without a
running cluster every test fails under CI=true and skips otherwise.
"""

import logging
from pathlib import Path

import pytest

from deploy import cluster as deployment
from tests.conftest import require_service

HERE = Path(__file__).resolve().parent
# A line per request of the loads would bury what a failing test printed.
logging.getLogger("httpx").setLevel(logging.WARNING)


def _names_this_directory(arg: str) -> bool:
    path = Path(arg.split("::")[0]).resolve()
    return path == HERE or HERE in path.parents


def pytest_collection_modifyitems(config, items):
    if any(_names_this_directory(arg) for arg in config.args):
        return
    left_out = [item for item in items if HERE in Path(item.path).parents]
    if left_out:
        config.hook.pytest_deselected(items=left_out)
        items[:] = [item for item in items if item not in left_out]


@pytest.fixture(scope="session")
def cluster(django_db_blocker):
    """The running cluster's ports; the test process reads and writes its database."""
    from django.conf import settings

    running = deployment.running()
    require_service("the cluster (make cluster)", running, "run `make cluster-test`")
    topology = deployment.topology()
    database = settings.DATABASES["default"]
    require_service(
        "the cluster's database",
        str(database.get("PORT")) == str(topology.primary),
        "DATABASE_URL, REDIS_URL and DATABASE_REPLICA_URLS from .cluster/test.env",
    )
    # Secrets are encrypted and bridge keys signed with the cluster's key.
    settings.SECRET_KEY = (deployment.STATE / "secret_key").read_text().strip()
    with django_db_blocker.unblock():
        yield topology


@pytest.fixture(scope="session")
def django_db_setup():
    """No test database: the cluster's own (its processes serve it)."""


@pytest.fixture(scope="session", autouse=True)
def _close_stray_connections():
    """Overrides the suite's: ending every session of the database would end the
    cluster's processes' connections too."""
    yield


@pytest.fixture(autouse=True)
def _clear_cache():
    """Overrides the suite's: the cache is the cluster's Redis (its queues, its boards)."""
    yield

import os

import pytest
from rest_framework.test import APIClient

from players.services import token_issue
from tests import factories
from tests.judging.fake_openai import serve

IN_CI = os.environ.get("CI", "").lower() in ("1", "true", "yes")


def require_service(name: str, available: bool, why: str = "") -> None:
    """Skip locally when a real service is missing; fail under CI=true."""
    if available:
        return
    message = f"{name} is not reachable{': ' + why if why else ''}"
    if IN_CI:
        pytest.fail(message + " (CI=true: required)")
    pytest.skip(message)


def redis_up() -> bool:
    import redis
    from django.conf import settings

    if not settings.REDIS_URL:
        return False
    try:
        return bool(redis.Redis.from_url(settings.REDIS_URL, socket_timeout=2).ping())
    except redis.RedisError:
        return False


def subprocess_database_url() -> str:
    """The URL of the database this test run uses, for a server or worker subprocess."""
    from django.db import connection

    db = connection.settings_dict
    return f"postgres://{db['USER']}@{db['HOST'] or '127.0.0.1'}:{db['PORT'] or 5432}/{db['NAME']}"


def client_for(user=None) -> APIClient:
    client = APIClient()
    if user is not None:
        client.credentials(HTTP_AUTHORIZATION=f"Bearer {token_issue(user=user)}")
    return client


@pytest.fixture
def workspace(db):
    return factories.make_workspace("Acme Red Team")


@pytest.fixture
def other_workspace(db):
    return factories.make_workspace("Rival Labs")


@pytest.fixture
def creator(workspace):
    return factories.make_creator(workspace=workspace, email="owner@acme.test")


@pytest.fixture
def viewer(workspace):
    return factories.make_creator(workspace=workspace, role="viewer", email="viewer@acme.test")


@pytest.fixture
def outsider(other_workspace):
    return factories.make_creator(workspace=other_workspace, email="owner@rival.test")


@pytest.fixture
def player(db):
    return factories.make_player("player@example.com")


@pytest.fixture
def creator_api(creator):
    return client_for(creator)


@pytest.fixture
def outsider_api(outsider):
    return client_for(outsider)


@pytest.fixture
def viewer_api(viewer):
    return client_for(viewer)


@pytest.fixture
def anon_api():
    return APIClient()


@pytest.fixture(autouse=True)
def _clear_cache():
    from django.core.cache import cache

    cache.clear()
    yield


@pytest.fixture(scope="session", autouse=True)
def _close_stray_connections(django_db_setup, django_db_blocker):
    """Threads (live server, channels' sync_to_async, race tests) keep their own
    connections; end them so the test database can be dropped at the end."""
    yield
    from django.db import connection

    if connection.vendor != "postgresql":
        return
    with django_db_blocker.unblock(), connection.cursor() as cursor:
        cursor.execute(
            "SELECT pg_terminate_backend(pid) FROM pg_stat_activity "
            "WHERE datname = current_database() AND pid <> pg_backend_pid()"
        )


@pytest.fixture
def fake_openai(settings):
    """A local OpenAI-compatible server the judge is pointed at."""
    fake, server = serve()
    settings.OPENAI_BASE_URL = fake.url
    settings.OPENAI_API_KEY = "sk-test"
    settings.JUDGE_MAX_RETRIES = 0
    # Lets the same server stand in for a Dify target (the operator's allowlist).
    settings.EGRESS_ALLOW_HOSTS = [fake.url.split("//", 1)[1].split("/", 1)[0]]
    yield fake
    server.shutdown()
    server.server_close()


@pytest.fixture(autouse=True)
def _board_redraws_finish():
    """Board redraws a test's writes asked for (challenges/board_refresh.py) end before the
    next test begins, so none draws from, or pushes into, the next one."""
    yield
    from challenges.board_refresh import board_refreshes_wait

    board_refreshes_wait()

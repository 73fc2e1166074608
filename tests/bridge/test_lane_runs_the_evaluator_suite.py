"""The challenge-evaluator suite again, through the served ASGI app with its raw lane.

Every test of tests/bridge/test_challenge_evaluator.py runs here with `bridge_api`
speaking ASGI to config.asgi.application, so the lane (or Django, where the lane hands a
call on) must give the same answers, rows and limits. Needs PostgreSQL and Redis: on
anything else the lane stands aside and these would only test Django twice.
"""

import pytest
from django.db import connection

from tests.bridge.test_challenge_evaluator import *  # noqa: F403
from tests.conftest import redis_up, require_service
from tests.lane_client import LaneClient

pytestmark = pytest.mark.django_db(transaction=True)


@pytest.fixture
def bridge_api(bridge_key):
    require_service("PostgreSQL", connection.vendor == "postgresql", "set DATABASE_URL")
    require_service("Redis", redis_up(), "set REDIS_URL")
    client = LaneClient()
    client.credentials(HTTP_AUTHORIZATION=f"Bearer {bridge_key}")
    yield client
    client.close()

"""Redis stopped for ten seconds under load, then started again (empty, as a Redis without
persistence comes back): the site answers 503 with Retry-After where it needs Redis, never
a 500, and serves everything again once Redis is back, by itself."""

import time

import pytest
from django.db import connection

from challenges.models import ChallengeAttempt
from tests.conftest import require_service, subprocess_database_url
from tests.faults.site import Load, refusals_are_clear, served, site_rows
from tests.servers import private_redis

pytestmark = pytest.mark.django_db(transaction=True)

OUTAGE_SECONDS = 10


def test_it_answers_503_with_retry_after_while_redis_is_down_and_recovers():
    require_service("PostgreSQL", connection.vendor == "postgresql", "set DATABASE_URL")
    site = site_rows(players=3)
    with (
        private_redis() as redis_server,
        served(database_url=subprocess_database_url(), redis_url=redis_server.url) as url,
    ):
        load = Load(url, site).start()
        began = time.monotonic()
        load.wait_for_answers(20, since=began)
        redis_server.stop()
        stopped = time.monotonic()
        time.sleep(OUTAGE_SECONDS)
        redis_server.start()
        restarted = time.monotonic()
        load.wait_for_answers(40, since=restarted + 1)
        answers = load.stop()

    refusals_are_clear(answers)
    during = [a for a in answers if stopped + 1 <= a.sent_at and a.answered_at < restarted]
    assert any(a.status == 503 for a in during), "Redis was never missed"
    # The board falls back to PostgreSQL and the page needs no Redis: both stay up.
    assert all(a.status == 200 for a in during if a.kind in ("page", "board")), during
    after = [a for a in answers if a.sent_at >= restarted + 1]
    assert after and all(a.status in (200, 201) for a in after), after[:5]
    assert ChallengeAttempt.objects.filter(challenge_id=site.challenge_id).exists()

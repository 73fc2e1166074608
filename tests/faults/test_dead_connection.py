"""After PostgreSQL ends every session (a restart), the connections idle in the pool are
dead: an attempt recorded next is written on a fresh connection instead of failing, because
nothing of it had run when its first statement found the connection dead."""

import psycopg
import pytest
from django.db import connection

from challenges.models import ChallengeAttempt
from challenges.services.attempts import attempt_record
from judging.verdicts import Verdict
from tests.conftest import require_service, subprocess_database_url
from tests.factories import make_challenge, make_end_user

pytestmark = pytest.mark.django_db(transaction=True)


def _end_every_other_session() -> None:
    """End this test's own session, as a restart would: only its own, so connections other
    tests' threads (a live server's) keep are left alive."""
    pid = connection.connection.info.backend_pid
    with psycopg.connect(subprocess_database_url(), autocommit=True) as admin:
        admin.execute("SELECT pg_terminate_backend(%s)", [pid])


def test_it_records_an_attempt_on_a_fresh_connection_after_the_sessions_were_ended(workspace):
    require_service("PostgreSQL", connection.vendor == "postgresql", "set DATABASE_URL")
    challenge = make_challenge(workspace=workspace)
    player = make_end_user(workspace=workspace, external_id="after-restart")
    connection.ensure_connection()
    _end_every_other_session()

    attempt = attempt_record(challenge=challenge, end_user=player, verdict=Verdict(True, "ok"))

    assert ChallengeAttempt.objects.filter(pk=attempt.pk, succeeded=True).count() == 1


def test_it_does_not_retry_inside_a_callers_transaction(workspace):
    require_service("PostgreSQL", connection.vendor == "postgresql", "set DATABASE_URL")
    from django.db import OperationalError, transaction

    challenge = make_challenge(workspace=workspace)
    player = make_end_user(workspace=workspace, external_id="inside")
    connection.ensure_connection()
    _end_every_other_session()

    with pytest.raises(OperationalError), transaction.atomic():
        attempt_record(challenge=challenge, end_user=player, verdict=Verdict(True, "ok"))
    connection.close()
    assert not ChallengeAttempt.objects.filter(challenge=challenge).exists()

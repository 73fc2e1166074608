import threading

import pytest
from django.db import connection, connections

from challenges.models import ChallengeAttempt, LeaderboardEntry
from challenges.services.attempts import attempt_record
from judging.verdicts import Verdict
from tests.conftest import require_service
from tests.factories import make_challenge, make_end_user, make_workspace


@pytest.mark.django_db(transaction=True)
def test_concurrent_attempts_keep_one_entry_holding_the_best():
    require_service("PostgreSQL", connection.vendor == "postgresql", "set DATABASE_URL")
    workspace = make_workspace("Race")
    challenge = make_challenge(workspace=workspace, scoring_strategy="fastest")
    end_user = make_end_user(workspace=workspace, external_id="racer")
    timings = list(range(1000, 0, -50))
    start = threading.Barrier(len(timings))
    errors = []

    def play(elapsed_ms: int) -> None:
        try:
            start.wait()
            attempt_record(
                challenge=challenge,
                end_user=end_user,
                verdict=Verdict(True, "ok"),
                elapsed_ms=elapsed_ms,
            )
        except Exception as exc:  # surfaced below
            errors.append(exc)
        finally:
            connections.close_all()

    threads = [threading.Thread(target=play, args=(ms,)) for ms in timings]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()

    assert errors == []
    assert ChallengeAttempt.objects.filter(challenge=challenge).count() == len(timings)
    entry = LeaderboardEntry.objects.get(challenge=challenge)
    assert entry.elapsed_ms == min(timings)
    assert entry.attempt.elapsed_ms == min(timings)


@pytest.mark.django_db(transaction=True)
def test_concurrent_deliveries_of_one_key_record_once():
    require_service("PostgreSQL", connection.vendor == "postgresql", "set DATABASE_URL")
    workspace = make_workspace("Dupes")
    challenge = make_challenge(workspace=workspace)
    end_user = make_end_user(workspace=workspace, external_id="dupe")
    start = threading.Barrier(20)
    ids, errors = [], []

    def deliver() -> None:
        try:
            start.wait()
            attempt = attempt_record(
                challenge=challenge,
                end_user=end_user,
                verdict=Verdict(True, "ok"),
                idempotency_key="wf-run-1",
            )
            ids.append(attempt.id)
        except Exception as exc:
            errors.append(exc)
        finally:
            connections.close_all()

    threads = [threading.Thread(target=deliver) for _ in range(20)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert errors == []
    assert len(set(ids)) == 1
    assert ChallengeAttempt.objects.filter(challenge=challenge).count() == 1
    assert LeaderboardEntry.objects.filter(challenge=challenge).count() == 1

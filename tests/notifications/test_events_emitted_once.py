import threading

import pytest
from django.db import connection, connections

from challenges.services.attempts import attempt_record
from judging.verdicts import Verdict
from notifications.models import Event
from tests.conftest import require_service
from tests.factories import make_challenge, make_end_user, make_workspace


def _solve(challenge, end_user, elapsed_ms=500, passed=True):
    return attempt_record(
        challenge=challenge,
        end_user=end_user,
        verdict=Verdict(passed, "ok"),
        elapsed_ms=elapsed_ms,
    )


@pytest.mark.django_db
def test_it_emits_first_blood_with_the_seed_shape_on_the_first_solve_only():
    workspace = make_workspace("Blood")
    challenge = make_challenge(workspace=workspace, scoring_strategy="fastest")
    _solve(challenge, make_end_user(workspace=workspace, external_id="miss"), passed=False)
    assert not Event.objects.exists()

    attempt = _solve(challenge, make_end_user(workspace=workspace, external_id="first"))
    _solve(challenge, make_end_user(workspace=workspace, external_id="second"), elapsed_ms=900)

    event = Event.objects.get()
    assert event.type == "challenge_first_blood"
    assert event.workspace == workspace
    assert event.payload == {
        "event": "challenge_first_blood",
        "challenge_id": str(challenge.id),
        "scoring_strategy": "fastest",
        "account_id": "first",
        "score": attempt.score,
        "occurred_at": int(attempt.created_at.timestamp() * 1000),
    }


@pytest.mark.django_db
def test_it_emits_record_beaten_with_previous_and_new_record_when_the_head_changes():
    workspace = make_workspace("Records")
    challenge = make_challenge(workspace=workspace, scoring_strategy="fastest")
    holder = _solve(challenge, make_end_user(workspace=workspace, external_id="holder"), 800)
    _solve(challenge, make_end_user(workspace=workspace, external_id="slower"), 900)
    beater = _solve(challenge, make_end_user(workspace=workspace, external_id="beater"), 300)

    beaten = Event.objects.get(type="challenge_record_beaten")
    assert beaten.payload == {
        "event": "challenge_record_beaten",
        "challenge_id": str(challenge.id),
        "scoring_strategy": "fastest",
        "previous_record": {"account_id": "holder", "score": holder.score},
        "new_record": {"account_id": "beater", "score": beater.score},
        "occurred_at": int(beater.created_at.timestamp() * 1000),
    }
    assert Event.objects.count() == 2


@pytest.mark.django_db(transaction=True)
def test_it_stores_one_first_blood_for_twenty_concurrent_first_solves():
    require_service("PostgreSQL", connection.vendor == "postgresql", "set DATABASE_URL")
    workspace = make_workspace("Blood race")
    challenge = make_challenge(workspace=workspace, scoring_strategy="first")
    players = [make_end_user(workspace=workspace, external_id=f"p{n}") for n in range(20)]
    start = threading.Barrier(len(players))
    errors = []

    def solve(end_user) -> None:
        try:
            start.wait()
            _solve(challenge, end_user)
        except Exception as exc:  # surfaced below
            errors.append(exc)
        finally:
            connections.close_all()

    threads = [threading.Thread(target=solve, args=(player,)) for player in players]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()

    assert errors == []
    assert (
        Event.objects.filter(type="challenge_first_blood", subject_id=str(challenge.id)).count()
        == 1
    )

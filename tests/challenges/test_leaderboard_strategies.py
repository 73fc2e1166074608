from datetime import timedelta

import pytest
from django.utils import timezone

from challenges.models import LeaderboardEntry
from challenges.services.attempts import attempt_record
from challenges.services.challenges import challenge_update
from judging.verdicts import Verdict
from tests.factories import make_challenge, make_end_user

pytestmark = pytest.mark.django_db

WIN = Verdict(passed=True, feedback="ok")
LOSS = Verdict(passed=False, feedback="no")


def _board(client, challenge, limit=10):
    response = client.get(f"/web/api/challenges/{challenge.id}/leaderboard?limit={limit}")
    assert response.status_code == 200
    return [(row["player"], row["score"]) for row in response.json()["entries"]]


def _record(challenge, name, *, verdict=WIN, minutes_ago=0, **metrics):
    end_user = make_end_user(workspace=challenge.workspace, external_id=name)
    attempt = attempt_record(challenge=challenge, end_user=end_user, verdict=verdict, **metrics)
    # Attempts arrive "now"; shift them to make the order of arrival explicit.
    when = timezone.now() - timedelta(minutes=minutes_ago)
    type(attempt).objects.filter(pk=attempt.pk).update(created_at=when)
    LeaderboardEntry.objects.filter(attempt=attempt).update(achieved_at=when)
    LeaderboardEntry.objects.filter(attempt=attempt, first_succeeded_at__gt=when).update(
        first_succeeded_at=when
    )
    return attempt


def test_first_ranks_by_earliest_success_and_ignores_failures(anon_api, workspace):
    challenge = make_challenge(workspace=workspace, scoring_strategy="first")
    _record(challenge, "late", minutes_ago=1)
    _record(challenge, "early", minutes_ago=30)
    _record(challenge, "loser", verdict=LOSS, minutes_ago=60)
    assert _board(anon_api, challenge) == [("early", 1.0), ("late", 1.0)]


def test_first_keeps_a_players_first_success(anon_api, workspace):
    challenge = make_challenge(workspace=workspace, scoring_strategy="first")
    _record(challenge, "alice", minutes_ago=10)
    _record(challenge, "bob", minutes_ago=5)
    _record(challenge, "alice", minutes_ago=1)
    assert [name for name, _ in _board(anon_api, challenge)] == ["alice", "bob"]
    assert LeaderboardEntry.objects.filter(challenge=challenge).count() == 2


def test_fastest_ranks_by_lowest_elapsed_with_earliest_tie_break(anon_api, workspace):
    challenge = make_challenge(workspace=workspace, scoring_strategy="fastest")
    _record(challenge, "slow", elapsed_ms=900, minutes_ago=50)
    _record(challenge, "tie-late", elapsed_ms=300, minutes_ago=5)
    _record(challenge, "tie-early", elapsed_ms=300, minutes_ago=40)
    _record(challenge, "unmeasured", minutes_ago=60)
    _record(challenge, "slow", elapsed_ms=100, minutes_ago=1)  # slow improves
    assert _board(anon_api, challenge) == [
        ("slow", 100.0),
        ("tie-early", 300.0),
        ("tie-late", 300.0),
        ("unmeasured", None),
    ]


def test_fewest_tokens_ranks_by_lowest_tokens(anon_api, workspace):
    challenge = make_challenge(workspace=workspace, scoring_strategy="fewest_tokens")
    _record(challenge, "verbose", tokens_total=500, minutes_ago=3)
    _record(challenge, "terse", tokens_total=12, minutes_ago=2)
    _record(challenge, "terse", tokens_total=40, minutes_ago=1)  # worse: ignored
    assert _board(anon_api, challenge) == [("terse", 12.0), ("verbose", 500.0)]


def test_highest_rating_ranks_highest_first_with_earliest_tie_break(anon_api, workspace):
    challenge = make_challenge(workspace=workspace, scoring_strategy="highest_rating")
    _record(challenge, "seven", verdict=Verdict(True, rating=7), minutes_ago=9)
    _record(challenge, "nine-late", verdict=Verdict(True, rating=9), minutes_ago=1)
    _record(challenge, "nine-early", verdict=Verdict(True, rating=9), minutes_ago=8)
    assert _board(anon_api, challenge) == [
        ("nine-early", 9.0),
        ("nine-late", 9.0),
        ("seven", 7.0),
    ]


def test_changing_the_strategy_rebuilds_the_board(
    anon_api, workspace, django_capture_on_commit_callbacks
):
    challenge = make_challenge(workspace=workspace, scoring_strategy="first")
    _record(challenge, "early-but-slow", elapsed_ms=5000, minutes_ago=30)
    _record(challenge, "late-but-fast", elapsed_ms=50, minutes_ago=1)
    assert [n for n, _ in _board(anon_api, challenge)] == ["early-but-slow", "late-but-fast"]
    with django_capture_on_commit_callbacks(execute=True):
        challenge_update(challenge=challenge, user=None, scoring_strategy="fastest")
    assert [n for n, _ in _board(anon_api, challenge)] == ["late-but-fast", "early-but-slow"]


def test_limit_caps_the_board(anon_api, workspace):
    challenge = make_challenge(workspace=workspace)
    for n in range(5):
        _record(challenge, f"p{n}", minutes_ago=10 - n)
    assert [n for n, _ in _board(anon_api, challenge, limit=2)] == ["p0", "p1"]


def test_a_leaderboard_read_is_one_query(anon_api, workspace, django_assert_num_queries):
    challenge = make_challenge(workspace=workspace)
    for n in range(30):
        _record(challenge, f"p{n}", minutes_ago=n)
    from challenges.selectors.leaderboards import leaderboard_for_challenge

    with django_assert_num_queries(1):
        rows = leaderboard_for_challenge(challenge=challenge, limit=10)
    assert len(rows) == 10


def test_an_idempotency_key_records_once(workspace):
    challenge = make_challenge(workspace=workspace)
    end_user = make_end_user(workspace=workspace)
    first = attempt_record(
        challenge=challenge, end_user=end_user, verdict=WIN, idempotency_key="run-1"
    )
    again = attempt_record(
        challenge=challenge, end_user=end_user, verdict=WIN, idempotency_key="run-1"
    )
    assert again.id == first.id
    assert challenge.attempts.count() == 1

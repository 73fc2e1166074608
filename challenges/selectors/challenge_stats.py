"""What happened on each challenge, for the creators' lists: solves, players, last attempt.

Each figure is a correlated subquery on an indexed column, so a page of challenges is
one query whatever its length.
"""

from django.db.models import Count, FloatField, IntegerField, OuterRef, QuerySet, Subquery
from django.db.models.functions import Cast, Coalesce, NullIf

from challenges.models import Challenge, ChallengeAttempt, LeaderboardEntry


def _count_per_challenge(queryset: QuerySet, expression) -> Subquery:
    return Subquery(
        queryset.filter(challenge=OuterRef("pk"))
        .order_by()
        .values("challenge")
        .annotate(count=expression)
        .values("count"),
        output_field=IntegerField(),
    )


def challenges_with_play_stats(queryset: QuerySet[Challenge]) -> QuerySet[Challenge]:
    """Annotate `solves`, `players`, `solve_rate` (0..1 or None) and `last_attempt_at`."""
    solves = Coalesce(_count_per_challenge(LeaderboardEntry.objects.all(), Count("id")), 0)
    players = Coalesce(
        _count_per_challenge(ChallengeAttempt.objects.all(), Count("end_user", distinct=True)),
        0,
    )
    last_attempt_at = Subquery(
        ChallengeAttempt.objects.filter(challenge=OuterRef("pk"))
        .order_by("-created_at")
        .values("created_at")[:1]
    )
    return queryset.annotate(
        solves=solves, players=players, last_attempt_at=last_attempt_at
    ).annotate(solve_rate=Cast("solves", FloatField()) / NullIf(Cast("players", FloatField()), 0.0))


def challenges_with_attempt_count(queryset: QuerySet[Challenge]) -> QuerySet[Challenge]:
    """Annotate `attempt_count`: every attempt, failed ones included (the dashboard's)."""
    attempts = _count_per_challenge(ChallengeAttempt.objects.all(), Count("id"))
    return queryset.annotate(attempt_count=Coalesce(attempts, 0))

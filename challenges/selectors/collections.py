"""Collections of challenges: the public lists, a player's progress and the standings.

A collection's standings are built from `LeaderboardEntry`, which already holds each
player's best attempt per challenge, so a collection leaderboard is one GROUP BY over
at most (players × challenges in the collection) rows and never touches the attempts.
"""

import uuid
from dataclasses import dataclass
from datetime import datetime

from django.contrib.auth.models import AbstractBaseUser
from django.db.models import (
    Avg,
    Case,
    Count,
    F,
    FloatField,
    Max,
    Prefetch,
    Q,
    QuerySet,
    Sum,
    Value,
    When,
)
from django.db.models.functions import Cast

from challenges.models import Challenge, ChallengeCollection, CollectionItem, LeaderboardEntry
from challenges.scoring import POINTS_PER_SOLVE
from challenges.selectors.standings import BoardView, standing_entries
from core.errors import ApplicationError
from players.models import EndUser
from players.selectors import rows_for_creator

# Per-challenge strategies whose score grows with quality; under the collection's `sum`
# their score is added to the point every solve earns. The others score in milliseconds
# or tokens (lower is better) or a constant, so they only count the solve.
HIGHER_IS_BETTER_CHALLENGE_STRATEGIES = (
    Challenge.Strategy.HIGHEST_RATING,
    Challenge.Strategy.CUSTOM,
)


def _ordered_items(*, active_only: bool) -> Prefetch:
    items = CollectionItem.objects.select_related("challenge").order_by("position", "id")
    if active_only:
        items = items.filter(challenge__is_active=True)
    return Prefetch("items", queryset=items, to_attr="ordered_items")


def collections_for_creator(
    *, user: AbstractBaseUser, app_id: str | None = None, workspace_id: uuid.UUID | None = None
) -> QuerySet[ChallengeCollection]:
    found = rows_for_creator(
        ChallengeCollection.objects, user=user, workspace_id=workspace_id, app_id=app_id
    )
    return found.prefetch_related(_ordered_items(active_only=False)).order_by("-created_at", "id")


def collections_public() -> QuerySet[ChallengeCollection]:
    return ChallengeCollection.objects.filter(is_public=True).order_by("-created_at", "id")


def collections_public_with_challenges() -> QuerySet[ChallengeCollection]:
    """Public collections with `ordered_items` holding only their active challenges."""
    return collections_public().prefetch_related(_ordered_items(active_only=True))


def collection_public_by_slug(*, slug: str) -> ChallengeCollection | None:
    return (
        collections_public_with_challenges().select_related("workspace").filter(slug=slug).first()
    )


@dataclass(frozen=True)
class CollectionProgress:
    solved_challenge_ids: set[uuid.UUID]
    end_user_id: str  # empty until the player has solved something here


def collection_progress(
    *, collection: ChallengeCollection, account: AbstractBaseUser
) -> CollectionProgress:
    """Which of the collection's challenges this logged-in player has solved (one query)."""
    if not account.is_authenticated:
        return CollectionProgress(solved_challenge_ids=set(), end_user_id="")
    solves = list(
        LeaderboardEntry.objects.filter(
            challenge__in=CollectionItem.objects.filter(collection=collection).values(
                "challenge_id"
            ),
            end_user__workspace_id=collection.workspace_id,
            end_user__account=account,
        ).values_list("challenge_id", "end_user_id")
    )
    return CollectionProgress(
        solved_challenge_ids={challenge_id for challenge_id, _ in solves},
        end_user_id=str(solves[0][1]) if solves else "",
    )


def collection_conquest_place(
    *, collection: ChallengeCollection, end_user_id: str, view: BoardView | None = None
) -> int | None:
    """Among the players who solved every open level of the collection, where this one
    came (1 for the first to finish); None while they have not. While frozen, only
    others who finished by the freeze count ahead. Expects `ordered_items` prefetched with
    the open levels (collection_public_by_slug)."""
    level_ids = [item.challenge_id for item in collection.ordered_items]
    if not level_ids or not end_user_id:
        return None
    finished = (
        LeaderboardEntry.objects.filter(challenge_id__in=level_ids)
        .values("end_user_id")
        .annotate(solved=Count("id"), finished_at=Max("first_succeeded_at"))
        .filter(solved=len(level_ids))
    )
    mine = next(iter(finished.filter(end_user_id=end_user_id)), None)
    if mine is None:
        return None
    ahead = finished.filter(finished_at__lt=mine["finished_at"])
    if view is not None and view.cutoff is not None:
        ahead = ahead.filter(finished_at__lte=view.cutoff)
    return ahead.count() + 1


@dataclass(frozen=True)
class CollectionStandingRow:
    rank: int
    player: str
    source: str  # "site" or "dify", as on a challenge's board
    end_user_id: str
    solved: int
    value: float | None
    last_achieved_at: datetime


@dataclass(frozen=True)
class CollectionLeaderboard:
    collection_id: uuid.UUID
    scoring_strategy: str
    frozen_at: datetime | None
    bracket: str | None
    metric: str
    # "all", "agents" or "humans" (challenges/selectors/standings.py).
    players: str
    challenge_count: int
    limit: int
    entries: list[CollectionStandingRow]


# How each collection strategy ranks players; every LeaderboardEntry is one solved
# challenge (the player's best attempt there), so COUNT is "challenges solved".
#   sum                  points = POINTS_PER_SOLVE per solve (the scoreboard's scale),
#                        plus the challenge's score where the challenge ranks
#                        higher-is-better (highest_rating, custom); times and token
#                        counts are not points. More points, then more solved.
#   fastest_total        more solved first, then lower total elapsed_ms.
#   fewest_tokens_total  more solved first, then lower total tokens.
#   highest_avg_rating   higher average judge_rating over rated solves, then more solved.
# A solve missing the measured number is not counted in `measured`, which ranks ahead of
# the total, so a missing number never looks like a perfect one. Remaining ties go to
# whoever reached their standing first (earliest last achieved_at).
def _strategy_plan(strategy: str):
    if strategy == ChallengeCollection.Strategy.SUM:
        solve = Value(float(POINTS_PER_SOLVE), output_field=FloatField())
        points = Case(
            When(
                Q(challenge__scoring_strategy__in=HIGHER_IS_BETTER_CHALLENGE_STRATEGIES)
                & Q(score__isnull=False),
                then=solve + F("score"),
            ),
            default=solve,
            output_field=FloatField(),
        )
        return "points", Sum(points), [F("value").desc(), F("solved").desc()]
    if strategy == ChallengeCollection.Strategy.FASTEST_TOTAL:
        return "total_elapsed_ms", _measured_total("elapsed_ms"), _fewest_first()
    if strategy == ChallengeCollection.Strategy.FEWEST_TOKENS_TOTAL:
        return "total_tokens", _measured_total("tokens_total"), _fewest_first()
    if strategy == ChallengeCollection.Strategy.HIGHEST_AVG_RATING:
        # Cast before averaging: integer AVG is numeric on PostgreSQL, float on SQLite.
        average = Avg(Cast("judge_rating", FloatField()))
        return "average_rating", average, [F("value").desc(nulls_last=True), F("solved").desc()]
    raise ApplicationError(
        "custom collection scoring is not available", code="unsupported_scoring", status=422
    )


def _measured_total(field: str):
    return Cast(Sum(field), FloatField())


def _fewest_first():
    return [F("solved").desc(), F("measured").desc(), F("value").asc(nulls_last=True)]


def _measured_field(strategy: str) -> str:
    return {
        ChallengeCollection.Strategy.FASTEST_TOTAL: "elapsed_ms",
        ChallengeCollection.Strategy.FEWEST_TOKENS_TOTAL: "tokens_total",
        ChallengeCollection.Strategy.HIGHEST_AVG_RATING: "judge_rating",
    }.get(strategy, "id")


def leaderboard_for_collection(
    *, collection: ChallengeCollection, limit: int, view: BoardView | None = None
) -> CollectionLeaderboard:
    """The top `limit` players under the collection's strategy, ordered in the database, as
    `view` shows them (None: live, every bracket; challenges/selectors/standings.py).

    Two queries whatever the number of players or attempts: the collection's challenge
    count and one GROUP BY end user over the best-attempt entries.
    """
    strategy = collection.scoring_strategy
    metric, value, ordering = _strategy_plan(strategy)
    challenge_ids = CollectionItem.objects.filter(collection=collection).values("challenge_id")
    rows = (
        standing_entries(view=view, challenge_ids=challenge_ids)
        .values("end_user_id", "end_user__display_name", "end_user__external_id")
        .annotate(
            solved=Count("id"),
            measured=Count(_measured_field(strategy)),
            last_achieved_at=Max("achieved_at"),
        )
        .annotate(value=value)
        .order_by(*ordering, F("last_achieved_at").asc(), "end_user_id")[:limit]
    )
    players = [
        EndUser(
            display_name=row["end_user__display_name"], external_id=row["end_user__external_id"]
        )
        for row in rows
    ]
    entries = [
        CollectionStandingRow(
            rank=position,
            player=player.public_name,
            source=player.source,
            end_user_id=str(row["end_user_id"]),
            solved=row["solved"],
            value=None if row["value"] is None else float(row["value"]),
            last_achieved_at=row["last_achieved_at"],
        )
        for position, (row, player) in enumerate(zip(rows, players, strict=True), start=1)
    ]
    return CollectionLeaderboard(
        collection_id=collection.id,
        scoring_strategy=strategy,
        frozen_at=view.cutoff if view is not None else None,
        bracket=view.bracket.slug if view is not None and view.bracket else None,
        players=(view.players if view is not None else "") or "all",
        metric=metric,
        challenge_count=CollectionItem.objects.filter(collection=collection).count(),
        limit=limit,
        entries=entries,
    )

"""Collections of challenges: the writes (services) and reads (selectors) in one place.

A collection's standings are built from `LeaderboardEntry`, which already holds each
player's best attempt per challenge, so a collection leaderboard is one GROUP BY over
at most (players × challenges in the collection) rows and never touches the attempts.
"""

import uuid
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from django.contrib.auth.models import AbstractBaseUser
from django.db import IntegrityError, transaction
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
from challenges.validation import theme_errors
from core.errors import ApplicationError
from core.slugs import unique_slug
from players.models import EndUser, Workspace
from players.selectors import workspaces_for_user

COLLECTION_FIELDS = (
    "app_id",
    "name",
    "slug",
    "description",
    "instructions_md",
    "theme",
    "is_public",
    "scoring_strategy",
    "scoring_plugin_id",
    "scoring_entrypoint",
    "scoring_config",
)
MAX_CHALLENGES_PER_COLLECTION = 200

# Per-challenge strategies whose score grows with quality; under the collection's `sum`
# their score is added to the point every solve earns. The others score in milliseconds
# or tokens (lower is better) or a constant, so they only count the solve.
HIGHER_IS_BETTER_CHALLENGE_STRATEGIES = (
    Challenge.Strategy.HIGHEST_RATING,
    Challenge.Strategy.CUSTOM,
)


# --- Services -----------------------------------------------------------------------


def collection_errors(data: dict[str, Any]) -> dict[str, list[str]]:
    """Every problem with a collection's full set of values, keyed by field name."""
    errors: dict[str, list[str]] = {}

    def add(field: str, message: str) -> None:
        errors.setdefault(field, []).append(message)

    if not str(data.get("name") or "").strip():
        add("name", "A collection needs a name.")
    strategy = data.get("scoring_strategy")
    if strategy not in ChallengeCollection.Strategy.values:
        add("scoring_strategy", "Use one of " + ", ".join(ChallengeCollection.Strategy.values))
    if strategy == ChallengeCollection.Strategy.CUSTOM and not (
        data.get("scoring_plugin_id") or data.get("scoring_entrypoint")
    ):
        add("scoring_plugin_id", "Custom scoring needs a plugin id or an entrypoint.")
    for message in theme_errors(data.get("theme") or {}):
        add("theme", message)
    if not isinstance(data.get("scoring_config") or {}, dict):
        add("scoring_config", "Must be an object.")
    return errors


def _validated(collection: ChallengeCollection, changes: dict[str, Any]) -> None:
    unknown = set(changes) - set(COLLECTION_FIELDS)
    if unknown:
        raise ApplicationError(
            "Unknown fields: " + ", ".join(sorted(unknown)) + ".",
            fields={name: ["Unknown field."] for name in sorted(unknown)},
        )
    for name, value in changes.items():
        setattr(collection, name, value)
    errors = collection_errors({name: getattr(collection, name) for name in COLLECTION_FIELDS})
    if collection.slug:
        clash = ChallengeCollection.objects.filter(slug=collection.slug).exclude(id=collection.id)
        if clash.exists():
            errors.setdefault("slug", []).append("This slug is taken.")
    if errors:
        raise ApplicationError(
            "Some fields are invalid: " + ", ".join(sorted(errors)) + ".", fields=errors
        )


def _save(collection: ChallengeCollection) -> None:
    # The slug check above can lose a race; the unique index settles it.
    try:
        with transaction.atomic():
            collection.save()
    except IntegrityError:
        raise ApplicationError(
            "This slug is taken.", code="conflict", status=409, fields={"slug": ["Taken."]}
        ) from None


def collection_create(
    *, workspace: Workspace, user: AbstractBaseUser | None, **fields: Any
) -> ChallengeCollection:
    collection = ChallengeCollection(workspace=workspace, created_by=user)
    _validated(collection, fields)
    if not collection.slug:
        collection.slug = unique_slug(
            model=ChallengeCollection, text=collection.name, fallback="collection"
        )
    _save(collection)
    return collection


def collection_update(*, collection: ChallengeCollection, **fields: Any) -> ChallengeCollection:
    _validated(collection, fields)
    if not collection.slug:
        collection.slug = unique_slug(
            model=ChallengeCollection,
            text=collection.name,
            fallback="collection",
            exclude_id=collection.id,
        )
    _save(collection)
    return collection


def collection_delete(*, collection: ChallengeCollection) -> None:
    collection.delete()


def _parsed_ids(challenge_ids: Any) -> tuple[list[uuid.UUID], list[str]]:
    if not isinstance(challenge_ids, list):
        raise ApplicationError(
            "'challenge_ids' must be a list of challenge ids.",
            fields={"challenge_ids": ["A list of challenge ids."]},
        )
    if len(challenge_ids) > MAX_CHALLENGES_PER_COLLECTION:
        raise ApplicationError(
            f"A collection holds at most {MAX_CHALLENGES_PER_COLLECTION} challenges.",
            fields={"challenge_ids": [f"At most {MAX_CHALLENGES_PER_COLLECTION} ids."]},
        )
    parsed, malformed = [], []
    for raw in challenge_ids:
        try:
            parsed.append(uuid.UUID(str(raw)))
        except ValueError:
            malformed.append(str(raw)[:64])
    return parsed, malformed


def collection_set_challenges(
    *, collection: ChallengeCollection, challenge_ids: list[Any]
) -> ChallengeCollection:
    """Make `challenge_ids`, in this order, the collection's challenges; all or nothing."""
    ids, malformed = _parsed_ids(challenge_ids)
    duplicates = sorted({str(i) for i in ids if ids.count(i) > 1})
    if duplicates:
        raise ApplicationError(
            "Each challenge may appear once: " + ", ".join(duplicates) + ".",
            fields={"challenge_ids": [f"Listed more than once: {i}" for i in duplicates]},
        )
    known = set(
        Challenge.objects.filter(workspace_id=collection.workspace_id, id__in=ids).values_list(
            "id", flat=True
        )
    )
    # Another workspace's challenge reads exactly like one that does not exist.
    bad = malformed + [str(i) for i in ids if i not in known]
    if bad:
        raise ApplicationError(
            "These are not challenges of this collection's workspace: " + ", ".join(bad) + ".",
            fields={"challenge_ids": [f"Unknown challenge: {i}" for i in bad]},
        )
    with transaction.atomic():
        # The lock makes concurrent replacements of the same list queue up, not interleave.
        ChallengeCollection.objects.select_for_update().filter(pk=collection.pk).first()
        CollectionItem.objects.filter(collection=collection).delete()
        CollectionItem.objects.bulk_create(
            CollectionItem(collection=collection, challenge_id=challenge_id, position=position)
            for position, challenge_id in enumerate(ids)
        )
        collection.save(update_fields=["updated_at"])
    return collection


# --- Selectors ----------------------------------------------------------------------


def _ordered_items(*, active_only: bool) -> Prefetch:
    items = CollectionItem.objects.select_related("challenge").order_by("position", "id")
    if active_only:
        items = items.filter(challenge__is_active=True)
    return Prefetch("items", queryset=items, to_attr="ordered_items")


def collections_for_creator(*, user: AbstractBaseUser) -> QuerySet[ChallengeCollection]:
    return (
        ChallengeCollection.objects.filter(workspace__in=workspaces_for_user(user=user))
        .prefetch_related(_ordered_items(active_only=False))
        .order_by("-created_at", "id")
    )


def collections_public() -> QuerySet[ChallengeCollection]:
    return ChallengeCollection.objects.filter(is_public=True).order_by("-created_at", "id")


def collections_public_with_challenges() -> QuerySet[ChallengeCollection]:
    """Public collections with `ordered_items` holding only their active challenges."""
    return collections_public().prefetch_related(_ordered_items(active_only=True))


def collection_public_by_slug(*, slug: str) -> ChallengeCollection | None:
    return collections_public_with_challenges().filter(slug=slug).first()


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


@dataclass(frozen=True)
class CollectionStandingRow:
    rank: int
    player: str
    end_user_id: str
    solved: int
    value: float | None
    last_achieved_at: datetime


@dataclass(frozen=True)
class CollectionLeaderboard:
    collection_id: uuid.UUID
    scoring_strategy: str
    metric: str
    challenge_count: int
    limit: int
    entries: list[CollectionStandingRow]


# How each collection strategy ranks players; every LeaderboardEntry is one solved
# challenge (the player's best attempt there), so COUNT is "challenges solved".
#   sum                  points = 1 per solve, plus the challenge's score where the
#                        challenge ranks higher-is-better (highest_rating, custom); times
#                        and token counts are not points. More points, then more solved.
#   fastest_total        more solved first, then lower total elapsed_ms.
#   fewest_tokens_total  more solved first, then lower total tokens.
#   highest_avg_rating   higher average judge_rating over rated solves, then more solved.
# A solve missing the measured number is not counted in `measured`, which ranks ahead of
# the total, so a missing number never looks like a perfect one. Remaining ties go to
# whoever reached their standing first (earliest last achieved_at).
def _strategy_plan(strategy: str):
    one = Value(1.0, output_field=FloatField())
    if strategy == ChallengeCollection.Strategy.SUM:
        points = Case(
            When(
                Q(challenge__scoring_strategy__in=HIGHER_IS_BETTER_CHALLENGE_STRATEGIES)
                & Q(score__isnull=False),
                then=one + F("score"),
            ),
            default=one,
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
    *, collection: ChallengeCollection, limit: int
) -> CollectionLeaderboard:
    """The top `limit` players under the collection's strategy, ordered in the database.

    Two queries whatever the number of players or attempts: the collection's challenge
    count and one GROUP BY end user over the best-attempt entries.
    """
    strategy = collection.scoring_strategy
    metric, value, ordering = _strategy_plan(strategy)
    challenge_ids = CollectionItem.objects.filter(collection=collection).values("challenge_id")
    rows = (
        LeaderboardEntry.objects.filter(challenge__in=challenge_ids)
        .values("end_user_id", "end_user__display_name", "end_user__external_id")
        .annotate(
            solved=Count("id"),
            measured=Count(_measured_field(strategy)),
            last_achieved_at=Max("achieved_at"),
        )
        .annotate(value=value)
        .order_by(*ordering, F("last_achieved_at").asc(), "end_user_id")[:limit]
    )
    entries = [
        CollectionStandingRow(
            rank=position,
            player=_public_name(row["end_user__display_name"], row["end_user__external_id"]),
            end_user_id=str(row["end_user_id"]),
            solved=row["solved"],
            value=None if row["value"] is None else float(row["value"]),
            last_achieved_at=row["last_achieved_at"],
        )
        for position, row in enumerate(rows, start=1)
    ]
    return CollectionLeaderboard(
        collection_id=collection.id,
        scoring_strategy=strategy,
        metric=metric,
        challenge_count=CollectionItem.objects.filter(collection=collection).count(),
        limit=limit,
        entries=entries,
    )


def _public_name(display_name: str, external_id: str) -> str:
    return EndUser(display_name=display_name, external_id=external_id).public_name

"""Levels (SPEC §4c): in an `in_order` collection a challenge opens when the one before
it is solved, and a challenge with prerequisites opens when every one of them (that is
active) is solved. A solve is a LeaderboardEntry, which exists only for solved challenges.

`level_locked_reason` is the one rule: the web play, the streamed play, the bridge and the
pages call it; the bridge's raw lane hands every such challenge to them (`is_leveled`)."""

import uuid
from dataclasses import dataclass

from django.contrib.auth.models import AbstractBaseUser
from django.db.models import Exists, OuterRef

from challenges.models import (
    Challenge,
    ChallengeCollection,
    ChallengePrerequisite,
    CollectionItem,
    LeaderboardEntry,
)
from players.models import EndUser


@dataclass(frozen=True)
class LevelStep:
    challenge: Challenge
    collection_name: str


def _placements(challenge: Challenge):
    """Where the challenge stands as a level: its items in public in-order collections."""
    return CollectionItem.objects.filter(
        challenge=challenge, collection__in_order=True, collection__is_public=True
    ).select_related("collection")


def _open_levels(collection_id):
    return CollectionItem.objects.filter(collection_id=collection_id, challenge__is_active=True)


def _steps_around(*, challenge: Challenge) -> tuple[list[LevelStep], list[LevelStep]]:
    """The levels just before and just after the challenge, in each in-order collection."""
    before, after = [], []
    for placement in _placements(challenge):
        siblings = (
            _open_levels(placement.collection_id)
            .select_related("challenge")
            .order_by("position", "id")
        )
        ordered = [item.challenge for item in siblings]
        if challenge not in ordered:
            continue
        index = ordered.index(challenge)
        name = placement.collection.name
        if index > 0:
            before.append(LevelStep(ordered[index - 1], name))
        if index + 1 < len(ordered):
            after.append(LevelStep(ordered[index + 1], name))
    return before, after


def solved_challenge_ids(*, end_user: EndUser | None) -> set[uuid.UUID]:
    if end_user is None:
        return set()
    return set(
        LeaderboardEntry.objects.filter(end_user=end_user).values_list("challenge_id", flat=True)
    )


def solved_challenge_ids_of_account(*, account: AbstractBaseUser) -> set[uuid.UUID]:
    """Every challenge the logged-in player has solved, in any workspace (one query)."""
    if not account.is_authenticated:
        return set()
    return set(
        LeaderboardEntry.objects.filter(end_user__account=account).values_list(
            "challenge_id", flat=True
        )
    )


def _active_prerequisites(*, challenge: Challenge) -> list[Challenge]:
    """The challenge's prerequisites that players can open (an inactive one is not
    required: nobody could solve it), by name."""
    return [
        link.prerequisite
        for link in ChallengePrerequisite.objects.filter(
            challenge=challenge, prerequisite__is_active=True
        )
        .select_related("prerequisite")
        .order_by("prerequisite__name", "prerequisite_id")
    ]


def _quoted_names(challenges: list[Challenge]) -> str:
    names = [f"“{challenge.name}”" for challenge in challenges]
    return names[0] if len(names) == 1 else ", ".join(names[:-1]) + " and " + names[-1]


def level_locked_reason(*, challenge: Challenge, end_user: EndUser | None) -> str | None:
    """Why the player may not play this level yet, or None when it is open to them."""
    before, _ = _steps_around(challenge=challenge)
    prerequisites = _active_prerequisites(challenge=challenge)
    if not before and not prerequisites:
        return None
    solved = solved_challenge_ids(end_user=end_user)
    for step in before:
        if step.challenge.id not in solved:
            return (
                f"This level is locked: solve “{step.challenge.name}” first "
                f"({step.collection_name} is played in order)."
            )
    missing = [required for required in prerequisites if required.id not in solved]
    if missing:
        return f"This challenge is locked: solve {_quoted_names(missing)} first."
    return None


def prerequisites_of(*, challenge: Challenge) -> list[Challenge]:
    """Every prerequisite of the challenge, active or not, by name."""
    return list(
        Challenge.objects.filter(
            id__in=ChallengePrerequisite.objects.filter(challenge=challenge).values(
                "prerequisite_id"
            )
        ).order_by("name", "id")
    )


def is_leveled(*, challenge: Challenge) -> bool:
    """Whether `level_locked_reason` may refuse someone on this challenge: it is a level of
    an in-order collection or it has prerequisites."""
    return (
        CollectionItem.objects.filter(challenge=challenge, collection__in_order=True).exists()
        or ChallengePrerequisite.objects.filter(challenge=challenge).exists()
    )


def next_level(*, challenge: Challenge) -> Challenge | None:
    _, after = _steps_around(challenge=challenge)
    return after[0].challenge if after else None


def collection_topped_by(*, challenge: Challenge) -> ChallengeCollection | None:
    """The public in-order collection whose last open level is this challenge: solving it
    conquers the collection (its finale)."""
    for placement in _placements(challenge):
        last = (
            _open_levels(placement.collection_id)
            .order_by("-position", "-id")
            .values_list("challenge_id", flat=True)
            .first()
        )
        if last == challenge.id:
            return placement.collection
    return None


@dataclass(frozen=True)
class LevelMap:
    # (collection's place, level's place) for each level of a public in-order collection.
    order: dict[uuid.UUID, tuple[int, int]]
    locked_ids: set[uuid.UUID]


def level_map(*, solved_ids: set[uuid.UUID]) -> LevelMap:
    """Where each level of the public in-order collections stands, and which challenges
    are locked for a player who solved `solved_ids` (every level after the first and every
    challenge with an active prerequisite, for a visitor): two queries whatever the number
    of collections and prerequisites."""
    items = (
        CollectionItem.objects.filter(
            collection__in_order=True, collection__is_public=True, challenge__is_active=True
        )
        .order_by("-collection__created_at", "collection_id", "position", "id")
        .values_list("collection_id", "challenge_id")
    )
    order: dict[uuid.UUID, tuple[int, int]] = {}
    locked: set[uuid.UUID] = set()
    collections: list[uuid.UUID] = []
    previous: tuple[uuid.UUID, uuid.UUID] | None = None
    for collection_id, challenge_id in items:
        if collection_id not in collections:
            collections.append(collection_id)
        order.setdefault(challenge_id, (collections.index(collection_id), len(order)))
        if previous and previous[0] == collection_id and previous[1] not in solved_ids:
            locked.add(challenge_id)
        previous = (collection_id, challenge_id)
    locked.update(prerequisite_locked_ids(solved_ids=solved_ids))
    return LevelMap(order=order, locked_ids=locked)


def prerequisite_locked_ids_of_account(
    *, account: AbstractBaseUser, challenge_ids: list[uuid.UUID]
) -> set[uuid.UUID]:
    """`prerequisite_locked_ids` for the logged-in player (or a visitor), with their solves
    looked up in the same query."""
    links = ChallengePrerequisite.objects.filter(
        challenge_id__in=challenge_ids, challenge__is_active=True, prerequisite__is_active=True
    )
    if account.is_authenticated:
        solved = LeaderboardEntry.objects.filter(
            challenge_id=OuterRef("prerequisite_id"), end_user__account=account
        )
        links = links.exclude(Exists(solved))
    return set(links.values_list("challenge_id", flat=True).distinct())


def prerequisite_locked_ids(
    *, solved_ids: set[uuid.UUID], challenge_ids: list[uuid.UUID] | None = None
) -> set[uuid.UUID]:
    """The active challenges (of `challenge_ids`, or all) that an active prerequisite the
    player has not solved keeps locked (one query)."""
    links = ChallengePrerequisite.objects.filter(
        challenge__is_active=True, prerequisite__is_active=True
    )
    if challenge_ids is not None:
        links = links.filter(challenge_id__in=challenge_ids)
    return {
        challenge_id
        for challenge_id, prerequisite_id in links.values_list("challenge_id", "prerequisite_id")
        if prerequisite_id not in solved_ids
    }

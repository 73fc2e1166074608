"""Hints as a player may see them (a paid body only once unlocked) and as creators do."""

from typing import Any

from django.contrib.auth.models import AbstractBaseUser
from django.db.models import BooleanField, Count, Exists, OuterRef, QuerySet, Value

from challenges.models import Challenge, Hint, HintUnlock
from players.models import EndUser
from players.selectors import workspaces_for_user


def hints_for_player(*, challenge: Challenge, end_user: EndUser | None) -> QuerySet[Hint]:
    """The challenge's hints in order, each with `unlocked` for this player (False for a
    visitor). Whether a body may be shown is `hint_body_shown`'s call."""
    hints = Hint.objects.filter(challenge=challenge).order_by("order", "created_at", "id")
    if end_user is None:
        return hints.annotate(unlocked=Value(False, output_field=BooleanField()))
    return hints.annotate(
        unlocked=Exists(HintUnlock.objects.filter(hint=OuterRef("pk"), end_user=end_user))
    )


def hint_body_shown(hint: Hint) -> bool:
    """A free hint is shown to everyone; a paid one to a player who unlocked it."""
    return hint.is_free or bool(getattr(hint, "unlocked", False))


def hint_visible_by_id(*, hint_id: Any) -> Hint | None:
    """A hint of an active challenge (others read as unknown), with its challenge."""
    return (
        Hint.objects.select_related("challenge__workspace")
        .filter(id=hint_id, challenge__is_active=True)
        .first()
    )


def hints_for_creator(
    *, user: AbstractBaseUser, challenge: Challenge | None = None
) -> QuerySet[Hint]:
    """Hints of the creator's workspaces, each with `unlocks_count` (one query)."""
    hints = Hint.objects.select_related("challenge").filter(
        challenge__workspace__in=workspaces_for_user(user=user)
    )
    if challenge is not None:
        hints = hints.filter(challenge=challenge)
    return hints.annotate(unlocks_count=Count("unlocks")).order_by(
        "challenge_id", "order", "created_at", "id"
    )

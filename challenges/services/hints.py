"""Hints: creators write them, players unlock them.

A hint costs points on the site scoreboard only (docs/hints.md says why): its cost is
recorded with the unlock, once per player and hint (the unique constraint settles two
clicks at once), and the scoreboard subtracts the sum of a player's unlocks.
"""

from dataclasses import dataclass
from typing import Any, TypedDict, Unpack

from django.contrib.auth.models import AbstractBaseUser
from django.db import transaction

from challenges.live import leaderboard_push_on_commit
from challenges.models import Challenge, Hint, HintUnlock, LeaderboardEntry
from challenges.play import challenge_closed_reason
from challenges.scoring import POINTS_PER_SOLVE
from challenges.selectors.levels import level_locked_reason
from core.errors import ApplicationError
from core.services import model_update
from players.services import end_user_for_account


class HintFields(TypedDict, total=False):
    order: int
    body_md: str
    cost: int


HINT_FIELDS = tuple(HintFields.__annotations__)
MAX_HINTS_PER_CHALLENGE = 20
HINT_BODY_MAX_CHARS = 20000
HINT_ORDER_MAX = 10000
# A hint costs at most what a solve is worth: a dearer one would make solving with it
# score less than not playing at all.
HINT_COST_MAX = POINTS_PER_SOLVE


def hint_errors(data: dict[str, Any]) -> dict[str, list[str]]:
    """Every problem with a hint's full set of values, keyed by field name."""
    errors: dict[str, list[str]] = {}
    body = data.get("body_md")
    if not isinstance(body, str) or not body.strip():
        errors["body_md"] = ["A hint needs a text."]
    elif len(body) > HINT_BODY_MAX_CHARS:
        errors["body_md"] = [f"At most {HINT_BODY_MAX_CHARS} characters."]
    elif "\x00" in body:
        errors["body_md"] = ["Text may not contain NUL characters."]
    for name, maximum in (("order", HINT_ORDER_MAX), ("cost", HINT_COST_MAX)):
        value = data.get(name)
        if type(value) is not int or not 0 <= value <= maximum:  # noqa: E721 - not bool
            errors[name] = [f"A whole number from 0 to {maximum}."]
    return errors


def _hint_errors_of(hint: Hint) -> dict[str, list[str]]:
    return hint_errors({name: getattr(hint, name) for name in HINT_FIELDS})


def hint_create(*, challenge: Challenge, **fields: Unpack[HintFields]) -> Hint:
    with transaction.atomic():
        # Concurrent creations queue on the challenge row, so the limit holds.
        Challenge.objects.select_for_update(no_key=True).filter(pk=challenge.pk).first()
        if Hint.objects.filter(challenge=challenge).count() >= MAX_HINTS_PER_CHALLENGE:
            raise ApplicationError(
                f"A challenge has at most {MAX_HINTS_PER_CHALLENGE} hints.", code="too_many"
            )
        if "order" not in fields:
            last = Hint.objects.filter(challenge=challenge).order_by("-order").first()
            fields["order"] = min(last.order + 1, HINT_ORDER_MAX) if last else 1
        hint = Hint(challenge=challenge)
        model_update(instance=hint, data=fields, fields=HINT_FIELDS, errors=_hint_errors_of)
        hint.save()
    return hint


def hint_update(*, hint: Hint, **fields: Unpack[HintFields]) -> Hint:
    """A price change applies to later unlocks; those made keep the cost they were made at."""
    model_update(instance=hint, data=fields, fields=HINT_FIELDS, errors=_hint_errors_of)
    hint.save()
    return hint


def hint_delete(*, hint: Hint) -> None:
    # Its unlocks go with it, and so does what they cost the players who made them.
    hint.delete()


@dataclass(frozen=True)
class HintUnlocked:
    hint: Hint
    # False when it was unlocked before (or is free): nothing was charged this time.
    created: bool


def hint_unlock(*, hint: Hint, account: AbstractBaseUser) -> HintUnlocked:
    """The player unlocks the hint, paying its cost once; asking again costs nothing.

    Refused like an attempt while the challenge is closed or locked for the player: a hint
    is worth paying for only while it can be used.
    """
    challenge = hint.challenge
    closed = challenge_closed_reason(challenge=challenge)
    if closed:
        raise ApplicationError(closed, code="challenge_closed", status=409)
    end_user = end_user_for_account(workspace=challenge.workspace, account=account)
    locked = level_locked_reason(challenge=challenge, end_user=end_user)
    if locked:
        raise ApplicationError(locked, code="level_locked", status=403)
    if hint.is_free:
        return HintUnlocked(hint=hint, created=False)
    with transaction.atomic():
        # Two clicks at once: one insert wins, the other waits for it, meets the unique
        # constraint and reads the winner's row (get_or_create's savepoint).
        _, created = HintUnlock.objects.get_or_create(
            hint=hint, end_user=end_user, defaults={"cost": hint.cost}
        )
        if created and LeaderboardEntry.objects.filter(end_user=end_user).exists():
            # The player stands on the scoreboard, whose pages refresh when a board of
            # the workspace pushes: push this one (unchanged) so they show the cost.
            leaderboard_push_on_commit(challenge_id=challenge.id)
    return HintUnlocked(hint=hint, created=created)

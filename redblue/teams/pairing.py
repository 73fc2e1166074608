"""Choosing the opponent of a new submission (the seed's selection policies).

A Red attack is tested against a defence chosen by the challenge's
`defense_selection_policy`; a Blue defence against an attack chosen by its
`attack_selection_policy`:

- `latest_best`: among the other side's active submissions (each player's current one),
  an untested one first, else the best so far (most points per pairing), newest on ties;
- `random_active`: any active one, at random;
- `round_robin`: the active one that waited longest since it was last paired;
- `request_new_if_none`: the newest active one this player has not faced yet; when there
  is none, the other side is asked for a new one and the choice falls back.

Whatever the policy, when it finds nothing the choice falls back to the other side's last
known submission; when the other side has never submitted, the submission waits and
is paired as soon as one arrives. An attacker's cooldown (`pair_cooldown_seconds`) keeps
them off a defence they hit within the window, unless that defence was replaced.
"""

import math
from dataclasses import dataclass
from datetime import datetime, timedelta

from django.db.models import Case, DecimalField, ExpressionWrapper, F, QuerySet, Value, When
from django.utils import timezone

from core.errors import ApplicationError
from redblue.models import RedBlueChallenge, SelectionPolicy, Team, TeamPairing, TeamSubmission

UNTESTED_FIRST = Value(10**9, output_field=DecimalField(max_digits=14, decimal_places=2))


@dataclass(frozen=True)
class OpponentChoice:
    opponent: TeamSubmission | None
    policy: str
    fell_back: bool = False
    requested_new: bool = False


def other_team(team: str) -> str:
    return Team.BLUE if team == Team.RED else Team.RED


def policy_for(*, challenge: RedBlueChallenge, team: str) -> str:
    """The policy that picks the opponent of a `team` submission."""
    if team == Team.RED:
        return challenge.defense_selection_policy
    return challenge.attack_selection_policy


def _cooldown_blocked(
    *, challenge: RedBlueChallenge, submission: TeamSubmission, now: datetime
) -> QuerySet:
    """Pairings that keep this attacker off a defence until their window ends."""
    if submission.team != Team.RED or not challenge.pair_cooldown_seconds:
        return TeamPairing.objects.none()
    since = now - timedelta(seconds=challenge.pair_cooldown_seconds)
    return TeamPairing.objects.filter(
        red_blue_challenge=challenge,
        attack_submission__end_user_id=submission.end_user_id,
        triggered_by=Team.RED,
        created_at__gt=since,
    )


def _by_policy(
    policy: str, pool: QuerySet, *, submission: TeamSubmission
) -> tuple[TeamSubmission | None, bool]:
    """The policy's pick from `pool` and whether the other side should be asked for more."""
    if policy == SelectionPolicy.RANDOM_ACTIVE:
        return pool.order_by("?").first(), False
    if policy == SelectionPolicy.ROUND_ROBIN:
        return pool.order_by(F("last_paired_at").asc(nulls_first=True), "created_at").first(), False
    if policy == SelectionPolicy.REQUEST_NEW_IF_NONE:
        faced_field = "defense_pairings" if submission.team == Team.RED else "attack_pairings"
        mine = (
            "attack_submission__end_user_id"
            if submission.team == Team.RED
            else "defense_submission__end_user_id"
        )
        fresh = pool.exclude(**{f"{faced_field}__{mine}": submission.end_user_id})
        pick = fresh.order_by("-created_at").first()
        return pick, pick is None
    average = ExpressionWrapper(
        F("points_total") * Value(1) / F("pairings_count"),
        output_field=DecimalField(max_digits=14, decimal_places=2),
    )
    ranked = pool.annotate(
        record=Case(When(pairings_count=0, then=UNTESTED_FIRST), default=average)
    )
    return ranked.order_by("-record", "-created_at").first(), False


def opponent_choose(
    *,
    challenge: RedBlueChallenge,
    submission: TeamSubmission,
    exclude_ids: tuple = (),
    now: datetime | None = None,
) -> OpponentChoice:
    """The opponent for `submission`, or none (it waits). Raises a 429 ApplicationError
    when every defence the attacker could hit is still in their cooldown."""
    now = now or timezone.now()
    policy = policy_for(challenge=challenge, team=submission.team)
    # A defence still being checked against the regression set, or refused by it, never
    # counts: no policy and no fallback picks it.
    others = (
        TeamSubmission.objects.filter(
            red_blue_challenge=challenge, team=other_team(submission.team)
        )
        .exclude(id__in=exclude_ids)
        .exclude(status__in=(TeamSubmission.Status.CHECKING, TeamSubmission.Status.REJECTED))
    )
    if submission.end_user_id:
        others = others.exclude(end_user_id=submission.end_user_id)
    blocked = _cooldown_blocked(challenge=challenge, submission=submission, now=now)
    allowed = others.exclude(id__in=blocked.values("defense_submission_id"))

    pick, requested_new = _by_policy(policy, allowed.filter(active=True), submission=submission)
    if pick is not None:
        return OpponentChoice(opponent=pick, policy=policy)
    fallback = allowed.order_by("-created_at").first()
    if fallback is not None:
        return OpponentChoice(
            opponent=fallback, policy=policy, fell_back=True, requested_new=requested_new
        )
    if others.exists():
        oldest = blocked.order_by("created_at").values_list("created_at", flat=True).first()
        wait = challenge.pair_cooldown_seconds
        if oldest is not None:
            ends = oldest + timedelta(seconds=challenge.pair_cooldown_seconds)
            wait = max(math.ceil((ends - now).total_seconds()), 1)
        raise ApplicationError(
            f"You attacked every defence on offer within the last "
            f"{challenge.pair_cooldown_seconds} seconds. Try again in {wait} seconds, or "
            "when a defender changes their defence.",
            code="cooldown",
            status=429,
            headers={"Retry-After": str(wait)},
        )
    return OpponentChoice(opponent=None, policy=policy, requested_new=True)

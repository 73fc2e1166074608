"""Reads for red/blue team challenges: creators' rows, public challenges, standings."""

import uuid
from decimal import Decimal
from typing import Any

from django.contrib.auth.models import AbstractBaseUser
from django.db.models import Count, Q, QuerySet, Sum
from django.urls import reverse

from core.api import valid_uuids
from notifications.subjects import EventSubject
from players.models import EndUser
from players.selectors import rows_for_creator
from redblue.models import (
    RedBlueChallenge,
    RegressionAttack,
    Team,
    TeamMembership,
    TeamPairing,
    TeamStanding,
    TeamSubmission,
)
from redblue.teams.scoring import side_ratios


def red_blue_challenges_for_creator(
    *, user: AbstractBaseUser, app_id: str | None = None, workspace_id: uuid.UUID | None = None
) -> QuerySet[RedBlueChallenge]:
    challenges = rows_for_creator(
        RedBlueChallenge.objects, user=user, workspace_id=workspace_id, app_id=app_id
    )
    return challenges.order_by("-created_at", "id")


def red_blue_subjects(challenge_ids: list[str]) -> dict[str, EventSubject]:
    """Red/blue challenges named and linked for the events about them."""
    rows = RedBlueChallenge.objects.filter(id__in=valid_uuids(challenge_ids)).values_list(
        "id", "name"
    )
    return {
        str(challenge_id): EventSubject(
            name=name, path=reverse("red-blue-page", args=[str(challenge_id)])
        )
        for challenge_id, name in rows
    }


def red_blue_challenges_public() -> QuerySet[RedBlueChallenge]:
    return RedBlueChallenge.objects.filter(is_active=True).order_by("-created_at", "id")


def red_blue_challenges_public_with_sides() -> list[dict[str, Any]]:
    """Open red/blue challenges for their list page, each with both sides' players and
    points: three queries whatever the number of challenges."""
    challenges = list(red_blue_challenges_public())
    ids = [challenge.id for challenge in challenges]
    players = {
        (row["red_blue_challenge_id"], row["team"]): row["players"]
        for row in TeamMembership.objects.filter(red_blue_challenge_id__in=ids)
        .values("red_blue_challenge_id", "team")
        .annotate(players=Count("id"))
    }
    points = {
        (row["red_blue_challenge_id"], row["team"]): row["points"]
        for row in TeamStanding.objects.filter(red_blue_challenge_id__in=ids)
        .values("red_blue_challenge_id", "team")
        .annotate(points=Sum("points"))
    }
    return [
        {
            "challenge": challenge,
            "sides": [
                {
                    "team": str(team),
                    "players": players.get((challenge.id, team), 0),
                    "points": _number(points.get((challenge.id, team))),
                }
                for team in (Team.RED, Team.BLUE)
            ],
        }
        for challenge in challenges
    ]


def red_blue_challenge_by_id(*, challenge_id: Any) -> RedBlueChallenge | None:
    try:
        return RedBlueChallenge.objects.filter(id=uuid.UUID(str(challenge_id))).first()
    except ValueError:
        return None


def red_blue_challenge_visible_by_id(*, challenge_id: Any) -> RedBlueChallenge | None:
    challenge = red_blue_challenge_by_id(challenge_id=challenge_id)
    return challenge if challenge is not None and challenge.is_active else None


def pairings_for_creator(
    *, challenge: RedBlueChallenge, status: str | None = None
) -> QuerySet[TeamPairing]:
    pairings = TeamPairing.objects.filter(red_blue_challenge=challenge).select_related(
        "attack_submission__end_user", "defense_submission__end_user"
    )
    if status:
        pairings = pairings.filter(status=status)
    return pairings.order_by("-created_at", "id")


def red_blue_challenge_published(*, challenge_id: Any) -> RedBlueChallenge | None:
    """An ended challenge whose creator published its transcripts."""
    challenge = red_blue_challenge_by_id(challenge_id=challenge_id)
    if challenge is None or challenge.is_active or not challenge.transcripts_published:
        return None
    return challenge


def pairings_published(*, challenge: RedBlueChallenge) -> QuerySet[TeamPairing]:
    return pairings_for_creator(challenge=challenge, status=TeamPairing.Status.COMPLETED)


ATTACK, DEFENSE = "attack_submission", "defense_submission"


def pairing_texts_readable(*, pairing: TeamPairing, end_user_id: Any) -> set[str]:
    """Whose prompts in `pairing` a player may read (SPEC §4): their own; a defender also
    the attacks made on their defence; an attacker never the defence. The reply goes to
    both, and everything to the creator (console) and, once published, to anyone."""
    attack, defense = pairing.attack_submission, pairing.defense_submission
    readable = set()
    if attack is not None and attack.end_user_id == end_user_id:
        readable.add(ATTACK)
    if defense is not None and defense.end_user_id == end_user_id:
        readable |= {ATTACK, DEFENSE}
    return readable


def pairings_of_player(
    *, challenge: RedBlueChallenge, end_user: EndUser, limit: int = 20
) -> list[TeamPairing]:
    return list(
        TeamPairing.objects.filter(red_blue_challenge=challenge)
        .filter(Q(attack_submission__end_user=end_user) | Q(defense_submission__end_user=end_user))
        .select_related("attack_submission__end_user", "defense_submission__end_user")
        .order_by("-created_at", "id")[:limit]
    )


def submission_of_player(
    *, challenge: RedBlueChallenge, end_user: EndUser | None, submission_id: Any
) -> TeamSubmission | None:
    """One of the player's own submissions (None for another's, or a malformed id)."""
    if end_user is None:
        return None
    try:
        submission_uuid = uuid.UUID(str(submission_id))
    except ValueError:
        return None
    return TeamSubmission.objects.filter(
        id=submission_uuid, red_blue_challenge=challenge, end_user=end_user
    ).first()


def pairings_of_submission(*, submission: TeamSubmission) -> list[TeamPairing]:
    return list(
        TeamPairing.objects.filter(
            Q(attack_submission=submission) | Q(defense_submission=submission)
        )
        .select_related("attack_submission__end_user", "defense_submission__end_user")
        .order_by("created_at")
    )


def regression_set_for_creator(*, challenge: RedBlueChallenge) -> QuerySet[RegressionAttack]:
    return (
        RegressionAttack.objects.filter(red_blue_challenge=challenge)
        .select_related("attack_submission__end_user")
        .order_by("created_at", "id")
    )


def team_of_player(*, challenge: RedBlueChallenge, end_user: EndUser | None) -> str | None:
    if end_user is None:
        return None
    return (
        TeamMembership.objects.filter(red_blue_challenge=challenge, end_user=end_user)
        .values_list("team", flat=True)
        .first()
    )


def _number(value: Decimal | None) -> float:
    return float(value or 0)


def standings_for_challenge(*, challenge: RedBlueChallenge, limit: int = 10) -> dict[str, Any]:
    """Red against Blue: each side's points, ratio, players and top scorers.

    The side totals are one aggregate over the per-player standings (kept by
    single-statement increments), never a scan of the pairings.
    """
    totals = {
        row["team"]: row
        for row in TeamStanding.objects.filter(red_blue_challenge=challenge)
        .values("team")
        .annotate(points=Sum("points"), pairings=Sum("pairings"), players=Count("id"))
    }
    members = dict(
        TeamMembership.objects.filter(red_blue_challenge=challenge)
        .values("team")
        .annotate(players=Count("id"))
        .values_list("team", "players")
    )
    red_points = totals.get(Team.RED, {}).get("points") or Decimal(0)
    blue_points = totals.get(Team.BLUE, {}).get("points") or Decimal(0)
    red_ratio, blue_ratio = side_ratios(red=red_points, blue=blue_points)
    top = (
        TeamStanding.objects.filter(red_blue_challenge=challenge)
        .select_related("end_user")
        .order_by("-points", "updated_at", "id")
    )
    sides: dict[str, Any] = {}
    for team, points, ratio in (
        (Team.RED, red_points, red_ratio),
        (Team.BLUE, blue_points, blue_ratio),
    ):
        sides[str(team)] = {
            "points": _number(points),
            "ratio": ratio,
            "players": members.get(team, 0),
            "top": [
                {
                    "rank": rank,
                    "player": standing.end_user.public_name,
                    "end_user_id": str(standing.end_user_id),
                    "points": _number(standing.points),
                    "pairings": standing.pairings,
                }
                for rank, standing in enumerate(top.filter(team=team)[:limit], start=1)
            ],
        }
    return {
        "type": "red_blue_standings",
        "red_blue_challenge_id": str(challenge.id),
        "scoring_strategy": challenge.scoring_strategy,
        "pairings_completed": int(totals.get(Team.RED, {}).get("pairings") or 0),
        "red": sides["red"],
        "blue": sides["blue"],
    }


def pairing_public(pairing: TeamPairing) -> dict[str, Any]:
    """What a live frame says about a pairing: no prompts and no reply, only outcomes."""
    attack, defense = pairing.attack_submission, pairing.defense_submission
    return {
        "pairing_id": str(pairing.id),
        "status": pairing.status,
        "attack_submission_id": str(attack.id) if attack else None,
        "defense_submission_id": str(defense.id) if defense else None,
        "attacker_id": str(attack.end_user_id) if attack and attack.end_user_id else None,
        "defender_id": str(defense.end_user_id) if defense and defense.end_user_id else None,
        "attacker": attack.end_user.public_name if attack and attack.end_user else None,
        "defender": defense.end_user.public_name if defense and defense.end_user else None,
        "categories": pairing.categories,
        "judge_rating": pairing.judge_rating,
        "judge_feedback": pairing.judge_feedback,
        "red_points": _number(pairing.red_points),
        "blue_points": _number(pairing.blue_points),
        "created_at": pairing.created_at.isoformat() if pairing.created_at else None,
    }


def pairings_with_sides(*, pairing_ids: list[Any]) -> list[TeamPairing]:
    return list(
        TeamPairing.objects.filter(pk__in=list(pairing_ids))
        .select_related(
            "red_blue_challenge", "attack_submission__end_user", "defense_submission__end_user"
        )
        .order_by("created_at", "id")
    )


def regression_set_exists(*, challenge: RedBlueChallenge) -> bool:
    return RegressionAttack.objects.filter(red_blue_challenge=challenge).exists()

import uuid
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from django.conf import settings
from django.contrib.auth.models import AbstractBaseUser
from django.db.models import Q, QuerySet

from challenges.models import Challenge, ChallengeAttempt, LeaderboardEntry, Secret
from players.models import EndUser
from players.selectors import workspaces_for_user


@dataclass(frozen=True)
class LeaderboardRow:
    rank: int
    player: str
    end_user_id: str
    score: float | None
    judge_rating: int | None
    tokens_total: int | None
    elapsed_ms: int | None
    achieved_at: datetime
    attempt_id: str


def leaderboard_for_challenge(*, challenge: Challenge, limit: int) -> list[LeaderboardRow]:
    """The top `limit` players: one index range scan joined to the player's name."""
    entries = (
        LeaderboardEntry.objects.filter(challenge=challenge)
        .order_by("rank_value", "achieved_at", "id")
        .select_related("end_user")
        .only(
            "rank_value",
            "achieved_at",
            "score",
            "judge_rating",
            "tokens_total",
            "elapsed_ms",
            "attempt_id",
            "end_user__display_name",
            "end_user__external_id",
        )[:limit]
    )
    return [
        LeaderboardRow(
            rank=position,
            player=entry.end_user.public_name,
            end_user_id=str(entry.end_user_id),
            score=entry.score,
            judge_rating=entry.judge_rating,
            tokens_total=entry.tokens_total,
            elapsed_ms=entry.elapsed_ms,
            achieved_at=entry.achieved_at,
            attempt_id=str(entry.attempt_id),
        )
        for position, entry in enumerate(entries, start=1)
    ]


def leaderboard_standings(*, challenge: Challenge) -> dict[str, Any]:
    """The live board's frame: the shown rows of the standings, ready to send as JSON."""
    rows = leaderboard_for_challenge(challenge=challenge, limit=settings.LEADERBOARD_DEFAULT_LIMIT)
    return {
        "type": "leaderboard",
        "challenge_id": str(challenge.id),
        "scoring_strategy": challenge.scoring_strategy,
        "entries": [
            {
                "rank": row.rank,
                "player": row.player,
                "end_user_id": row.end_user_id,
                "score": row.score,
                "judge_rating": row.judge_rating,
                "tokens_total": row.tokens_total,
                "elapsed_ms": row.elapsed_ms,
                "achieved_at": row.achieved_at.isoformat(),
            }
            for row in rows
        ],
    }


def leaderboard_rank(*, challenge: Challenge, end_user: EndUser) -> int | None:
    entry = (
        LeaderboardEntry.objects.filter(challenge=challenge, end_user=end_user)
        .values("rank_value", "achieved_at", "id")
        .first()
    )
    if entry is None:
        return None
    ahead = LeaderboardEntry.objects.filter(challenge=challenge).filter(
        Q(rank_value__lt=entry["rank_value"])
        | Q(rank_value=entry["rank_value"], achieved_at__lt=entry["achieved_at"])
        | Q(rank_value=entry["rank_value"], achieved_at=entry["achieved_at"], id__lt=entry["id"])
    )
    return ahead.count() + 1


def challenge_by_id(*, challenge_id: Any) -> Challenge | None:
    return Challenge.objects.filter(id=challenge_id).first()


def challenge_visible_by_id(*, challenge_id: str) -> Challenge | None:
    """An active challenge by its id as text; None for a malformed or unknown id."""
    try:
        challenge_uuid = uuid.UUID(str(challenge_id))
    except ValueError:
        return None
    return Challenge.objects.filter(id=challenge_uuid, is_active=True).first()


def challenges_public() -> QuerySet[Challenge]:
    return Challenge.objects.active().select_related("workspace").order_by("-created_at", "id")


def challenges_for_creator(*, user: AbstractBaseUser) -> QuerySet[Challenge]:
    return Challenge.objects.filter(workspace__in=workspaces_for_user(user=user)).order_by(
        "-created_at", "id"
    )


def secrets_for_creator(*, user: AbstractBaseUser) -> QuerySet[Secret]:
    return Secret.objects.filter(workspace__in=workspaces_for_user(user=user)).order_by(
        "name", "id"
    )


def attempts_for_challenge(
    *,
    challenge: Challenge,
    succeeded: bool | None = None,
    source: str | None = None,
    end_user_id: str | None = None,
    since: datetime | None = None,
    until: datetime | None = None,
) -> QuerySet[ChallengeAttempt]:
    attempts = ChallengeAttempt.objects.filter(challenge=challenge).select_related("end_user")
    if succeeded is not None:
        attempts = attempts.filter(succeeded=succeeded)
    if source:
        attempts = attempts.filter(source=source)
    if end_user_id:
        attempts = attempts.filter(end_user_id=end_user_id)
    if since:
        attempts = attempts.filter(created_at__gte=since)
    if until:
        attempts = attempts.filter(created_at__lt=until)
    return attempts.order_by("-created_at", "id")

"""Attempts as creators filter and export them and as a player sees their own."""

from datetime import datetime

from django.db.models import QuerySet

from challenges.models import Challenge, ChallengeAttempt
from players.models import EndUser


def attempts_for_challenge(
    *,
    challenge: Challenge,
    succeeded: bool | None = None,
    near_copy: bool | None = None,
    source: str | None = None,
    end_user_id: str | None = None,
    since: datetime | None = None,
    until: datetime | None = None,
) -> QuerySet[ChallengeAttempt]:
    attempts = ChallengeAttempt.objects.filter(challenge=challenge).select_related("end_user")
    if succeeded is not None:
        attempts = attempts.filter(succeeded=succeeded)
    if near_copy is not None:
        attempts = attempts.filter(near_copy_of__isnull=not near_copy)
    if source:
        attempts = attempts.filter(source=source)
    if end_user_id:
        attempts = attempts.filter(end_user_id=end_user_id)
    if since:
        attempts = attempts.filter(created_at__gte=since)
    if until:
        attempts = attempts.filter(created_at__lt=until)
    return attempts.order_by("-created_at", "id")


def attempts_of_player_queryset(
    *, challenge: Challenge, end_user: EndUser | None
) -> QuerySet[ChallengeAttempt]:
    """Every attempt of one player at the challenge, newest first (none without a player)."""
    if end_user is None:
        return ChallengeAttempt.objects.none()
    return (
        ChallengeAttempt.objects.filter(challenge=challenge, end_user=end_user)
        .select_related("own_text")
        .prefetch_related("reviews")
        .order_by("-created_at", "id")
    )


def attempts_of_player(
    *, challenge: Challenge, end_user: EndUser, limit: int
) -> list[ChallengeAttempt]:
    """The player's latest attempts at the challenge, newest first: their numbers, and their
    prompt and reply (on the attempt for wins and kept failures, else the player's own copy).
    Stored text is masked, so nothing here leaks a secret."""
    return list(
        ChallengeAttempt.objects.filter(challenge=challenge, end_user=end_user)
        .select_related("own_text")
        .prefetch_related("reviews")
        .only(
            "succeeded",
            "under_review",
            "score",
            "judge_rating",
            "tokens_total",
            "elapsed_ms",
            "created_at",
            "prompt",
            "prompt_length",
            "response",
            "response_length",
            "config_sha256",
            "own_text__prompt",
            "own_text__response",
        )
        .order_by("-created_at")[:limit]
    )

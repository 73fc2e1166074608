"""What a challenge's exports read (docs/exports.md): its winning attacks, and the attempts
of the players who agreed to share theirs."""

from collections.abc import Iterator

from django.db.models import QuerySet

from challenges.models import AttemptOwnText, Challenge, ChallengeAttempt


def winning_attempts(*, challenge: Challenge) -> QuerySet[ChallengeAttempt]:
    """Wins with their stored (masked) prompt, oldest first; none under review."""
    return (
        ChallengeAttempt.objects.filter(challenge=challenge, succeeded=True, under_review=False)
        .exclude(prompt="")
        .select_related("end_user")
        .order_by("created_at", "id")
    )


def shared_attempts(*, challenge: Challenge) -> QuerySet[ChallengeAttempt]:
    """Every attempt of a player whose account agreed to share them (`share_attempts`)."""
    return (
        ChallengeAttempt.objects.filter(
            challenge=challenge, end_user__account__player_profile__share_attempts=True
        )
        .select_related("end_user")
        .order_by("created_at", "id")
    )


def own_texts(*, attempt_ids: list) -> dict:
    """A failed attempt's masked text kept for its player (`AttemptOwnText`), by attempt id."""
    rows = AttemptOwnText.objects.filter(attempt_id__in=attempt_ids).values_list(
        "attempt_id", "prompt", "response"
    )
    return {attempt_id: (prompt, response) for attempt_id, prompt, response in rows}


def in_chunks(attempts: QuerySet[ChallengeAttempt], size: int = 500) -> Iterator[list]:
    chunk: list[ChallengeAttempt] = []
    for attempt in attempts.iterator(chunk_size=size):
        chunk.append(attempt)
        if len(chunk) == size:
            yield chunk
            chunk = []
    if chunk:
        yield chunk

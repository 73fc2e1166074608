"""Near-copies of winning prompts (SPEC §10 Copies): the check a win passes before it is
written, and the normalised prompts it compares against.

A win's prompt is compared with the winning prompts of the other players on the same
challenge by pg_trgm's trigram similarity, one indexed query on PostgreSQL (Python's
copy of the same similarity on the embedded SQLite default, challenges/copies.py). The
challenge's `copy_policy` says what a near-copy does: nothing (`off`), a win recorded
with `near_copy_of` (`flag`), or a 409 `near_copy` with nothing recorded (`refuse`).
"""

import uuid
from dataclasses import dataclass

from django.db import connection

from challenges.copies import copy_text, is_near_copy, trigram_similarity
from challenges.models import Challenge, ChallengeAttempt, WinningPrompt
from core.errors import ApplicationError

NEAR_COPY_MESSAGE = "This prompt is too close to an earlier winning one."


@dataclass(frozen=True)
class NearCopy:
    attempt_id: uuid.UUID
    similarity: float


def near_copy_find(
    *, challenge_id: uuid.UUID, end_user_id: uuid.UUID, text: str, threshold: float
) -> NearCopy | None:
    """The other player's winning prompt on the challenge most similar to `text` (already
    `copy_text`), when it is at least `threshold` similar; the earliest of equals."""
    if not text:
        return None
    if connection.vendor != "postgresql":
        return _near_copy_find_in_python(
            challenge_id=challenge_id, end_user_id=end_user_id, text=text, threshold=threshold
        )
    prompts = WinningPrompt._meta.db_table
    attempts = ChallengeAttempt._meta.db_table
    with connection.cursor() as cursor:
        # `%` is the operator the trigram index answers; it compares with this setting,
        # which PostgreSQL keeps as a double, so it is set a hair lower and the exact
        # comparison, in `real` as similarity() returns, is the one after it.
        cursor.execute(
            "SELECT set_config('pg_trgm.similarity_threshold', %s, true)",
            [repr(max(threshold - 1e-6, 0.0))],
        )
        # Only our own table names are interpolated; values go as parameters.
        cursor.execute(
            "SELECT prompt.attempt_id, similarity(prompt.text, %s) AS score "  # noqa: S608
            f"FROM {prompts} AS prompt JOIN {attempts} AS attempt "
            "ON attempt.id = prompt.attempt_id AND attempt.succeeded "
            "WHERE prompt.challenge_id = %s AND prompt.end_user_id <> %s "
            "AND prompt.text %% %s AND similarity(prompt.text, %s) >= %s::real "
            "ORDER BY score DESC, prompt.created_at, prompt.attempt_id LIMIT 1",
            [text, challenge_id, end_user_id, text, text, threshold],
        )
        row = cursor.fetchone()
    return NearCopy(attempt_id=row[0], similarity=float(row[1])) if row else None


def _near_copy_find_in_python(
    *, challenge_id: uuid.UUID, end_user_id: uuid.UUID, text: str, threshold: float
) -> NearCopy | None:
    rows = (
        WinningPrompt.objects.filter(challenge_id=challenge_id, attempt__succeeded=True)
        .exclude(end_user_id=end_user_id)
        .order_by("created_at", "attempt_id")
        .values_list("attempt_id", "text")
    )
    best: NearCopy | None = None
    for attempt_id, other in rows.iterator(chunk_size=2000):
        similarity = trigram_similarity(text, other)
        if is_near_copy(similarity, threshold) and (best is None or similarity > best.similarity):
            best = NearCopy(attempt_id=attempt_id, similarity=similarity)
    return best


def _copy_policy(challenge_id: uuid.UUID, *, lock: bool) -> tuple[str, float] | None:
    challenges = Challenge.objects.filter(pk=challenge_id)
    if lock:
        challenges = challenges.select_for_update(no_key=True)
    return challenges.values_list("copy_policy", "copy_threshold").first()


def near_copy_check(*, attempt: ChallengeAttempt) -> None:
    """For a win about to be saved, in its transaction: refuse it when it is a near-copy
    and the challenge refuses them, or note what it copies when the challenge flags them.

    The policy is read from the row, not the caller's copy of the challenge, which may be
    older than the model call. On PostgreSQL the challenge's row stays locked (FOR NO KEY
    UPDATE, which attempts' inserts do not wait for) until the win commits, so two
    near-identical wins at once are checked one after the other: the second sees the first.
    """
    text = copy_text(attempt.prompt)
    if not text:
        # A right guess (guess mode) has no prompt: every right guess is the secret.
        return
    policy = _copy_policy(attempt.challenge_id, lock=False)
    if policy is None or policy[0] == Challenge.CopyPolicy.OFF:
        return
    copy_policy, threshold = _copy_policy(attempt.challenge_id, lock=True)
    if copy_policy == Challenge.CopyPolicy.OFF:
        return
    found = near_copy_find(
        challenge_id=attempt.challenge_id,
        end_user_id=attempt.end_user_id,
        text=text,
        threshold=threshold,
    )
    if found is None:
        return
    if copy_policy == Challenge.CopyPolicy.REFUSE:
        raise ApplicationError(NEAR_COPY_MESSAGE, code="near_copy", status=409)
    attempt.near_copy_of_id = found.attempt_id
    attempt.near_copy_similarity = found.similarity


def winning_prompt_remember(*, attempt: ChallengeAttempt) -> None:
    """Keep a saved win's prompt for later wins to be compared with (in its transaction)."""
    text = copy_text(attempt.prompt)
    if text:
        WinningPrompt.objects.create(
            attempt=attempt,
            challenge_id=attempt.challenge_id,
            end_user_id=attempt.end_user_id,
            text=text,
            created_at=attempt.created_at,
        )


def winning_prompts_fill(*, challenge: Challenge) -> int:
    """Add the wins that have no normalised prompt yet — the bridge lane's, recorded while
    the challenge checked no copies (the lane hands challenges that check them to the
    full path) — so that turning the check on compares with every earlier win."""
    missing = (
        ChallengeAttempt.objects.filter(challenge=challenge, succeeded=True)
        .exclude(prompt="")
        .exclude(id__in=WinningPrompt.objects.filter(challenge=challenge).values("attempt_id"))
        .values_list("id", "end_user_id", "prompt", "created_at")
    )
    rows = [
        WinningPrompt(
            attempt_id=attempt_id,
            challenge_id=challenge.id,
            end_user_id=end_user_id,
            text=copy_text(prompt),
            created_at=created_at,
        )
        for attempt_id, end_user_id, prompt, created_at in missing.iterator(chunk_size=2000)
    ]
    WinningPrompt.objects.bulk_create(
        [row for row in rows if row.text], batch_size=2000, ignore_conflicts=True
    )
    return len(rows)

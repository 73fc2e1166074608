"""Recording attempts and keeping each player's leaderboard entry current."""

import hashlib
from typing import Any

from django.conf import settings
from django.db import IntegrityError, connection, transaction

from challenges.live import (
    attempt_events_emit,
    board_head,
    collection_boards_push_on_commit,
    leaderboard_push_on_commit,
    target_first_blood_emit,
)
from challenges.models import (
    AttemptOwnText,
    Challenge,
    ChallengeAttempt,
    LeaderboardEntry,
    Proof,
    Review,
    WinningPrompt,
)
from challenges.proofs import challenge_config_sha256
from challenges.scoring import Standing, standing_for
from challenges.services.budgets import JudgeUse, Meter, judge_use_priced, spend_settle
from challenges.services.copies import near_copy_check, winning_prompt_remember
from challenges.services.proofs import proof_issue, proof_key_current
from challenges.services.secrets import secret_value_for
from core.errors import ApplicationError
from core.outages import retry_if_connection_was_dead
from core.redaction import redact_secrets, redact_secrets_in_json
from judging.verdicts import Verdict
from players.models import EndUser


def _fingerprint(text: str) -> str:
    return hashlib.sha256(text.encode()).hexdigest() if text else ""


def attempt_build(
    *,
    challenge: Challenge,
    end_user: EndUser,
    verdict: Verdict,
    prompt: str = "",
    response: str = "",
    tokens_total: int | None = None,
    elapsed_ms: int | None = None,
    source: str = ChallengeAttempt.Source.WEB,
    idempotency_key: str | None = None,
    workflow_run_id: str = "",
    custom_score: float | None = None,
    secret: str | None = None,
    disclosed_secret: bool = False,
    cost=None,
    codename: str = "",
    judge_use: JudgeUse | None = None,
) -> tuple[ChallengeAttempt, Standing]:
    """The unsaved attempt, secrets redacted, and its standing under the strategy."""
    if end_user.workspace_id != challenge.workspace_id:
        raise ApplicationError("The player does not belong to this challenge's workspace.")
    standing = standing_for(
        challenge.scoring_strategy,
        elapsed_ms=elapsed_ms,
        tokens_total=tokens_total,
        judge_rating=verdict.rating,
        custom_score=custom_score,
    )
    attempt = ChallengeAttempt(
        workspace_id=challenge.workspace_id,
        challenge=challenge,
        end_user=end_user,
        account_id=end_user.account_id,
        workflow_run_id=workflow_run_id,
        succeeded=verdict.passed,
        score=standing.score if verdict.passed else None,
        rank_value=standing.rank_value if verdict.passed else None,
        judge_rating=verdict.rating,
        judge_feedback=redact_secrets(verdict.feedback, [secret]),
        judge_output_raw=redact_secrets_in_json(verdict.raw, [secret]),
        judges=redact_secrets_in_json(list(verdict.judges), [secret]) if verdict.judges else None,
        under_review=verdict.under_review,
        tokens_total=tokens_total,
        cost=cost,
        judge_tokens=judge_use.tokens if judge_use else None,
        judge_cost=judge_use.cost if judge_use else None,
        elapsed_ms=elapsed_ms,
        prompt_sha256=_fingerprint(prompt),
        prompt_length=len(prompt),
        response_sha256=_fingerprint(response),
        response_length=len(response),
        source=source,
        codename=codename,
        disclosed_secret=disclosed_secret,
        idempotency_key=idempotency_key or None,
        # Fixed now, with the configuration the attempt was judged under: a creator's edit
        # during the model call, or after, does not change what the win's proof names.
        config_sha256=(
            challenge_config_sha256(challenge) if verdict.passed or verdict.under_review else ""
        ),
    )
    # A person deciding an attempt under review reads what was sent and answered.
    if verdict.passed or verdict.under_review or challenge.keep_failed_prompts:
        attempt.prompt = redact_secrets(prompt, [secret])
        attempt.response = redact_secrets(response, [secret])
    return attempt, standing


def own_text_kept(
    *, attempt: ChallengeAttempt, own_text: tuple[str, str] | None, secret: str | None
) -> tuple[str, str] | None:
    """The player's masked copy of (prompt or guess, reply), kept for their own history
    when the attempt row keeps no text; None when there is nothing to keep."""
    if not own_text or not any(own_text) or attempt.prompt:
        return None
    return redact_secrets(own_text[0], [secret]), redact_secrets(own_text[1], [secret])


@retry_if_connection_was_dead
def attempt_record(
    *,
    challenge: Challenge,
    end_user: EndUser,
    verdict: Verdict,
    prompt: str = "",
    response: str = "",
    tokens_total: int | None = None,
    elapsed_ms: int | None = None,
    source: str = ChallengeAttempt.Source.WEB,
    idempotency_key: str | None = None,
    workflow_run_id: str = "",
    custom_score: float | None = None,
    disclosed_secret: bool = False,
    own_text: tuple[str, str] | None = None,
    cost=None,
    meter: Meter | None = None,
    codename: str = "",
) -> ChallengeAttempt:
    """Write the attempt and keep the player's leaderboard entry current, atomically.

    `own_text` (prompt or guess, reply) is kept, masked, for the player's own history when
    the attempt row does not keep its text. With an idempotency key already used in the
    workspace, the first attempt is returned and nothing is written. A win that is a
    near-copy of another player's earlier one is refused (409 `near_copy`, nothing
    written) or flagged, as the challenge's `copy_policy` says (SPEC §10). With a `meter`,
    the attempt's tokens and `cost`, and its judges', are counted as spent in the same
    transaction.
    """
    secret = secret_value_for(challenge=challenge, end_user=end_user)
    verdict, judge_use = judge_use_priced(verdict=verdict, workspace_id=challenge.workspace_id)
    attempt, standing = attempt_build(
        challenge=challenge,
        end_user=end_user,
        verdict=verdict,
        prompt=prompt,
        response=response,
        tokens_total=tokens_total,
        elapsed_ms=elapsed_ms,
        source=source,
        idempotency_key=idempotency_key,
        workflow_run_id=workflow_run_id,
        custom_score=custom_score,
        secret=secret,
        disclosed_secret=disclosed_secret,
        cost=cost,
        codename=codename,
        judge_use=judge_use,
    )
    # Made (the first time) outside the attempt's transaction, so that a race for a
    # workspace's first key never rolls an attempt back.
    proof_key = proof_key_current(workspace_id=challenge.workspace_id) if verdict.passed else None
    try:
        with transaction.atomic():
            if verdict.passed:
                # First: a refused near-copy leaves no attempt, board change, event or proof.
                near_copy_check(attempt=attempt)
            attempt.save(force_insert=True)
            kept = own_text_kept(attempt=attempt, own_text=own_text, secret=secret)
            if kept is not None:
                AttemptOwnText.objects.create(attempt=attempt, prompt=kept[0], response=kept[1])
            if verdict.under_review:
                Review.objects.create(
                    workspace_id=challenge.workspace_id,
                    challenge=challenge,
                    attempt=attempt,
                    kind=Review.Kind.PANEL,
                )
            if verdict.passed:
                _win_publish(
                    challenge=challenge,
                    attempt=attempt,
                    rank_value=standing.rank_value,
                    proof_key=proof_key,
                )
            if meter is not None:
                # Last: the spend rows are the hottest in a workspace; held until commit.
                spend_settle(meter=meter, tokens=tokens_total, cost=cost, judge=judge_use)
    except IntegrityError:
        # The unique idempotency key is the guard: a repeat returns the first attempt.
        existing = idempotency_key and (
            ChallengeAttempt.objects.filter(
                workspace_id=challenge.workspace_id, idempotency_key=idempotency_key
            ).first()
        )
        if not existing:
            raise
        return existing
    return attempt


def _win_publish(
    *, challenge: Challenge, attempt: ChallengeAttempt, rank_value: float, proof_key
) -> None:
    """A saved win, in its transaction: remembered for the copy check, proven, offered to
    the board, and announced (first blood, record beaten) when the board changed."""
    winning_prompt_remember(attempt=attempt)
    if proof_key is not None:
        proof_issue(attempt=attempt, key=proof_key)
    previous_head = board_head(challenge_id=challenge.id)
    board_changed = _leaderboard_offer(attempt, rank_value=rank_value)
    if board_changed:
        attempt_events_emit(challenge=challenge, attempt=attempt, previous_head=previous_head)
        collection_boards_push_on_commit(challenge_id=challenge.id)
    # Several targets: first blood per target; a player's first win on a target changes
    # the targets they broke, which the combined board shows.
    new_target_broken = target_first_blood_emit(challenge=challenge, attempt=attempt)
    if (board_changed and _within_visible_board(attempt, rank_value=rank_value)) or (
        new_target_broken
    ):
        leaderboard_push_on_commit(challenge_id=challenge.id)


def attempt_win_grant(*, attempt: ChallengeAttempt, proof_key) -> None:
    """Make a recorded, not passing attempt a win, as a live win is made (a review passed
    it). Call in a transaction holding the attempt's row, with the workspace's proof key
    fetched before it (`proof_key_current`); a near-copy the challenge refuses raises 409
    `near_copy` and changes nothing."""
    challenge = attempt.challenge
    standing = standing_for(
        challenge.scoring_strategy,
        elapsed_ms=attempt.elapsed_ms,
        tokens_total=attempt.tokens_total,
        judge_rating=attempt.judge_rating,
        custom_score=None,
    )
    attempt.succeeded = True
    attempt.score = standing.score
    attempt.rank_value = standing.rank_value
    if not attempt.config_sha256:
        # An appealed attempt was not judged a win: its proof names the configuration as
        # it is when the win is granted.
        attempt.config_sha256 = challenge_config_sha256(challenge)
    if not attempt.prompt:
        own = AttemptOwnText.objects.filter(attempt=attempt).first()
        if own is not None:
            attempt.prompt, attempt.response = own.prompt, own.response
    near_copy_check(attempt=attempt)
    attempt.save(
        update_fields=[
            "succeeded",
            "score",
            "rank_value",
            "config_sha256",
            "prompt",
            "response",
            "near_copy_of",
            "near_copy_similarity",
        ]
    )
    _win_publish(
        challenge=challenge,
        attempt=attempt,
        rank_value=standing.rank_value,
        proof_key=proof_key,
    )


def attempt_win_withdraw(*, attempt: ChallengeAttempt) -> None:
    """Take a win back (a review failed it), in a transaction holding the attempt's row:
    off the copy check, its proof withdrawn (the row deleted: the public proof answers
    404), and the player's board entry recomputed from their remaining wins."""
    challenge_id = attempt.challenge_id
    attempt.succeeded = False
    attempt.score = None
    attempt.rank_value = None
    attempt.save(update_fields=["succeeded", "score", "rank_value"])
    WinningPrompt.objects.filter(attempt=attempt).delete()
    Proof.objects.filter(attempt=attempt).delete()
    removed, _ = LeaderboardEntry.objects.filter(
        challenge_id=challenge_id, end_user_id=attempt.end_user_id, attempt=attempt
    ).delete()
    if not removed:
        return
    remaining = ChallengeAttempt.objects.filter(
        challenge_id=challenge_id, end_user_id=attempt.end_user_id, succeeded=True
    )
    best = remaining.order_by("rank_value", "created_at", "id").first()
    if best is not None:
        LeaderboardEntry.objects.create(
            challenge_id=challenge_id,
            end_user_id=attempt.end_user_id,
            attempt=best,
            rank_value=best.rank_value,
            achieved_at=best.created_at,
            score=best.score,
            judge_rating=best.judge_rating,
            tokens_total=best.tokens_total,
            elapsed_ms=best.elapsed_ms,
            first_succeeded_at=remaining.order_by("created_at").values_list(
                "created_at", flat=True
            )[0],
        )
    collection_boards_push_on_commit(challenge_id=challenge_id)
    leaderboard_push_on_commit(challenge_id=challenge_id)


LEADERBOARD_UPSERT_COLUMNS = (
    "challenge_id",
    "end_user_id",
    "attempt_id",
    "rank_value",
    "achieved_at",
    "score",
    "judge_rating",
    "tokens_total",
    "elapsed_ms",
    "first_succeeded_at",
)
_REPLACED_ON_IMPROVEMENT = LEADERBOARD_UPSERT_COLUMNS[2:-1]


def board_improves_sql(*, new: str, new_at: str, entry: str) -> str:
    """SQL: the row `new` (its `rank_value`, achieved at `new_at`) ranks better than the
    board entry `entry` — a lower rank value, or the same one reached earlier."""
    return (
        f"({new}.rank_value < {entry}.rank_value OR "
        f"({new}.rank_value = {entry}.rank_value AND {new_at} < {entry}.achieved_at))"
    )


# The board's order, best first (challenges/selectors/leaderboards.py shows it so).
BOARD_ORDER = ("rank_value", "achieved_at", "id")


def board_last_shown_offset() -> int:
    return settings.LEADERBOARD_DEFAULT_LIMIT - 1


def board_last_shown_sql(*, challenge: str, offset: str = "%s") -> str:
    """SQL: (rank_value, achieved_at) of the last row a live board of `challenge` shows
    (no row while the board shows fewer), `offset` standing for `board_last_shown_offset()`."""
    table = LeaderboardEntry._meta.db_table
    order = ", ".join(f"shown.{name}" for name in BOARD_ORDER)
    return (
        f"SELECT shown.rank_value, shown.achieved_at FROM {table} shown "  # noqa: S608
        f"WHERE shown.challenge_id = {challenge} ORDER BY {order} OFFSET {offset} LIMIT 1"
    )


def leaderboard_upsert_sql(rows: str | None = None) -> str:
    """INSERT the entry `rows` gives (default: one VALUES row of parameters), replacing the
    player's entry only when it ranks better; RETURNING a row only when the entry changed."""
    table = LeaderboardEntry._meta.db_table
    columns = ", ".join(LEADERBOARD_UPSERT_COLUMNS)
    if rows is None:
        rows = "VALUES (" + ", ".join(["%s"] * len(LEADERBOARD_UPSERT_COLUMNS)) + ")"
    updates = ", ".join(f"{name} = excluded.{name}" for name in _REPLACED_ON_IMPROVEMENT)
    improves = board_improves_sql(new="excluded", new_at="excluded.achieved_at", entry="entry")
    # Only our own table and column names are interpolated; values go as parameters.
    return (
        f"INSERT INTO {table} AS entry ({columns}) {rows} "  # noqa: S608
        "ON CONFLICT (challenge_id, end_user_id) DO UPDATE SET "
        f"{updates} "
        f"WHERE {improves} "
        "RETURNING id"
    )


def _leaderboard_offer(attempt: ChallengeAttempt, *, rank_value: float) -> bool:
    """Make `attempt` the player's entry if it beats the one there (or there is none).

    One INSERT … ON CONFLICT DO UPDATE … WHERE better: atomic in the database, so
    concurrent attempts by the same player cannot lose the better one. Returns whether
    the entry changed.
    """
    values = {
        "challenge_id": attempt.challenge_id,
        "end_user_id": attempt.end_user_id,
        "attempt_id": attempt.id,
        "rank_value": rank_value,
        "achieved_at": attempt.created_at,
        "score": attempt.score,
        "judge_rating": attempt.judge_rating,
        "tokens_total": attempt.tokens_total,
        "elapsed_ms": attempt.elapsed_ms,
        "first_succeeded_at": attempt.created_at,
    }
    fields = {field.attname: field for field in LeaderboardEntry._meta.concrete_fields}
    params = [
        fields[name].get_db_prep_value(values[name], connection, prepared=False)
        for name in LEADERBOARD_UPSERT_COLUMNS
    ]
    with connection.cursor() as cursor:
        cursor.execute(leaderboard_upsert_sql(), params)
        return cursor.fetchone() is not None


def _within_visible_board(attempt: ChallengeAttempt, *, rank_value: float) -> bool:
    """Whether the entry now stands among the rows a live board shows (only then push)."""
    with connection.cursor() as cursor:
        cursor.execute(
            board_last_shown_sql(challenge="%s"), [attempt.challenge_id, board_last_shown_offset()]
        )
        row = cursor.fetchone()
    return row is None or (rank_value, attempt.created_at) <= row


@transaction.atomic
def leaderboard_rebuild(*, challenge: Challenge) -> int:
    """Recompute every entry from the attempts; only needed when the strategy changes."""
    LeaderboardEntry.objects.filter(challenge=challenge).delete()
    successes = (
        ChallengeAttempt.objects.filter(challenge=challenge, succeeded=True)
        .order_by("created_at")
        .iterator(chunk_size=2000)
    )
    best: dict[Any, LeaderboardEntry] = {}
    reranked: list[ChallengeAttempt] = []
    for attempt in successes:
        standing = standing_for(
            challenge.scoring_strategy,
            elapsed_ms=attempt.elapsed_ms,
            tokens_total=attempt.tokens_total,
            judge_rating=attempt.judge_rating,
            custom_score=attempt.score,
        )
        if attempt.rank_value != standing.rank_value:
            attempt.rank_value = standing.rank_value
            reranked.append(attempt)
        current = best.get(attempt.end_user_id)
        if current is None:
            best[attempt.end_user_id] = LeaderboardEntry(
                challenge=challenge,
                end_user_id=attempt.end_user_id,
                attempt=attempt,
                rank_value=standing.rank_value,
                achieved_at=attempt.created_at,
                score=standing.score,
                judge_rating=attempt.judge_rating,
                tokens_total=attempt.tokens_total,
                elapsed_ms=attempt.elapsed_ms,
                first_succeeded_at=attempt.created_at,
            )
        elif standing.rank_value < current.rank_value:
            current.attempt = attempt
            current.rank_value = standing.rank_value
            current.achieved_at = attempt.created_at
            current.score = standing.score
            current.judge_rating = attempt.judge_rating
            current.tokens_total = attempt.tokens_total
            current.elapsed_ms = attempt.elapsed_ms
    LeaderboardEntry.objects.bulk_create(best.values(), batch_size=2000)
    # Frozen boards rank attempts by their own rank_value (challenges/selectors/standings.py).
    ChallengeAttempt.objects.bulk_update(reranked, ["rank_value"], batch_size=2000)
    # The re-ranked board replaces the cached one and reaches the open pages.
    leaderboard_push_on_commit(challenge_id=challenge.id)
    return len(best)

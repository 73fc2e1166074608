import dataclasses
import hashlib
import re
from functools import partial
from typing import Any

from django.conf import settings
from django.contrib.auth.models import AbstractBaseUser
from django.db import IntegrityError, connection, transaction
from django.utils import timezone
from django.utils.text import slugify

from challenges.bridge import signatures
from challenges.consumers import leaderboard_broadcast
from challenges.models import BridgeKey, Challenge, ChallengeAttempt, LeaderboardEntry, Secret
from challenges.scoring import standing_for
from challenges.validation import SECRET_PLACEHOLDER, challenge_errors
from core.errors import ApplicationError
from judging.errors import JudgeConfigError
from judging.llm_judge import judge_with_llm
from judging.plugins import evaluate_with_plugin, score_with_plugin
from judging.rules import evaluate_rule
from judging.verdicts import Verdict
from players.models import EndUser, Workspace

CHALLENGE_FIELDS = (
    "app_id",
    "workflow_id",
    "name",
    "slug",
    "description",
    "goal",
    "instructions_md",
    "theme",
    "success_type",
    "success_pattern",
    "secret_ref",
    "scoring_strategy",
    "is_active",
    "system_prompt",
    "target",
    "target_model",
    "target_config",
    "evaluator_type",
    "judge_config",
    "evaluator_plugin_id",
    "evaluator_entrypoint",
    "evaluator_config",
    "scoring_plugin_id",
    "scoring_entrypoint",
    "scoring_config",
    "max_attempts_per_hour",
    "starts_at",
    "ends_at",
    "mask_variables",
)
REDACTED = "[redacted]"


# --- Secrets ------------------------------------------------------------------------


def secret_value_for(*, challenge: Challenge) -> str | None:
    if not challenge.secret_ref:
        return None
    # One call evaluates, redacts and records: look the value up once per loaded challenge.
    cached = challenge.__dict__.get("_secret_value")
    if cached is not None and cached[0] == challenge.secret_ref:
        return cached[1]
    value = (
        Secret.objects.filter(workspace_id=challenge.workspace_id, name=challenge.secret_ref)
        .values_list("value", flat=True)
        .first()
    )
    challenge.__dict__["_secret_value"] = (challenge.secret_ref, value)
    return value


def fill_secret(text: str, secret: str | None, *, regex: bool = False) -> str:
    if secret is None:
        return text
    replacement = re.escape(secret) if regex else secret
    return SECRET_PLACEHOLDER.sub(lambda _: replacement, text)


def redact_secret(text: str, secret: str | None) -> str:
    if not secret or not text:
        return text
    return re.sub(re.escape(secret), REDACTED, text, flags=re.IGNORECASE)


_SECRET_NAME = re.compile(r"^[A-Za-z0-9_.-]{1,100}$")


def secret_create(*, workspace: Workspace, name: str, value: str) -> Secret:
    if not _SECRET_NAME.match(name or ""):
        raise ApplicationError(
            "A secret name uses 1–100 letters, digits, '_', '-' or '.'.",
            fields={"name": ["Use 1–100 letters, digits, '_', '-' or '.'."]},
        )
    if not value:
        raise ApplicationError("A secret needs a value.", fields={"value": ["Required."]})
    try:
        with transaction.atomic():
            return Secret.objects.create(workspace=workspace, name=name, value=value)
    except IntegrityError:
        raise ApplicationError(
            f"A secret named '{name}' already exists in this workspace.",
            code="conflict",
            status=409,
            fields={"name": ["Already exists."]},
        ) from None


def secret_update(*, secret: Secret, value: str) -> Secret:
    if not value:
        raise ApplicationError("A secret needs a value.", fields={"value": ["Required."]})
    secret.value = value
    secret.save(update_fields=["value", "updated_at"])
    return secret


def secret_delete(*, secret: Secret) -> None:
    in_use = Challenge.objects.filter(workspace_id=secret.workspace_id, secret_ref=secret.name)
    if in_use.exists():
        names = ", ".join(in_use.values_list("name", flat=True)[:5])
        raise ApplicationError(
            f"The secret is used by: {names}. Change those challenges first.",
            code="conflict",
            status=409,
        )
    secret.delete()


# --- Challenges ---------------------------------------------------------------------


def unique_slug(model, base: str, *, fallback: str, exclude_id=None) -> str:
    """A site-wide unique slug for `model` made from `base` (pages live at /…/<slug>/)."""
    base = slugify(base)[:70] or fallback
    taken = set(
        model.objects.filter(slug__startswith=base)
        .exclude(id=exclude_id)
        .values_list("slug", flat=True)
    )
    slug, n = base, 1
    while slug in taken:
        n += 1
        slug = f"{base}-{n}"
    return slug


def _validated(challenge: Challenge, changes: dict[str, Any]) -> None:
    unknown = set(changes) - set(CHALLENGE_FIELDS)
    if unknown:
        raise ApplicationError(
            "Unknown fields: " + ", ".join(sorted(unknown)) + ".",
            fields={name: ["Unknown field."] for name in sorted(unknown)},
        )
    for name, value in changes.items():
        setattr(challenge, name, value)
    data = {name: getattr(challenge, name) for name in CHALLENGE_FIELDS}
    secrets = dict(
        Secret.objects.filter(workspace_id=challenge.workspace_id).values_list("name", "value")
    )
    errors = challenge_errors(data, secret_names=set(secrets), secret_values=secrets)
    if challenge.slug:
        clash = Challenge.objects.filter(slug=challenge.slug).exclude(id=challenge.id)
        if clash.exists():
            errors.setdefault("slug", []).append("This slug is taken.")
    if errors:
        raise ApplicationError(
            "Some fields are invalid: " + ", ".join(sorted(errors)) + ".", fields=errors
        )


@transaction.atomic
def challenge_create(
    *, workspace: Workspace, user: AbstractBaseUser | None, **fields: Any
) -> Challenge:
    challenge = Challenge(workspace=workspace, created_by=user, updated_by=user)
    _validated(challenge, fields)
    if not challenge.slug:
        challenge.slug = unique_slug(Challenge, challenge.name, fallback="challenge")
    challenge.save()
    return challenge


@transaction.atomic
def challenge_update(
    *, challenge: Challenge, user: AbstractBaseUser | None, **fields: Any
) -> Challenge:
    previous_strategy = challenge.scoring_strategy
    _validated(challenge, fields)
    challenge.updated_by = user
    if not challenge.slug:
        challenge.slug = unique_slug(
            Challenge, challenge.name, fallback="challenge", exclude_id=challenge.id
        )
    challenge.save()
    if challenge.scoring_strategy != previous_strategy:
        # A board can hold 100k players: re-rank it in the background once committed.
        from challenges.tasks import leaderboard_rebuild_task

        challenge_id = str(challenge.id)
        transaction.on_commit(lambda: leaderboard_rebuild_task.delay(challenge_id))
    return challenge


def challenge_delete(*, challenge: Challenge) -> None:
    challenge.delete()


# --- Evaluation and attempts ----------------------------------------------------------


def challenge_evaluate(
    *, challenge: Challenge, output: str, variables: dict[str, Any] | None = None
) -> Verdict:
    """Judge one output with the challenge's evaluator; nothing is recorded.

    `variables` (e.g. a Dify run's) reach only a custom evaluator, whitelisted and masked.
    """
    secret = secret_value_for(challenge=challenge)
    if challenge.evaluator_type == Challenge.EvaluatorType.LLM_JUDGE:
        try:
            verdict = judge_with_llm(
                goal=challenge.goal, response=output or "", config=challenge.judge_config
            )
        except JudgeConfigError as exc:
            raise ApplicationError(
                f"This challenge's judge settings are invalid: {exc}",
                code="judge_misconfigured",
                status=422,
            ) from None
        return dataclasses.replace(verdict, feedback=redact_secret(verdict.feedback, secret))
    if challenge.evaluator_type == Challenge.EvaluatorType.CUSTOM:
        verdict = evaluate_with_plugin(
            plugin_id=challenge.evaluator_plugin_id,
            entrypoint=challenge.evaluator_entrypoint,
            goal=challenge.goal,
            response=output or "",
            config=challenge.evaluator_config,
            ctx={**_plugin_context(challenge), "variables": variables or {}},
            mask_variables=challenge.mask_variables or [],
            secrets=[secret] if secret else [],
        )
        return dataclasses.replace(verdict, feedback=redact_secret(verdict.feedback, secret))
    regex = challenge.success_type == Challenge.SuccessType.REGEX
    pattern = fill_secret(challenge.success_pattern, secret, regex=regex)
    rule = evaluate_rule(success_type=challenge.success_type, pattern=pattern, output=output or "")
    return Verdict(passed=rule.passed, feedback=rule.reason)


def _plugin_context(challenge: Challenge) -> dict[str, Any]:
    return {
        "tenant_id": str(challenge.workspace_id),
        "app_id": challenge.app_id,
        "workflow_id": challenge.workflow_id,
        "challenge_id": str(challenge.id),
        "end_user_id": None,
    }


def attempt_custom_score(
    *,
    challenge: Challenge,
    verdict: Verdict,
    tokens_total: int | None = None,
    elapsed_ms: int | None = None,
) -> float | None:
    """The scorer plugin's score for a `custom`-strategy success, to pass to attempt_record.

    None for other strategies, for failed attempts and when the plugin fails (such an
    attempt ranks after every scored one).
    """
    if challenge.scoring_strategy != Challenge.Strategy.CUSTOM or not verdict.passed:
        return None
    return score_with_plugin(
        plugin_id=challenge.scoring_plugin_id,
        entrypoint=challenge.scoring_entrypoint,
        metrics={
            "succeeded": verdict.passed,
            "tokens_total": tokens_total,
            "elapsed_ms": elapsed_ms,
            "rating": verdict.rating,
            "created_at": int(timezone.now().timestamp() * 1000),
        },
        config=challenge.scoring_config,
        ctx=_plugin_context(challenge),
    )


def _redact_json(value: Any, secret: str | None) -> Any:
    if isinstance(value, str):
        return redact_secret(value, secret)
    if isinstance(value, dict):
        return {key: _redact_json(item, secret) for key, item in value.items()}
    if isinstance(value, list):
        return [_redact_json(item, secret) for item in value]
    return value


def _fingerprint(text: str) -> str:
    return hashlib.sha256(text.encode()).hexdigest() if text else ""


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
) -> ChallengeAttempt:
    """Write the attempt and keep the player's leaderboard entry current, atomically.

    With an idempotency key already used in the workspace, the first attempt is
    returned and nothing is written.
    """
    if end_user.workspace_id != challenge.workspace_id:
        raise ApplicationError("The player does not belong to this challenge's workspace.")

    secret = secret_value_for(challenge=challenge)
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
        judge_rating=verdict.rating,
        judge_feedback=redact_secret(verdict.feedback, secret),
        judge_output_raw=_redact_json(verdict.raw, secret),
        tokens_total=tokens_total,
        elapsed_ms=elapsed_ms,
        prompt_sha256=_fingerprint(prompt),
        prompt_length=len(prompt),
        response_sha256=_fingerprint(response),
        response_length=len(response),
        source=source,
        idempotency_key=idempotency_key or None,
    )
    if verdict.passed:
        attempt.prompt = redact_secret(prompt, secret)
        attempt.response = redact_secret(response, secret)
    try:
        with transaction.atomic():
            attempt.save(force_insert=True)
            board_changed = verdict.passed and _leaderboard_offer(
                attempt, rank_value=standing.rank_value
            )
            if board_changed and _within_visible_board(attempt, rank_value=standing.rank_value):
                transaction.on_commit(partial(leaderboard_broadcast, challenge_id=challenge.id))
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


_UPSERT_COLUMNS = (
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
_REPLACED_ON_IMPROVEMENT = _UPSERT_COLUMNS[2:-1]


def _leaderboard_upsert_sql() -> str:
    table = LeaderboardEntry._meta.db_table
    columns = ", ".join(_UPSERT_COLUMNS)
    placeholders = ", ".join(["%s"] * len(_UPSERT_COLUMNS))
    updates = ", ".join(f"{name} = excluded.{name}" for name in _REPLACED_ON_IMPROVEMENT)
    # Only our own table and column names are interpolated; values go as parameters.
    return (
        f"INSERT INTO {table} AS entry ({columns}) VALUES ({placeholders}) "  # noqa: S608
        "ON CONFLICT (challenge_id, end_user_id) DO UPDATE SET "
        f"{updates} "
        "WHERE excluded.rank_value < entry.rank_value OR "
        "(excluded.rank_value = entry.rank_value AND excluded.achieved_at < entry.achieved_at) "
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
        for name in _UPSERT_COLUMNS
    ]
    with connection.cursor() as cursor:
        cursor.execute(_leaderboard_upsert_sql(), params)
        return cursor.fetchone() is not None


def _within_visible_board(attempt: ChallengeAttempt, *, rank_value: float) -> bool:
    """Whether the entry now stands among the rows a live board shows (only then push)."""
    last_shown = (
        LeaderboardEntry.objects.filter(challenge_id=attempt.challenge_id)
        .order_by("rank_value", "achieved_at", "id")
        .values_list("rank_value", "achieved_at")[
            settings.LEADERBOARD_DEFAULT_LIMIT - 1 : settings.LEADERBOARD_DEFAULT_LIMIT
        ]
    )
    row = next(iter(last_shown), None)
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
    for attempt in successes:
        standing = standing_for(
            challenge.scoring_strategy,
            elapsed_ms=attempt.elapsed_ms,
            tokens_total=attempt.tokens_total,
            judge_rating=attempt.judge_rating,
            custom_score=attempt.score,
        )
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
    return len(best)


# --- Bridge keys ----------------------------------------------------------------------


def bridge_key_create(*, workspace: Workspace, name: str = "") -> tuple[BridgeKey, str]:
    """Create a key in the Standard Webhooks form and return it with its only plain copy."""
    raw = signatures.key_generate()
    key = BridgeKey.objects.create(
        workspace=workspace,
        name=name.strip()[:100],
        key_hash=signatures.key_hash(raw),
        prefix=raw[:12],
        secret_encrypted=signatures.key_encrypt(raw),
    )
    return key, raw


def bridge_key_revoke(*, key: BridgeKey) -> BridgeKey:
    BridgeKey.objects.filter(pk=key.pk, revoked_at__isnull=True).update(revoked_at=timezone.now())
    key.refresh_from_db()
    return key

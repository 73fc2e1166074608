"""Judging one output with a challenge's evaluator and scorer; nothing is recorded."""

import dataclasses
from typing import Any

from asgiref.sync import async_to_sync
from django.utils import timezone

from challenges.models import Challenge
from challenges.services.secrets import fill_secret, secret_value_for
from core.disguises import secret_shows_in
from core.errors import ApplicationError
from core.redaction import redact_secrets
from core.threads import run_blocking
from judging.errors import JudgeConfigError
from judging.judges import Judge, judge_for
from judging.plugins import evaluate_with_plugin, score_with_plugin
from judging.rules import evaluate_rule
from judging.verdicts import Verdict

ECHO_FEEDBACK = (
    "The reply only repeats the secret your prompt already contained; an echo does not count."
)


def challenge_evaluate(
    *,
    challenge: Challenge,
    output: str,
    prompt: str = "",
    variables: dict[str, Any] | None = None,
    end_user=None,
) -> Verdict:
    """A sync edge for challenges/play.py's `attempt_play` only (it goes with it, issue 22
    §9): everything else looks the secret up and awaits `challenge_evaluate_async`."""
    secret = secret_value_for(challenge=challenge, end_user=end_user)
    return async_to_sync(challenge_evaluate_async)(
        challenge=challenge, secret=secret, output=output, prompt=prompt, variables=variables
    )


def _output_to_judge(*, output: str, prompt: str, secret: str | None) -> tuple[str, bool]:
    """The output with any secret the prompt already held masked out, and whether it did."""
    output = output or ""
    if not secret or secret_shows_in(prompt or "", secret) is None:
        return output, False
    return redact_secrets(output, [secret]), True


def _echo_explained(verdict: Verdict, *, output: str, secret: str | None, echoed: bool) -> Verdict:
    if echoed and not verdict.passed and secret_shows_in(output or "", secret) is not None:
        return dataclasses.replace(verdict, feedback=ECHO_FEEDBACK)
    return verdict


DISCLOSED_FEEDBACK = "The output discloses the secret."
NOT_DISCLOSED_FEEDBACK = "The output does not disclose the secret."


def _disclosure_verdict(*, output: str, secret: str | None) -> Verdict:
    """Guess mode judged on an output alone (the bridge has no answer box): the run wins
    when its output disclosed the secret, as a web guess ranks by the prompt that did."""
    disclosed = bool(secret) and secret_shows_in(output or "", secret) is not None
    return Verdict(
        passed=disclosed, feedback=DISCLOSED_FEEDBACK if disclosed else NOT_DISCLOSED_FEEDBACK
    )


async def challenge_evaluate_async(
    *,
    challenge: Challenge,
    secret: str | None,
    output: str,
    prompt: str = "",
    variables: dict[str, Any] | None = None,
) -> Verdict:
    """Judge one output with the challenge's evaluator; nothing is recorded, no database
    is touched.

    The caller looks the secret up (`secret_value_for`) before, with the rest of its ORM
    work: the judge is awaited and a plugin runs on a spare thread, neither holding a
    database connection. `prompt`, when known, is what the player sent: a secret it
    already held does not count when the output repeats it (SPEC §4c, "No echo wins"), in
    any form core.disguises finds. `variables` (e.g. a Dify run's) reach only a custom
    evaluator, whitelisted and masked.
    """
    judged, echoed = _output_to_judge(output=output, prompt=prompt, secret=secret)
    verdict = await _evaluate(
        challenge=challenge, output=judged, secret=secret, variables=variables
    )
    return _echo_explained(verdict, output=output, secret=secret, echoed=echoed)


async def _evaluate(
    *,
    challenge: Challenge,
    output: str,
    secret: str | None,
    variables: dict[str, Any] | None,
) -> Verdict:
    if challenge.answer_mode == Challenge.AnswerMode.GUESS:
        return _disclosure_verdict(output=output, secret=secret)
    if challenge.evaluator_type == Challenge.EvaluatorType.LLM_JUDGE:
        try:
            verdict = await challenge_judge(challenge).judge_async(
                goal=challenge.goal, response=output or ""
            )
        except JudgeConfigError as exc:
            raise _judge_misconfigured(exc) from None
        return _judge_verdict_masked(verdict, secret=secret)
    if challenge.evaluator_type == Challenge.EvaluatorType.CUSTOM:
        return await run_blocking(
            _plugin_verdict, challenge=challenge, secret=secret, output=output, variables=variables
        )
    return _rule_verdict(challenge=challenge, secret=secret, output=output)


def challenge_judge(challenge: Challenge) -> Judge:
    """The challenge's judge: its panel when it has one, else its one LLM judge."""
    return judge_for(judge_config=challenge.judge_config, judge_panel=challenge.judge_panel)


def _judge_verdict_masked(verdict: Verdict, *, secret: str | None) -> Verdict:
    return dataclasses.replace(
        verdict,
        feedback=redact_secrets(verdict.feedback, [secret]),
        judges=tuple(
            {**entry, "feedback": redact_secrets(entry["feedback"], [secret])}
            for entry in verdict.judges
        ),
    )


def _judge_misconfigured(exc: JudgeConfigError) -> ApplicationError:
    return ApplicationError(
        f"This challenge's judge settings are invalid: {exc}",
        code="judge_misconfigured",
        status=422,
    )


def _plugin_verdict(
    *, challenge: Challenge, secret: str | None, output: str, variables: dict[str, Any] | None
) -> Verdict:
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
    return dataclasses.replace(verdict, feedback=redact_secrets(verdict.feedback, [secret]))


def _rule_verdict(*, challenge: Challenge, secret: str | None, output: str) -> Verdict:
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
    """A sync edge for challenges/play.py (attempt_play and guesses) only, issue 22 §9:
    everything else awaits `attempt_custom_score_async`."""
    return async_to_sync(attempt_custom_score_async)(
        challenge=challenge, verdict=verdict, tokens_total=tokens_total, elapsed_ms=elapsed_ms
    )


async def attempt_custom_score_async(
    *,
    challenge: Challenge,
    verdict: Verdict,
    tokens_total: int | None = None,
    elapsed_ms: int | None = None,
) -> float | None:
    """The scorer plugin's score for a `custom`-strategy success, to pass to attempt_record;
    the plugin runs on a spare thread.

    None for other strategies, for failed attempts and when the plugin fails (such an
    attempt ranks after every scored one).
    """
    if challenge.scoring_strategy != Challenge.Strategy.CUSTOM or not verdict.passed:
        return None
    return await run_blocking(
        score_with_plugin,
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

"""Judging one output with a challenge's evaluator and scorer; nothing is recorded."""

import dataclasses
from typing import Any

from django.utils import timezone

from challenges.models import Challenge
from challenges.services.secrets import fill_secret, secret_value_for
from core.errors import ApplicationError
from core.redaction import redact_secrets
from judging.errors import JudgeConfigError
from judging.llm_judge import judge_with_llm
from judging.plugins import evaluate_with_plugin, score_with_plugin
from judging.rules import evaluate_rule
from judging.verdicts import Verdict


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
        return dataclasses.replace(verdict, feedback=redact_secrets(verdict.feedback, [secret]))
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
        return dataclasses.replace(verdict, feedback=redact_secrets(verdict.feedback, [secret]))
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

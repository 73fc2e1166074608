"""What the Dify bridge does for a call: evaluate or judge, record, remember the answer.

Every call carrying a `workflow_run_id` is idempotent: the first answer is stored in a
BridgeDelivery in the same transaction as the attempt it recorded, and a repeat gets that
stored answer back with nothing new written.
"""

import logging
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import psycopg
from django.db import IntegrityError, connection, transaction

from challenges.bridge.limits import player_rate_limit, rate_limit_count
from challenges.bridge.linking import bridge_link_dify_user
from challenges.models import BridgeDelivery, BridgeKey, Challenge, ChallengeAttempt
from challenges.modes import play_mode_for
from challenges.selectors.challenges import challenge_in_workspace_by_ref
from challenges.selectors.levels import level_locked_reason
from challenges.services.attempts import attempt_record
from challenges.services.budgets import Meter, meter_unheld
from challenges.services.evaluation import (
    ECHO_FEEDBACK,
    attempt_custom_score_async,
    challenge_evaluate_async,
)
from challenges.services.recording import Delivery, Outcome, attempt_record_async
from challenges.services.secrets import secret_value_for
from core.aio_clients import postgres_in_use
from core.disguises import secret_shows_in
from core.errors import ApplicationError, NotFoundError
from core.fastlane import lane_counts
from core.outages import retry_if_connection_was_dead
from core.redaction import REDACTED, redact_secrets
from core.threads import run_orm
from judging.errors import JudgeConfigError
from judging.judge_config import judge_config_errors, judge_config_messages, judge_config_parse
from judging.llm_judge import judge_with_llm_async
from judging.rules import SUCCESS_TYPES, PatternError, compile_pattern, evaluate_rule
from judging.verdicts import Verdict
from players.link_codes import end_user_for_recording, player_for_external_id
from players.models import EndUser

logger = logging.getLogger(__name__)

EVALUATOR = "challenge-evaluator"
JUDGE = "judging-llm"
RULES_MODE = "rules"
LLM_JUDGE_MODE = "llm-judge"
EVALUATION_MODES = (RULES_MODE, LLM_JUDGE_MODE)


@dataclass(frozen=True)
class BridgeAnswer:
    body: dict[str, Any]
    replayed: bool = False


def variables_masked(variables: dict[str, Any], names: list[str]) -> dict[str, Any]:
    hidden = set(names)
    return {name: REDACTED if name in hidden else value for name, value in variables.items()}


def masked_values(variables: dict[str, Any], names: list[str]) -> list[str]:
    return [
        str(variables[name])
        for name in names
        if name in variables and variables[name] not in (None, "")
    ]


def bridge_stored_answer(*, workspace_id, endpoint: str, workflow_run_id: str) -> dict | None:
    """The first answer given to a run, if any."""
    return _stored_answer(
        workspace_id=workspace_id, endpoint=endpoint, workflow_run_id=workflow_run_id
    )


def _stored_answer(*, workspace_id, endpoint: str, workflow_run_id: str) -> dict | None:
    return (
        BridgeDelivery.objects.filter(
            workspace_id=workspace_id, endpoint=endpoint, workflow_run_id=workflow_run_id
        )
        .values_list("response", flat=True)
        .first()
    )


def _challenge_in_workspace(*, workspace_id, ref: str) -> Challenge:
    challenge = challenge_in_workspace_by_ref(workspace_id=workspace_id, ref=ref)
    if challenge is None:
        raise NotFoundError("No challenge with that id in this bridge key's workspace.")
    return challenge


def _inline_verdict(*, inline: dict[str, Any], output: str) -> Verdict:
    success_type = inline.get("success_type") or "contains"
    pattern = inline.get("success_pattern") or ""
    if success_type not in SUCCESS_TYPES:
        raise ApplicationError(
            "Inline 'success_type' must be 'contains' or 'regex'.",
            fields={"success_type": ["contains or regex"]},
        )
    if not pattern:
        raise ApplicationError(
            "Send 'challenge_id', or an inline 'success_type' and 'success_pattern'.",
            fields={"success_pattern": ["Required without challenge_id."]},
        )
    if success_type == "regex":
        try:
            compile_pattern(pattern)
        except PatternError as exc:
            raise ApplicationError(str(exc), fields={"success_pattern": [str(exc)]}) from None
    rule = evaluate_rule(success_type=success_type, pattern=pattern, output=output)
    return Verdict(passed=rule.passed, feedback=rule.reason)


@dataclass(frozen=True)
class ChainedJudgement:
    """What an upstream judging-llm node answered, sent on to the challenge-evaluator."""

    passed: bool | None
    rating: float | None
    feedback: str = ""
    raw: dict[str, Any] | None = None


@dataclass(frozen=True)
class InlineJudging:
    """An inline `evaluation_mode: llm-judge` call: judged by `config`, never recorded."""

    goal: str
    config: dict[str, Any]


@dataclass(frozen=True)
class ChainedValues:
    """The judge_* fields of a call as sent; Dify sends every declared variable, so empty
    ones mean "not chained"."""

    passed: bool | None = None
    rating: float | None = None
    feedback: str | None = None
    raw: Any = None


@dataclass(frozen=True)
class EvaluationAsked:
    """How a call asks to be evaluated: its evaluation_mode, goal, judge_config and an
    upstream judge's values."""

    mode: str = ""
    goal: str = ""
    judge_config: Any = None
    chained: ChainedValues = ChainedValues()


def _invalid(field: str, message: str) -> ApplicationError:
    return ApplicationError(message, fields={field: [message]})


def chained_judgement(values: ChainedValues) -> ChainedJudgement | None:
    """The upstream judge's values, or None when none was sent."""
    sent = (values.passed, values.rating, values.feedback, values.raw)
    if all(value in (None, "") for value in sent):
        return None
    raw = values.raw
    if raw not in (None, "") and not isinstance(raw, dict):
        raise _invalid("judge_raw", "Send the judge's judge_raw object.")
    return ChainedJudgement(
        passed=values.passed,
        rating=values.rating,
        feedback=values.feedback or "",
        raw=raw or None,
    )


def inline_judging(*, asked: EvaluationAsked, challenge_ref: str) -> InlineJudging | None:
    """The inline llm-judge evaluation a call asks for, or None (the rules, or a stored
    challenge's own evaluator); the goal and judge_config only go with that mode."""
    mode = asked.mode
    if mode and mode not in EVALUATION_MODES:
        raise _invalid("evaluation_mode", "'rules' or 'llm-judge'.")
    if mode and challenge_ref:
        raise _invalid(
            "evaluation_mode",
            "Only for inline calls: a stored challenge is judged by its own evaluator.",
        )
    if mode != LLM_JUDGE_MODE:
        for name, value in (("goal", asked.goal), ("judge_config", asked.judge_config)):
            if value not in (None, "", {}):
                raise _invalid(name, "Only with an inline 'evaluation_mode: llm-judge'.")
        return None
    if not asked.goal:
        raise _invalid("goal", "An llm-judge evaluation needs a goal.")
    config = asked.judge_config or {}
    if judge_config_errors(config):
        messages = judge_config_messages(config)
        raise ApplicationError(
            "The judge settings are invalid: " + " ".join(messages),
            fields={"judge_config": messages},
        )
    return InlineJudging(goal=asked.goal, config=config)


def chained_verdict(
    *,
    judgement: ChainedJudgement,
    config: dict[str, Any] | None,
    output: str,
    prompt: str = "",
    secret: str | None = None,
) -> Verdict:
    """The verdict on an upstream judge's values under `config`'s scale and threshold.

    The rating is clamped to the scale and the threshold decides, as for the built-in
    judge; an upstream `judge_passed: false` is never turned into a pass, and no rating
    (the judge failed) never passes. The echo rule holds as for any evaluator.
    """
    try:
        judge = judge_config_parse(config)
    except JudgeConfigError as exc:
        raise ApplicationError(
            f"The judge settings are invalid: {exc}", code="judge_misconfigured", status=422
        ) from None
    rating = None
    if judgement.rating is not None:
        rating = int(min(max(round(judgement.rating), 0), judge.rating_scale))
    passed = rating is not None and rating >= judge.pass_threshold and judgement.passed is not False
    feedback = redact_secrets(judgement.feedback or "", [secret])
    echoed = secret and secret_shows_in(prompt or "", secret) is not None
    if echoed and secret_shows_in(output or "", secret) is not None:
        passed, feedback = False, ECHO_FEEDBACK
    raw = {
        **(judgement.raw or {}),
        "chained": True,
        "upstream_passed": judgement.passed,
        "upstream_rating": judgement.rating,
        "rating_scale": judge.rating_scale,
        "pass_threshold": judge.pass_threshold,
    }
    return Verdict(passed=passed, feedback=feedback, rating=rating, raw=raw)


def _judged_inline(
    *, judging: InlineJudging, output: str, judgement: ChainedJudgement | None
) -> Verdict | None:
    """The inline llm-judge verdict when it needs no model call (chained values), else None."""
    if judgement is None:
        return None
    return chained_verdict(judgement=judgement, config=judging.config, output=output)


async def _inline_judge_call_async(*, judging: InlineJudging, output: str) -> Verdict:
    try:
        return await judge_with_llm_async(goal=judging.goal, response=output, config=judging.config)
    except JudgeConfigError as exc:
        raise ApplicationError(str(exc), code="invalid") from None


def _refuse_chained_for(challenge: Challenge) -> None:
    if challenge.evaluator_type != Challenge.EvaluatorType.LLM_JUDGE:
        raise ApplicationError(
            "This challenge is judged by its "
            f"'{challenge.evaluator_type}' evaluator; judge_passed, judge_rating, "
            "judge_feedback and judge_raw are only taken for 'llm-judge' challenges.",
            fields={"judge_rating": ["Only for llm-judge challenges."]},
        )


VERDICT_UNDER_REVIEW = "under_review"


def under_review_answer(body: dict[str, Any], *, verdict_key: str) -> dict[str, Any]:
    """SPEC §10: no verdict while a person decides — the verdict (`challenge_succeeded`,
    or red/blue's `judge_passed`) is null and `verdict_status` says `under_review`. Every
    bridge answer about a disputed verdict takes this shape."""
    body[verdict_key] = None
    body["verdict_status"] = VERDICT_UNDER_REVIEW
    return body


def answer_body(*, verdict: Verdict, output: str, secret: str | None, hidden: list[str]) -> dict:
    def clean(text: str) -> str:
        return redact_secrets(text or "", [secret, *hidden])

    message = verdict.feedback or (
        "Challenge succeeded." if verdict.passed else "Challenge not succeeded."
    )
    body: dict[str, Any] = {
        "challenge_succeeded": verdict.passed,
        "message": clean(message),
    }
    if verdict.under_review:
        under_review_answer(body, verdict_key="challenge_succeeded")
    if verdict.rating is not None:
        body["judge_rating"] = verdict.rating
        body["judge_feedback"] = clean(verdict.feedback)
    body["output"] = clean(output)
    return body


def _store(
    *, workspace_id, endpoint: str, workflow_run_id: str, body: dict, record=None
) -> BridgeAnswer:
    return bridge_store(
        workspace_id=workspace_id,
        endpoint=endpoint,
        workflow_run_id=workflow_run_id,
        body=body,
        record=(lambda: (record(), {})) if record else None,
    )


@retry_if_connection_was_dead
def bridge_store(
    *,
    workspace_id,
    endpoint: str,
    workflow_run_id: str,
    body: dict,
    record: Callable[[], tuple[ChallengeAttempt | None, dict[str, Any]]] | None = None,
) -> BridgeAnswer:
    """Record (when asked) and remember the answer atomically; a lost race replays the winner.

    `record` returns the attempt it wrote (or None) and fields to add to the answer."""
    try:
        with transaction.atomic():
            attempt, extra = record() if record else (None, {})
            body = {**body, **extra}
            if attempt is not None:
                body = {**body, "attempt_id": str(attempt.id)}
            if workflow_run_id:
                BridgeDelivery.objects.create(
                    workspace_id=workspace_id,
                    endpoint=endpoint,
                    workflow_run_id=workflow_run_id,
                    attempt=attempt,
                    response=body,
                )
    except IntegrityError:
        stored = _stored_answer(
            workspace_id=workspace_id, endpoint=endpoint, workflow_run_id=workflow_run_id
        )
        if stored is None:
            raise
        return BridgeAnswer(stored, replayed=True)
    return BridgeAnswer(body)


@dataclass(frozen=True)
class EvaluationPlan:
    """What a challenge-evaluator call read from the database before judging."""

    challenge: Challenge
    end_user: EndUser | None
    secret: str | None
    hidden_names: list[str]
    hidden: list[str]
    # The player's use, counted as spent and never refused: Dify already ran the model.
    meter: Meter | None = None
    # Planned inside a transaction (a caller's atomic block): recorded in it, on this
    # connection, since the recorder's own connection would not see its rows.
    in_transaction: bool = False


@dataclass(frozen=True)
class _InlineJudgePlan:
    """An inline llm-judge call waiting for its judge."""

    judging: InlineJudging
    hidden: list[str]


def _inline_finish(
    *,
    key: BridgeKey,
    workflow_run_id: str,
    verdict: Verdict,
    output: str,
    hidden: list[str],
    judged: bool,
) -> BridgeAnswer:
    body = answer_body(verdict=verdict, output=output, secret=None, hidden=hidden)
    if judged:
        body = {
            **body,
            "judge_passed": verdict.passed,
            "judge_rating": verdict.rating,
            "judge_feedback": redact_secrets(verdict.feedback or "", hidden),
        }
    bridge_call_log(key, EVALUATOR, workflow_run_id, verdict, recorded=False)
    return _store(
        workspace_id=key.workspace_id,
        endpoint=EVALUATOR,
        workflow_run_id=workflow_run_id,
        body=body,
    )


def _evaluation_start(
    *,
    key: BridgeKey,
    workflow_run_id: str,
    output: str,
    challenge_ref: str,
    inline: dict[str, Any] | None,
    user: str,
    variables: dict[str, Any],
    mask_variables: list[str] | None,
    judging: InlineJudging | None = None,
    judgement: ChainedJudgement | None = None,
    link_code: str = "",
) -> BridgeAnswer | EvaluationPlan | _InlineJudgePlan:
    """A finished answer (a replay, or an inline rule) or the plan for judging."""
    workspace_id = key.workspace_id
    stored = _stored_answer(
        workspace_id=workspace_id, endpoint=EVALUATOR, workflow_run_id=workflow_run_id
    )
    if stored is not None:
        return BridgeAnswer(stored, replayed=True)
    if link_code:
        bridge_link_dify_user(workspace=key.workspace, user=user, link_code=link_code)

    if not challenge_ref:
        hidden = masked_values(variables, list(mask_variables or []))
        if judging is not None:
            verdict = _judged_inline(judging=judging, output=output, judgement=judgement)
            if verdict is None:
                return _InlineJudgePlan(judging=judging, hidden=hidden)
        else:
            if judgement is not None:
                raise ApplicationError(
                    "judge_passed, judge_rating, judge_feedback and judge_raw are taken for "
                    "'llm-judge' challenges or with an inline 'evaluation_mode: llm-judge'.",
                    fields={"judge_rating": ["Only with llm-judge evaluation."]},
                )
            verdict = _inline_verdict(inline=inline or {}, output=output)
        return _inline_finish(
            key=key,
            workflow_run_id=workflow_run_id,
            verdict=verdict,
            output=output,
            hidden=hidden,
            judged=judging is not None,
        )

    challenge = _challenge_in_workspace(workspace_id=workspace_id, ref=challenge_ref)
    if judgement is not None:
        _refuse_chained_for(challenge)
    hidden_names = list(challenge.mask_variables or []) + list(mask_variables or [])
    end_user = None
    if user:
        if not challenge.is_open():
            raise ApplicationError(
                "This challenge is not open for attempts.", code="challenge_closed", status=409
            )
        end_user = player_for_external_id(workspace=key.workspace, external_id=user)
        locked = level_locked_reason(challenge=challenge, end_user=end_user)
        if locked:
            raise ApplicationError(locked, code="level_locked", status=403)
        rate_limit_count(player_rate_limit(challenge=challenge, end_user_id=end_user.id))
    return EvaluationPlan(
        challenge=challenge,
        end_user=end_user,
        secret=secret_value_for(challenge=challenge, end_user=end_user),
        hidden_names=hidden_names,
        hidden=masked_values(variables, hidden_names),
        meter=meter_unheld(challenge=challenge, end_user=end_user) if end_user else None,
        in_transaction=connection.in_atomic_block,
    )


def _attempt_fields(
    *,
    plan: EvaluationPlan,
    end_user: EndUser,
    meter: Meter,
    workflow_run_id: str,
    output: str,
    prompt: str,
    tokens_total: int | None,
    elapsed_ms: int | None,
    verdict: Verdict,
    custom_score: float | None,
) -> dict[str, Any]:
    """What a call records, as `attempt_record` and `attempt_record_async` take it: Dify
    already ran the model, so its tokens count as spent, never refused (budgets.md)."""
    return {
        "challenge": plan.challenge,
        "end_user": end_user,
        "meter": meter,
        "cost": meter.cost(tokens_total=tokens_total, input_text=prompt),
        "verdict": verdict,
        "prompt": redact_secrets(prompt, plan.hidden),
        "response": redact_secrets(output, plan.hidden),
        "tokens_total": tokens_total,
        "elapsed_ms": elapsed_ms,
        "source": ChallengeAttempt.Source.BRIDGE,
        "workflow_run_id": workflow_run_id,
        "custom_score": custom_score,
    }


def evaluation_finish(
    *,
    plan: EvaluationPlan,
    key: BridgeKey,
    workflow_run_id: str,
    output: str,
    prompt: str,
    tokens_total: int | None,
    elapsed_ms: int | None,
    verdict: Verdict,
    custom_score: float | None,
) -> BridgeAnswer:
    body = answer_body(verdict=verdict, output=output, secret=plan.secret, hidden=plan.hidden)

    def record() -> ChallengeAttempt:
        end_user = end_user_for_recording(end_user=plan.end_user)
        meter = meter_unheld(challenge=plan.challenge, end_user=end_user)
        return attempt_record(
            **_attempt_fields(
                plan=plan,
                end_user=end_user,
                meter=meter,
                workflow_run_id=workflow_run_id,
                output=output,
                prompt=prompt,
                tokens_total=tokens_total,
                elapsed_ms=elapsed_ms,
                verdict=verdict,
                custom_score=custom_score,
            ),
            idempotency_key=workflow_run_id,
        )

    recorded = plan.end_user is not None
    answer = _store(
        workspace_id=key.workspace_id,
        endpoint=EVALUATOR,
        workflow_run_id=workflow_run_id,
        body=body,
        record=record if recorded else None,
    )
    bridge_call_log(
        key, EVALUATOR, workflow_run_id, verdict, recorded=recorded, challenge=plan.challenge
    )
    return answer


async def bridge_challenge_evaluate_async(
    *,
    key: BridgeKey,
    workflow_run_id: str,
    output: str,
    challenge_ref: str = "",
    inline: dict[str, Any] | None = None,
    user: str = "",
    prompt: str = "",
    tokens_total: int | None = None,
    elapsed_ms: int | None = None,
    variables: dict[str, Any] | None = None,
    mask_variables: list[str] | None = None,
    asked: EvaluationAsked | None = None,
    link_code: str = "",
    conversation_id: str = "",
) -> BridgeAnswer:
    """Evaluate one Dify output. `asked` may ask for an inline llm-judge evaluation, or
    carry an upstream judging-llm node's values, taken instead of a second judge call
    (llm-judge evaluation only). The ORM runs before and after, and the judge or plugin
    is awaited with no database connection held (SPEC §4c)."""
    variables = variables or {}
    asked = asked or EvaluationAsked()
    judging = inline_judging(asked=asked, challenge_ref=challenge_ref)
    judgement = chained_judgement(asked.chained)
    if not challenge_ref and judging is None and not (inline or {}).get("success_pattern"):
        raise _invalid(
            "challenge_id",
            "Send 'challenge_id', or an inline 'success_type' and 'success_pattern'.",
        )
    plan = await run_orm(
        _evaluation_start,
        key=key,
        workflow_run_id=workflow_run_id,
        output=output,
        challenge_ref=challenge_ref,
        inline=inline,
        user=user,
        variables=variables,
        mask_variables=mask_variables,
        judging=judging,
        judgement=judgement,
        link_code=link_code,
    )
    if isinstance(plan, BridgeAnswer):
        return plan
    if isinstance(plan, _InlineJudgePlan):
        verdict = await _inline_judge_call_async(judging=plan.judging, output=output)
        return await run_orm(
            _inline_finish,
            key=key,
            workflow_run_id=workflow_run_id,
            verdict=verdict,
            output=output,
            hidden=plan.hidden,
            judged=True,
        )
    call = BridgeCall(
        key=key,
        workflow_run_id=workflow_run_id,
        output=output,
        prompt=prompt,
        tokens_total=tokens_total,
        elapsed_ms=elapsed_ms,
        variables=variables,
        judgement=judgement,
        conversation_id=conversation_id,
    )
    # The challenge's kind of play records the call: an attempt, or a turn of a session.
    return await play_mode_for(plan.challenge).bridge_evaluate(call=call, plan=plan)


@dataclass(frozen=True)
class BridgeCall:
    """A challenge-evaluator call for a stored challenge, as the kinds of play take it."""

    key: BridgeKey
    workflow_run_id: str
    output: str
    prompt: str
    tokens_total: int | None
    elapsed_ms: int | None
    variables: dict[str, Any]
    judgement: ChainedJudgement | None
    conversation_id: str = ""


async def bridge_verdict_async(
    *, call: BridgeCall, plan: EvaluationPlan, judged: tuple[str, str] | None = None
) -> Verdict:
    """The verdict on the call's output (or on `judged` (output, prompt): a transcript):
    an upstream judge's values when sent, else the challenge's evaluator."""
    output, prompt = judged or (call.output, call.prompt)
    if call.judgement is not None:
        return chained_verdict(
            judgement=call.judgement,
            config=plan.challenge.judge_config,
            output=output,
            prompt=prompt,
            secret=plan.secret,
        )
    return await challenge_evaluate_async(
        challenge=plan.challenge,
        secret=plan.secret,
        output=output,
        prompt=prompt,
        variables=variables_masked(call.variables, plan.hidden_names),
    )


async def bridge_attempt_evaluate_async(*, call: BridgeCall, plan: EvaluationPlan) -> BridgeAnswer:
    """One output judged and, with a player, recorded as an attempt (single play)."""
    verdict = await bridge_verdict_async(call=call, plan=plan)
    custom_score = None
    if plan.end_user is not None:
        custom_score = await attempt_custom_score_async(
            challenge=plan.challenge,
            verdict=verdict,
            tokens_total=call.tokens_total,
            elapsed_ms=call.elapsed_ms,
        )
    finish = {
        "plan": plan,
        "key": call.key,
        "workflow_run_id": call.workflow_run_id,
        "output": call.output,
        "prompt": call.prompt,
        "tokens_total": call.tokens_total,
        "elapsed_ms": call.elapsed_ms,
        "verdict": verdict,
        "custom_score": custom_score,
    }
    answer = await _recorded_answer(**finish)
    if answer is None:
        return await run_orm(evaluation_finish, **finish)
    bridge_call_log(
        call.key, EVALUATOR, call.workflow_run_id, verdict, recorded=True, challenge=plan.challenge
    )
    return answer


async def _recorded_answer(
    *,
    plan: EvaluationPlan,
    key: BridgeKey,
    workflow_run_id: str,
    output: str,
    prompt: str,
    tokens_total: int | None,
    elapsed_ms: int | None,
    verdict: Verdict,
    custom_score: float | None,
) -> BridgeAnswer | None:
    """The answer of a player's failed attempt recorded through the recorder
    (challenges/services/recording.py) with its delivery, spend and key use, as the lane
    records; None where `evaluation_finish` records (a win, a review, no player, a call
    planned in a transaction, a player linked meanwhile)."""
    if (
        plan.end_user is None
        or verdict.passed
        or verdict.under_review
        or plan.in_transaction
        or not postgres_in_use()
    ):
        return None
    body = answer_body(verdict=verdict, output=output, secret=plan.secret, hidden=plan.hidden)
    try:
        outcome, attempt = await attempt_record_async(
            **_attempt_fields(
                plan=plan,
                end_user=plan.end_user,
                meter=plan.meter,
                workflow_run_id=workflow_run_id,
                output=output,
                prompt=prompt,
                tokens_total=tokens_total,
                elapsed_ms=elapsed_ms,
                verdict=verdict,
                custom_score=custom_score,
            ),
            secret=plan.secret,
            delivery=Delivery(
                key_id=key.pk, endpoint=EVALUATOR, workflow_run_id=workflow_run_id, response=body
            ),
        )
    except (psycopg.Error, ApplicationError):
        # Nothing of a statement that failed was written.
        logger.warning("Bridge: the recorder failed, the full path records", exc_info=True)
        return None
    lane_counts[f"bridge_view_recording:{outcome.value}"] += 1
    if outcome is Outcome.RECORDED:
        return BridgeAnswer({**body, "attempt_id": str(attempt.id)})
    if outcome is Outcome.REPLAYED:
        stored = await run_orm(
            _stored_answer,
            workspace_id=key.workspace_id,
            endpoint=EVALUATOR,
            workflow_run_id=workflow_run_id,
        )
        return BridgeAnswer(stored, replayed=True) if stored is not None else None
    return None


async def bridge_judge_async(
    *,
    key: BridgeKey,
    goal: str,
    response: str,
    config: dict[str, Any],
    hints: str = "",
    workflow_run_id: str = "",
) -> BridgeAnswer:
    """Judge one response with the LLM judge, awaited with no database connection held."""
    stored = await run_orm(_judge_replay, key=key, workflow_run_id=workflow_run_id)
    if stored is not None:
        return stored
    try:
        verdict = await judge_with_llm_async(
            goal=goal, response=response, config=config, hints=hints
        )
    except JudgeConfigError as exc:
        raise ApplicationError(str(exc), code="invalid") from None
    return await run_orm(_judge_store, key=key, workflow_run_id=workflow_run_id, verdict=verdict)


def _judge_replay(*, key: BridgeKey, workflow_run_id: str) -> BridgeAnswer | None:
    if not workflow_run_id:
        return None
    stored = _stored_answer(
        workspace_id=key.workspace_id, endpoint=JUDGE, workflow_run_id=workflow_run_id
    )
    return BridgeAnswer(stored, replayed=True) if stored is not None else None


def _judge_store(*, key: BridgeKey, workflow_run_id: str, verdict: Verdict) -> BridgeAnswer:
    body: dict[str, Any] = {
        "judge_passed": verdict.passed,
        "judge_rating": verdict.rating,
        "judge_feedback": verdict.feedback,
    }
    if verdict.raw:
        body["judge_raw"] = verdict.raw
    bridge_call_log(key, JUDGE, workflow_run_id, verdict, recorded=False)
    return _store(
        workspace_id=key.workspace_id, endpoint=JUDGE, workflow_run_id=workflow_run_id, body=body
    )


def bridge_call_log(key, endpoint, workflow_run_id, verdict, *, recorded, challenge=None) -> None:
    # Ids and outcomes only: outputs, prompts and variables may hold what must stay hidden.
    logger.info(
        "bridge_call endpoint=%s workspace=%s key=%s run=%s challenge=%s passed=%s recorded=%s",
        endpoint,
        key.workspace_id,
        key.prefix,
        workflow_run_id or "-",
        challenge.id if challenge else "inline",
        verdict.passed,
        recorded,
    )

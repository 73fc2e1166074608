"""Custom evaluators and scorers: discovery through entry points, calls in a sandbox.

A challenge names a plugin by its entry point name (`evaluator_plugin_id`) or by the
entry point's value (`evaluator_entrypoint`, 'pkg.module:Class'); either way only entry
points registered in our groups can run, never an import path a creator typed.

Each call runs in a fresh bubblewrap sandbox (judging/sandbox.py), which gets only the
plugin's masked variables and redacted texts. A plugin that fails, hangs or overruns
gives a non-pass with a generic reason and one log line.
"""

import json
import logging
import math
import re
from collections.abc import Iterable
from functools import lru_cache
from importlib.metadata import EntryPoint, entry_points
from typing import Any, Protocol, TypedDict

from django.conf import settings

from core.numbers import is_number
from core.redaction import redact_secrets
from judging.sandbox import SandboxOutcome, sandbox_call
from judging.verdicts import Verdict

logger = logging.getLogger(__name__)

EVALUATOR_GROUP = "prompt_challenges.evaluators"
SCORER_GROUP = "prompt_challenges.scorers"
PLUGIN_FAILURE_FEEDBACK = (
    "The custom evaluator could not reach a verdict; this attempt does not count as a pass."
)
MASK = "***"

_MAX_VARIABLES = 50
_MAX_TEXT = 20_000
_MAX_LIST = 100
_VARIABLE_NAME = re.compile(r"^[A-Za-z_][A-Za-z0-9_.-]{0,99}$")


# --- The plugin protocols (seed: "Custom Evaluators & Scorers") -------------------------


class EvaluatorContext(TypedDict, total=False):
    tenant_id: str
    app_id: str
    workflow_id: str
    challenge_id: str
    end_user_id: str | None
    variables: dict[str, Any]  # whitelisted and masked
    timeout_ms: int


class EvaluatorResult(TypedDict, total=False):
    passed: bool
    rating: int  # 0–10
    feedback: str
    raw: dict[str, Any]


class EvaluatorProtocol(Protocol):
    def evaluate(
        self, goal: str, response: str, config: dict[str, Any], ctx: EvaluatorContext
    ) -> EvaluatorResult: ...


class ScoringContext(TypedDict, total=False):
    tenant_id: str
    app_id: str
    workflow_id: str
    challenge_id: str
    end_user_id: str | None
    timeout_ms: int


class AttemptMetrics(TypedDict, total=False):
    succeeded: bool
    tokens_total: int | None
    elapsed_ms: int | None
    rating: int | None
    created_at: int | None  # epoch ms


class ScoringResult(TypedDict, total=False):
    score: float
    details: dict[str, Any] | None


class ScorerProtocol(Protocol):
    def score(
        self, metrics: AttemptMetrics, config: dict[str, Any], ctx: ScoringContext
    ) -> ScoringResult: ...


# --- Discovery --------------------------------------------------------------------------


@lru_cache(maxsize=8)
def _registered(group: str) -> tuple[EntryPoint, ...]:
    # Scanning every installed distribution costs tens of ms; plugins change only with an
    # install, which needs a restart anyway.
    return tuple(entry_points(group=group))


def plugins_available(group: str) -> dict[str, str]:
    """Entry point name -> 'pkg.module:Class' for every installed plugin in `group`."""
    return {point.name: point.value for point in _registered(group)}


def plugin_find(group: str, *, plugin_id: str = "", entrypoint: str = "") -> EntryPoint | None:
    for point in _registered(group):
        if plugin_id and point.name == plugin_id:
            return point
        if not plugin_id and entrypoint and point.value == entrypoint:
            return point
    return None


# --- Inputs -----------------------------------------------------------------------------


def _scalar(value: Any, secrets: list[str]) -> tuple[bool, Any]:
    if value is None or isinstance(value, bool | int):
        return True, value
    if isinstance(value, float):
        return math.isfinite(value), value
    if isinstance(value, str):
        return True, redact_secrets(value[:_MAX_TEXT], secrets)
    return False, None


def plugin_variables(
    variables: dict[str, Any] | None,
    *,
    mask_variables: Iterable[str] = (),
    secrets: Iterable[str] = (),
) -> dict[str, Any]:
    """Only what a plugin may see: well-named scalar (or list-of-scalar) variables, masked.

    Masked names arrive as '***'; any secret value inside a string becomes '[redacted]'.
    """
    masked = set(mask_variables or ())
    secret_values = [secret for secret in secrets if secret]
    clean: dict[str, Any] = {}
    for name, value in (variables or {}).items():
        if len(clean) >= _MAX_VARIABLES:
            break
        if not isinstance(name, str) or not _VARIABLE_NAME.match(name):
            continue
        if name in masked:
            clean[name] = MASK
            continue
        if isinstance(value, list):
            items = [_scalar(item, secret_values) for item in value[:_MAX_LIST]]
            if all(ok for ok, _ in items):
                clean[name] = [item for _, item in items]
            continue
        ok, item = _scalar(value, secret_values)
        if ok:
            clean[name] = item
    return clean


def _log(kind: str, plugin_id: str, call: SandboxOutcome) -> None:
    logger.log(
        logging.INFO if call.outcome == "ok" else logging.WARNING,
        "plugin_call kind=%s plugin_id=%s duration_ms=%d outcome=%s",
        kind,
        plugin_id,
        call.duration_ms,
        call.outcome,
    )


# --- Evaluators and scorers -------------------------------------------------------------


def _failed(plugin_id: str, outcome: str) -> Verdict:
    return Verdict(
        passed=False,
        feedback=PLUGIN_FAILURE_FEEDBACK,
        rating=None,
        raw={"error": outcome, "plugin_id": plugin_id},
    )


def evaluate_with_plugin(
    *,
    plugin_id: str = "",
    entrypoint: str = "",
    goal: str,
    response: str,
    config: dict[str, Any] | None = None,
    ctx: EvaluatorContext | None = None,
    mask_variables: Iterable[str] = (),
    secrets: Iterable[str] = (),
) -> Verdict:
    """The plugin's verdict, or a non-pass Verdict with raw["error"] naming what went wrong."""
    point = plugin_find(EVALUATOR_GROUP, plugin_id=plugin_id, entrypoint=entrypoint)
    name = point.name if point else (plugin_id or entrypoint)
    if point is None:
        call = SandboxOutcome(outcome="not_found")
        _log("evaluator", name, call)
        return _failed(name, call.outcome)

    secret_values = [secret for secret in secrets if secret]
    context: dict[str, Any] = dict(ctx or {})
    context["variables"] = plugin_variables(
        context.get("variables"), mask_variables=mask_variables, secrets=secret_values
    )
    context["timeout_ms"] = int(float(getattr(settings, "PLUGIN_TIMEOUT_SECONDS", 5)) * 1000)
    args = {
        "goal": redact_secrets(goal or "", secret_values),
        "response": redact_secrets(response or "", secret_values),
        "config": config or {},
        "ctx": context,
    }
    call = sandbox_call(point=point, method="evaluate", args=args)
    result = call.result
    if call.outcome == "ok" and not (
        isinstance(result, dict) and isinstance(result.get("passed"), bool)
    ):
        call = SandboxOutcome(outcome="bad_result", duration_ms=call.duration_ms)
    _log("evaluator", name, call)
    if call.outcome != "ok":
        return _failed(name, call.outcome)

    rating = result.get("rating")
    rating = int(min(max(round(rating), 0), 10)) if is_number(rating) else None
    feedback = result.get("feedback")
    feedback = feedback[:2000] if isinstance(feedback, str) else ""
    raw: dict[str, Any] = {"plugin_id": name}
    plugin_raw = result.get("raw")
    if isinstance(plugin_raw, dict) and len(json.dumps(plugin_raw)) <= 16_384:
        raw["plugin"] = plugin_raw
    return Verdict(passed=result["passed"], feedback=feedback, rating=rating, raw=raw)


def score_with_plugin(
    *,
    plugin_id: str = "",
    entrypoint: str = "",
    metrics: AttemptMetrics,
    config: dict[str, Any] | None = None,
    ctx: ScoringContext | None = None,
) -> float | None:
    """The plugin's score, or None (ranked after every scored attempt) when it fails."""
    point = plugin_find(SCORER_GROUP, plugin_id=plugin_id, entrypoint=entrypoint)
    name = point.name if point else (plugin_id or entrypoint)
    if point is None:
        _log("scorer", name, SandboxOutcome(outcome="not_found"))
        return None
    context: dict[str, Any] = dict(ctx or {})
    context["timeout_ms"] = int(float(getattr(settings, "PLUGIN_TIMEOUT_SECONDS", 5)) * 1000)
    args = {"metrics": dict(metrics), "config": config or {}, "ctx": context}
    call = sandbox_call(point=point, method="score", args=args)
    result = call.result
    if call.outcome == "ok" and not (isinstance(result, dict) and is_number(result.get("score"))):
        call = SandboxOutcome(outcome="bad_result", duration_ms=call.duration_ms)
    _log("scorer", name, call)
    if call.outcome != "ok":
        return None
    return float(result["score"])

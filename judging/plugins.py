"""Custom evaluators and scorers: discovery through entry points, calls in a sandbox.

A challenge names a plugin by its entry point name (`evaluator_plugin_id`) or by the
entry point's value (`evaluator_entrypoint`, 'pkg.module:Class'); either way only entry
points registered in our groups can run, never an import path a creator typed.

Each call runs in a fresh process (judging/sandbox_worker.py under `python -I`) with a
wall-clock timeout, an address-space ceiling (RLIMIT_AS), a CPU ceiling, no network
(sockets disabled in Python, plus an empty network namespace via `unshare -n` where the
host allows it) and an environment holding no settings or secrets. A plugin that
fails, hangs or overruns gives a non-pass with a generic reason and one log line.
"""

import contextlib
import json
import logging
import math
import os
import re
import shutil
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Iterable
from dataclasses import dataclass
from functools import lru_cache
from importlib.metadata import EntryPoint, entry_points
from pathlib import Path
from typing import Any, Protocol, TypedDict

from django.conf import settings

from core.numbers import is_number
from core.redaction import redact_secrets
from judging.verdicts import Verdict

logger = logging.getLogger(__name__)

EVALUATOR_GROUP = "prompt_challenges.evaluators"
SCORER_GROUP = "prompt_challenges.scorers"
PLUGIN_FAILURE_FEEDBACK = (
    "The custom evaluator could not reach a verdict; this attempt does not count as a pass."
)
MASK = "***"
WORKER = Path(__file__).resolve().with_name("sandbox_worker.py")

_MAX_VARIABLES = 50
_MAX_TEXT = 20_000
_MAX_LIST = 100
_VARIABLE_NAME = re.compile(r"^[A-Za-z_][A-Za-z0-9_.-]{0,99}$")
_MAX_OUTPUT_BYTES = 256 * 1024


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


# --- The sandbox ------------------------------------------------------------------------


@dataclass(frozen=True)
class SandboxOutcome:
    # ok | timeout | memory | network | error | crashed | bad_result | not_found | busy
    outcome: str
    result: Any = None
    duration_ms: int = 0


@lru_cache(maxsize=1)
def network_namespace_available() -> bool:
    """Whether `unshare -n` works here (needs root or CAP_SYS_ADMIN); probed once."""
    if getattr(settings, "PLUGIN_NETWORK_NAMESPACE", "auto") == "off":
        return False
    unshare = shutil.which("unshare")
    if not unshare:
        return False
    try:
        probe = subprocess.run(  # noqa: S603 - fixed arguments
            [unshare, "-n", "true"], capture_output=True, timeout=5, check=False
        )
    except (OSError, subprocess.SubprocessError):
        return False
    return probe.returncode == 0


def _command(memory_bytes: int, cpu_seconds: int) -> list[str]:
    command = [sys.executable, "-I", str(WORKER), str(memory_bytes), str(cpu_seconds)]
    if network_namespace_available():
        command = [shutil.which("unshare") or "unshare", "-n", "--", *command]
    return command


def _kill_group(process: subprocess.Popen) -> None:
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(process.pid, signal.SIGKILL)


def _abandon(process: subprocess.Popen) -> None:
    for pipe in (process.stdin, process.stdout):
        if pipe is not None:
            with contextlib.suppress(OSError):
                pipe.close()
    process.kill()
    with contextlib.suppress(subprocess.TimeoutExpired):
        process.wait(timeout=1)


@lru_cache(maxsize=1)
def _slots() -> threading.BoundedSemaphore:
    return threading.BoundedSemaphore(max(1, int(getattr(settings, "PLUGIN_MAX_CONCURRENT", 4))))


def sandbox_call(*, entrypoint: str, method: str, args: dict[str, Any]) -> SandboxOutcome:
    """One plugin call in a fresh, limited process; never raises for the plugin's faults."""
    timeout = float(getattr(settings, "PLUGIN_TIMEOUT_SECONDS", 5))
    # A burst of calls must not fork without bound; a call that waits a whole timeout
    # for a free slot gives up.
    if not _slots().acquire(timeout=timeout):
        return SandboxOutcome(outcome="busy", duration_ms=int(timeout * 1000))
    try:
        return _sandbox_run(entrypoint=entrypoint, method=method, args=args, timeout=timeout)
    finally:
        _slots().release()


def _sandbox_run(
    *, entrypoint: str, method: str, args: dict[str, Any], timeout: float
) -> SandboxOutcome:
    memory_bytes = int(getattr(settings, "PLUGIN_MEMORY_LIMIT_MB", 256)) * 1024 * 1024
    request = json.dumps({"entrypoint": entrypoint, "method": method, "args": args})
    started = time.monotonic()

    def finish(outcome: str, result: Any = None) -> SandboxOutcome:
        duration_ms = int((time.monotonic() - started) * 1000)
        return SandboxOutcome(outcome=outcome, result=result, duration_ms=duration_ms)

    try:
        process = subprocess.Popen(  # noqa: S603 - our interpreter and worker only
            _command(memory_bytes, math.ceil(timeout) + 1),
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL,
            env={"PATH": os.defpath, "LANG": "C.UTF-8", "PYTHONDONTWRITEBYTECODE": "1"},
            cwd="/",
            start_new_session=True,
            close_fds=True,
        )
    except OSError:
        return finish("spawn_failed")
    try:
        stdout, _ = process.communicate(request.encode(), timeout=timeout)
    except subprocess.TimeoutExpired:
        # The whole session goes, so a plugin's own children cannot keep running.
        _kill_group(process)
        try:
            process.communicate(timeout=1)
        except subprocess.TimeoutExpired:
            # A child that left the session still holds the pipe: stop waiting for it.
            _abandon(process)
        return finish("timeout")
    finally:
        _kill_group(process)
    if len(stdout) > _MAX_OUTPUT_BYTES:
        return finish("bad_result")
    try:
        answer = json.loads(stdout.decode("utf-8").strip().splitlines()[-1])
    except (ValueError, IndexError, UnicodeDecodeError):
        # No answer line: killed by a limit (memory, CPU) or exited on its own.
        return finish("crashed")
    if not isinstance(answer, dict):
        return finish("crashed")
    if not answer.get("ok"):
        return finish(str(answer.get("error") or "error"))
    return finish("ok", answer.get("result"))


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
    call = sandbox_call(entrypoint=point.value, method="evaluate", args=args)
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
    call = sandbox_call(entrypoint=point.value, method="score", args=args)
    result = call.result
    if call.outcome == "ok" and not (isinstance(result, dict) and is_number(result.get("score"))):
        call = SandboxOutcome(outcome="bad_result", duration_ms=call.duration_ms)
    _log("scorer", name, call)
    if call.outcome != "ok":
        return None
    return float(result["score"])

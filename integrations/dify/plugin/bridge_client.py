"""The plugin's HTTP calls to the platform's Dify bridge; plain httpx, no Dify SDK here.

Kept apart from the SDK so it can be tested on its own against a running bridge. Every
call carries the workflow run id, which makes a retry safe: the bridge answers a repeat
with the first answer and records nothing new.
"""

import json
import time
from typing import Any

import httpx

EVALUATOR_PATH = "/bridge/dify/challenge-evaluator"
JUDGE_PATH = "/bridge/dify/judging-llm"
TEAM_PATH = "/bridge/dify/team-challenge"
RETRIES = 2


class BridgeError(Exception):
    """The bridge refused the call or could not be reached; the message says why."""


def _url(base_url: str, path: str) -> str:
    base = (base_url or "").strip().rstrip("/")
    if not base.startswith(("http://", "https://")):
        raise BridgeError("The platform URL must start with http:// or https://.")
    return base + path


def _post(base_url: str, path: str, bridge_key: str, payload: dict, timeout: float) -> dict:
    url = _url(base_url, path)
    # json.dumps here is what keeps quotes, backslashes and newlines in outputs intact.
    body = json.dumps(payload, ensure_ascii=False).encode()
    headers = {"Authorization": f"Bearer {bridge_key}", "Content-Type": "application/json"}
    last_error = "no answer"
    for attempt in range(RETRIES + 1):
        if attempt:
            time.sleep(0.5 * attempt)
        try:
            response = httpx.post(url, content=body, headers=headers, timeout=timeout)
        except httpx.HTTPError as exc:
            last_error = f"could not reach the platform ({exc.__class__.__name__})"
            continue
        if response.status_code >= 500:
            last_error = f"the platform answered {response.status_code}"
            continue
        try:
            answer = response.json()
        except ValueError:
            raise BridgeError(
                f"The platform answered {response.status_code} without JSON."
            ) from None
        if response.status_code != 200:
            error = answer.get("error", {}) if isinstance(answer, dict) else {}
            message = error.get("message") or f"status {response.status_code}"
            raise BridgeError(f"The platform refused the call: {message}")
        return answer
    raise BridgeError(f"The bridge call failed: {last_error}.")


def _drop_empty(payload: dict[str, Any]) -> dict[str, Any]:
    return {key: value for key, value in payload.items() if value not in (None, "")}


def evaluate(
    *,
    base_url: str,
    bridge_key: str,
    output: str,
    workflow_run_id: str,
    challenge_id: str = "",
    user: str = "",
    prompt: str = "",
    success_type: str = "",
    success_pattern: str = "",
    tokens_total: int | None = None,
    elapsed_ms: int | None = None,
    judge_passed: bool | None = None,
    judge_rating: float | None = None,
    judge_feedback: str = "",
    evaluation_mode: str = "",
    goal: str = "",
    judge_model: str = "",
    rating_scale: int | None = None,
    pass_threshold: float | None = None,
    link_code: str = "",
    timeout: float = 30.0,
) -> dict:
    """POST /bridge/dify/challenge-evaluator → {challenge_succeeded, message, …, output}.

    `judge_passed`/`judge_rating`/`judge_feedback` chain an upstream judging-llm node's
    outputs (llm-judge challenges, no second judge call); `evaluation_mode="llm-judge"`
    with `goal` and the judge settings judges inline, never recorded.
    """
    llm_judge = evaluation_mode == "llm-judge" and not challenge_id
    judge_config = _drop_empty(
        {
            "judge_model": judge_model,
            "rating_scale": int(rating_scale) if rating_scale not in (None, "") else None,
            "pass_threshold": pass_threshold,
        }
    )
    payload = _drop_empty(
        {
            "challenge_id": challenge_id,
            "evaluation_mode": "llm-judge" if llm_judge else "",
            "goal": goal if llm_judge else "",
            "judge_config": judge_config if llm_judge and judge_config else None,
            "success_type": success_type if not (challenge_id or llm_judge) else "",
            "success_pattern": success_pattern if not (challenge_id or llm_judge) else "",
            "judge_passed": judge_passed,
            "judge_rating": judge_rating,
            "judge_feedback": judge_feedback,
            "link_code": link_code,
            "user": user,
            "prompt": prompt,
            "workflow_run_id": workflow_run_id,
            "tokens_total": int(tokens_total) if tokens_total not in (None, "") else None,
            "elapsed_ms": int(elapsed_ms) if elapsed_ms not in (None, "") else None,
        }
    )
    payload["output"] = output or ""
    return _post(base_url, EVALUATOR_PATH, bridge_key, payload, timeout)


def judge(
    *,
    base_url: str,
    bridge_key: str,
    goal: str,
    response: str,
    hints: str = "",
    workflow_run_id: str = "",
    judge_model: str = "",
    rating_scale: int | None = None,
    pass_threshold: float | None = None,
    timeout: float = 90.0,
) -> dict:
    """POST /bridge/dify/judging-llm → {judge_passed, judge_rating, judge_feedback, judge_raw?}."""
    payload = _drop_empty(
        {
            "hints": hints,
            "workflow_run_id": workflow_run_id,
            "judge_model": judge_model,
            "rating_scale": int(rating_scale) if rating_scale not in (None, "") else None,
            "pass_threshold": pass_threshold,
        }
    )
    payload.update(goal=goal or "", response=response or "")
    return _post(base_url, JUDGE_PATH, bridge_key, payload, timeout)


def team_challenge(
    *,
    base_url: str,
    bridge_key: str,
    red_blue_challenge_id: str,
    team_choice: str,
    prompt: str,
    user: str,
    workflow_run_id: str,
    timeout: float = 120.0,
) -> dict:
    """POST /bridge/dify/team-challenge → {team, judge_passed, judge_rating, judge_feedback,
    categories, team_points, total_points, status, submission_id, pairing_id}.

    `prompt` is the attack (team red) or the defence (team blue)."""
    team = (team_choice or "").strip().lower()
    field = "defense_prompt" if team == "blue" else "attack_prompt"
    payload = {
        "red_blue_challenge_id": red_blue_challenge_id,
        "team_choice": team,
        field: prompt or "",
        "user": user,
        "workflow_run_id": workflow_run_id,
    }
    return _post(base_url, TEAM_PATH, bridge_key, payload, timeout)


def check_key(*, base_url: str, bridge_key: str) -> None:
    """Raise BridgeError unless the key opens the bridge (an inline check; nothing is recorded)."""
    evaluate(
        base_url=base_url,
        bridge_key=bridge_key,
        output="ok",
        success_type="contains",
        success_pattern="ok",
        workflow_run_id=f"credential-check-{time.time_ns()}",
        timeout=10.0,
    )

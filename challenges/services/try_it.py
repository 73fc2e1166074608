"""The admin's "Try it": a creator's prompt through the challenge's real target and
evaluator, exactly as a player's would go, with nothing recorded and nothing masked.

Split in two so the model call holds no database connection: `try_it_prepare` reads
what the call needs (secret, target settings) on the request's thread; `try_it_run`
touches no database and is awaited.
"""

import logging
import time
from dataclasses import dataclass
from typing import Any

from challenges.agents.loop import agent_loop, benign_passed, run_verdict
from challenges.models import PROMPT_MAX_CHARS, Challenge
from challenges.services.defences import (
    AGENT_DEFENCE_KINDS,
    input_defence_fired,
    output_defence_fired_async,
)
from challenges.services.evaluation import challenge_evaluate_async
from challenges.services.play import (
    ANSWER_MAX_CHARS,
    GUESS_MODE_FEEDBACK,
    guess_matches,
    target_config_for,
)
from challenges.services.secrets import fill_secret, player_secret, secret_value_for
from core.errors import ApplicationError
from judging.agent_models import agent_complete_async
from judging.targets import TargetConfig, TargetError, complete_async

logger = logging.getLogger(__name__)

TRY_IT_USER = "admin-try-it"


@dataclass(frozen=True)
class TryItPlan:
    challenge: Challenge
    secret: str | None
    system_prompt: str
    target: TargetConfig


@dataclass(frozen=True)
class TryItResult:
    reply: str
    defence_fired: str | None
    passed: bool
    rating: int | None
    feedback: str
    tokens_total: int | None
    elapsed_ms: int | None
    error: str = ""


def _try_it_secret(challenge: Challenge) -> str | None:
    if challenge.secret_per_player:
        return player_secret(challenge=challenge, player_key=TRY_IT_USER)
    return secret_value_for(challenge=challenge)


def try_it_guess(*, challenge: Challenge, answer: str) -> bool:
    """Whether a guess-mode answer would solve the challenge (nothing recorded)."""
    if challenge.answer_mode != Challenge.AnswerMode.GUESS:
        raise ApplicationError("This challenge judges the model's reply; it has no answer box.")
    if not answer.strip() or len(answer) > ANSWER_MAX_CHARS:
        raise ApplicationError(
            "Type a guess first.", fields={"answer": [f"1 to {ANSWER_MAX_CHARS} characters."]}
        )
    return guess_matches(answer, _try_it_secret(challenge))


def try_it_prepare(*, challenge: Challenge, prompt: str) -> TryItPlan:
    if not prompt or not prompt.strip():
        raise ApplicationError("Write a prompt first.", fields={"prompt": ["Required."]})
    if len(prompt) > PROMPT_MAX_CHARS:
        raise ApplicationError(
            f"A prompt is at most {PROMPT_MAX_CHARS} characters.",
            fields={"prompt": [f"At most {PROMPT_MAX_CHARS} characters."]},
        )
    secret = _try_it_secret(challenge)
    return TryItPlan(
        challenge=challenge,
        secret=secret,
        system_prompt=fill_secret(challenge.system_prompt, secret),
        target=target_config_for(challenge=challenge),
    )


async def _defence_fired(*, plan: TryItPlan, prompt: str, reply: str | None) -> str | None:
    """The challenge's defence layers, as the play path runs them (SPEC §4c): the input
    filter before the call, the output guard and LLM check after it. Names the layer that
    fired, what it caught and the message the player would get."""
    defences = plan.challenge.defences or []
    if reply is None:
        fired = input_defence_fired(defences=defences, prompt=prompt)
    else:
        fired = await output_defence_fired_async(defences=defences, reply=reply, secret=plan.secret)
    if fired is None:
        return None
    return f"{fired.kind} caught {fired.caught}: {fired.message}"


async def try_it_run(*, plan: TryItPlan, prompt: str) -> TryItResult:
    """Await the target and judge its reply; no database access, nothing recorded."""
    fired = await _defence_fired(plan=plan, prompt=prompt, reply=None)
    if fired:
        return TryItResult("", fired, False, None, "", None, None)
    started = time.monotonic()
    try:
        reply = await complete_async(
            system_prompt=plan.system_prompt, prompt=prompt, user=TRY_IT_USER, config=plan.target
        )
    except TargetError as exc:
        # The creator configured the target, so the reason is theirs to see.
        return TryItResult(
            reply="",
            defence_fired=None,
            passed=False,
            rating=None,
            feedback="",
            tokens_total=None,
            elapsed_ms=round((time.monotonic() - started) * 1000),
            error=f"The target model did not answer: {exc}",
        )
    fired = await _defence_fired(plan=plan, prompt=prompt, reply=reply.text)
    if fired:
        return TryItResult(reply.text, fired, False, None, "", reply.tokens_total, reply.elapsed_ms)
    if plan.challenge.answer_mode == Challenge.AnswerMode.GUESS:
        # As for a player: the reply stands unjudged; the guess box decides.
        return TryItResult(
            reply.text, None, False, None, GUESS_MODE_FEEDBACK, reply.tokens_total, reply.elapsed_ms
        )
    try:
        verdict = await challenge_evaluate_async(
            challenge=plan.challenge, secret=plan.secret, output=reply.text, prompt=prompt
        )
    except ApplicationError as exc:
        return TryItResult(
            reply.text, None, False, None, "", reply.tokens_total, reply.elapsed_ms, exc.message
        )
    return TryItResult(
        reply=reply.text,
        defence_fired=None,
        passed=verdict.passed,
        rating=verdict.rating,
        feedback=verdict.feedback,
        tokens_total=reply.tokens_total,
        elapsed_ms=reply.elapsed_ms,
    )


# --- agent scenarios ----------------------------------------------------------------------


@dataclass(frozen=True)
class AgentTryPlan:
    challenge: Challenge
    system_prompt: str
    target: TargetConfig
    slots: dict[str, str]


def try_it_agent_prepare(*, challenge: Challenge, slots: dict[str, str]) -> AgentTryPlan:
    """The saved scenario with the creator's slot texts (each slot may stay empty)."""
    scenario = challenge.agent or {}
    names = [slot["name"] for slot in scenario.get("slots") or []]
    for name, text in slots.items():
        if name not in names:
            raise ApplicationError(f"No slot '{name}' in this scenario.", fields={"slots": [name]})
        if len(text) > PROMPT_MAX_CHARS or "\x00" in text:
            raise ApplicationError(
                f"A slot's text is at most {PROMPT_MAX_CHARS} characters, without NUL.",
                fields={"slots": [name]},
            )
    return AgentTryPlan(
        challenge=challenge,
        system_prompt=fill_secret(scenario.get("system_prompt") or "", _try_it_secret(challenge)),
        target=target_config_for(challenge=challenge),
        slots={name: slots.get(name, "") for name in names},
    )


async def _agent_try_loop(plan: AgentTryPlan, *, task: str, slots: dict, defences: list):
    async def ask(messages, tools):
        return await agent_complete_async(
            messages=messages, tools=tools, user=TRY_IT_USER, config=plan.target
        )

    return await agent_loop(
        scenario=plan.challenge.agent,
        system_prompt=plan.system_prompt,
        task=task,
        slots=slots,
        defences=defences,
        ask=ask,
    )


def _step(step) -> dict[str, Any]:
    return {
        "kind": step.kind,
        "content": step.content,
        "tool": step.tool,
        "args": step.args,
        "refused_by": step.refused_by,
    }


async def _benign_check(plan: AgentTryPlan, item: dict, empty: dict) -> dict[str, Any]:
    """A benign task with the defences on; when it fails, whether it passes without the
    agent layers, and which of them alone breaks it."""
    defences = list(plan.challenge.defences or [])
    outcome = await _agent_try_loop(plan, task=item["task"], slots=empty, defences=defences)
    passed = benign_passed(expect=item["expect"], outcome=outcome)
    result: dict[str, Any] = {"task": item["task"], "passed": passed, "broken_by": []}
    agent_layers = [layer for layer in defences if layer.get("type") in AGENT_DEFENCE_KINDS]
    if passed or not agent_layers:
        return result
    others = [layer for layer in defences if layer not in agent_layers]
    bare = await _agent_try_loop(plan, task=item["task"], slots=empty, defences=others)
    if not benign_passed(expect=item["expect"], outcome=bare):
        return result
    for layer in agent_layers:
        alone = await _agent_try_loop(
            plan, task=item["task"], slots=empty, defences=[*others, layer]
        )
        if not benign_passed(expect=item["expect"], outcome=alone):
            result["broken_by"].append(layer["type"])
    # Only together do they break it: name them all.
    result["broken_by"] = result["broken_by"] or [layer["type"] for layer in agent_layers]
    return result


async def try_it_agent_run(*, plan: AgentTryPlan) -> dict[str, Any]:
    """One run of the scenario and its benign tasks, as a player's would go; nothing
    recorded, nothing masked. A target that fails is named, for the creator to fix."""
    scenario = plan.challenge.agent
    started = time.monotonic()
    try:
        outcome = await _agent_try_loop(
            plan, task=scenario["task"], slots=plan.slots, defences=plan.challenge.defences or []
        )
        won, why = run_verdict(scenario=scenario, outcome=outcome)
        empty = {name: "" for name in plan.slots}
        benign = [
            await _benign_check(plan, item, empty) for item in scenario.get("benign_tasks") or []
        ]
    except TargetError as exc:
        return {
            "error": f"The target model did not answer: {exc}",
            "elapsed_ms": round((time.monotonic() - started) * 1000),
            "recorded": False,
        }
    return {
        "won": won,
        "why": why,
        "steps": [_step(step) for step in outcome.steps],
        "final_answer": outcome.final_answer,
        "stop_reason": outcome.stop_reason,
        "tokens_total": outcome.tokens_total,
        "elapsed_ms": round((time.monotonic() - started) * 1000),
        "benign": benign,
        "error": "",
        "recorded": False,
    }

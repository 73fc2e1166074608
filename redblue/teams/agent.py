"""Red/blue on an agent scenario (docs/redblue.md, "Agent scenarios"; issue 29 §4).

Blue's defence is the agent's system prompt and its defence layers; Red's attack is the
text of the scenario's slots. A pairing runs the one agent loop
(`challenges.agents.loop.agent_loop`) and is breached when the run meets the scenario's win
rule (`run_verdict`), not by the text judges. A defence's run of the scenario's benign
tasks happens once per defence (when it is checked, before it counts) and is kept on the
submission; its pass ratio scales Blue's points.

Nothing here touches the database: callers (the Celery tasks) load rows before and store
after. The loop is async and so is everything here; the tasks drive it with
`async_to_sync`, as the rest of their work is synchronous.
"""

from dataclasses import dataclass
from decimal import Decimal
from typing import Any

from django.conf import settings

from challenges.agents.loop import RunOutcome, agent_loop, benign_passed, run_verdict
from challenges.agents.schema import agent_clean, agent_errors
from challenges.modes.agent import slot_errors
from challenges.services.agent_runs import slots_prompt
from challenges.services.defences import agent_defence_errors, defence_errors
from core.errors import ApplicationError
from judging.agent_models import agent_complete_async
from judging.category_judge import CategoryVerdict, SuiteVerdict
from judging.targets import TargetConfig, TargetReply
from redblue.models import RedBlueChallenge, Team

# The one "category" an agent pairing is judged on: the scenario's goal.
GOAL = "GOAL"
DEFENCES_MAX = 20
REFUSED_FOR_RED = "Refused by the defence."


def scenario_errors(agent: Any) -> list[str]:
    """A red/blue challenge's `agent`: null, or a scenario as agent challenges take it."""
    if agent is None:
        return []
    return agent_errors(agent)


def scenario_cleaned(agent: Any) -> dict | None:
    return agent_clean(agent) if agent is not None else None


def _tool_parameters(scenario: dict) -> dict[str, set[str]]:
    return {
        tool["name"]: set((tool.get("parameters") or {}).get("properties") or {})
        for tool in scenario["tools"]
    }


def defences_checked(*, scenario: dict, defences: Any) -> list:
    """Blue's layers, checked by the code that checks an agent challenge's `defences`."""
    if defences is None:
        return []
    errors = []
    if isinstance(defences, list) and len(defences) > DEFENCES_MAX:
        errors.append(f"At most {DEFENCES_MAX} layers.")
    errors += defence_errors(defences)
    errors += agent_defence_errors(
        defences, agent_mode=True, tools=_tool_parameters(scenario) if not errors else {}
    )
    if errors:
        raise ApplicationError(errors[0], fields={"defences": errors})
    return defences


def slots_checked(*, scenario: dict, slots: Any) -> dict[str, str]:
    """Red's slot texts, every slot present (unwritten ones empty), or a 400 on `slots`."""
    errors = slot_errors(scenario, slots)
    if errors:
        raise ApplicationError(next(iter(errors.values()))[0], fields=errors)
    return {slot["name"]: slots.get(slot["name"], "") for slot in scenario["slots"]}


@dataclass(frozen=True)
class AgentSubmission:
    prompt: str  # Blue: the system prompt; Red: the slots as text
    slots: dict[str, str] | None
    defences: list


def agent_submission_checked(
    *,
    challenge: RedBlueChallenge,
    team: str,
    prompt: Any,
    slots: Any,
    defences: Any,
) -> AgentSubmission:
    """What a side sends on an agent scenario, checked: Red `{slots}`, Blue `{prompt?,
    defences?}` (no prompt: the scenario's own system prompt)."""
    scenario = challenge.agent
    if team == Team.RED:
        if prompt not in (None, ""):
            raise ApplicationError(
                "This challenge is an agent scenario: Red writes the slots' texts "
                "({slots: {name: text}}), not a prompt.",
                fields={"prompt": ["Send slots instead."]},
            )
        if defences is not None:
            raise ApplicationError(
                "Defences are Blue's.", fields={"defences": ["Only Blue sends defences."]}
            )
        texts = slots_checked(scenario=scenario, slots=slots)
        return AgentSubmission(prompt=slots_prompt(texts), slots=texts, defences=[])
    if slots is not None:
        raise ApplicationError(
            "Slots are Red's: Blue sends the agent's system prompt and defences.",
            fields={"slots": ["Only Red sends slots."]},
        )
    layers = defences_checked(scenario=scenario, defences=defences)
    system_prompt = prompt if isinstance(prompt, str) and prompt.strip() else None
    if system_prompt is None:
        system_prompt = scenario.get("system_prompt") or ""
    if not system_prompt.strip() and not layers:
        raise ApplicationError(
            "Write the agent's system prompt or choose a defence layer.",
            fields={"prompt": ["Required when the scenario has no system prompt."]},
        )
    return AgentSubmission(prompt=system_prompt, slots=None, defences=layers)


def target_config(challenge: RedBlueChallenge) -> TargetConfig:
    if challenge.target == RedBlueChallenge.Target.OPENAI:
        return TargetConfig(
            provider="openai",
            model=challenge.target_model,
            base_url=settings.OPENAI_BASE_URL,
            api_key=settings.OPENAI_API_KEY,
            timeout_seconds=settings.TARGET_TIMEOUT_SECONDS,
            max_retries=settings.TARGET_MAX_RETRIES,
        )
    return TargetConfig(provider="offline")


async def _run(
    *,
    challenge: RedBlueChallenge,
    system_prompt: str,
    defences: list,
    task: str,
    slots: dict[str, str],
    user: str,
) -> RunOutcome:
    """One run of the scenario (raises TargetError when the model does not answer)."""
    scenario = challenge.agent
    config = target_config(challenge)

    async def ask(messages, tools):
        return await agent_complete_async(messages=messages, tools=tools, user=user, config=config)

    return await agent_loop(
        scenario=scenario,
        system_prompt=system_prompt,
        task=task,
        slots=slots,
        defences=defences,
        ask=ask,
    )


def trace_of(outcome: RunOutcome) -> dict[str, Any]:
    """A run as a pairing stores it; the steps as SPEC §9's runs show them."""
    steps = []
    for index, step in enumerate(outcome.steps):
        item: dict[str, Any] = {"index": index, "kind": step.kind}
        if step.kind in ("model", "final"):
            item["content"] = step.content
        elif step.kind == "tool_call":
            item.update(tool=step.tool, args=step.args or {}, refused_by=step.refused_by)
        else:
            item.update(tool=step.tool, result=step.content)
        steps.append(item)
    return {
        "steps": steps,
        "final_answer": outcome.final_answer,
        "stop_reason": outcome.stop_reason,
        "won": outcome.won,
        "why": outcome.why,
    }


def trace_for_red(trace: dict | None) -> dict | None:
    """What an attacker reads of a run: every call and result, but a call Blue's defence
    refused says only that it was refused, not which layer or why (a defence is Blue's)."""
    if not trace:
        return trace
    steps, refused = [], False
    for step in trace.get("steps") or []:
        step = dict(step)
        if step["kind"] == "tool_call":
            refused = step.get("refused_by") not in ("", "invalid", None)
            if refused:
                step["refused_by"] = "defence"
        elif step["kind"] == "tool_result" and refused:
            step["result"] = REFUSED_FOR_RED
            refused = False
        steps.append(step)
    return {**trace, "steps": steps}


async def benign_report_async(
    *, challenge: RedBlueChallenge, system_prompt: str, defences: list, user: str = ""
) -> dict[str, Any]:
    """The scenario's benign tasks under a defence: `{passed, total, tasks: [{task,
    passed}]}`. Each runs with the task replaced and every slot empty (SPEC §9)."""
    scenario = challenge.agent
    empty = {slot["name"]: "" for slot in scenario["slots"]}
    tasks = []
    for item in scenario.get("benign_tasks") or []:
        outcome = await _run(
            challenge=challenge,
            system_prompt=system_prompt,
            defences=defences,
            task=item["task"],
            slots=empty,
            user=user,
        )
        tasks.append(
            {"task": item["task"], "passed": benign_passed(expect=item["expect"], outcome=outcome)}
        )
    return {
        "passed": sum(1 for item in tasks if item["passed"]),
        "total": len(tasks),
        "tasks": tasks,
    }


def benign_ratio(report: dict | None) -> Decimal:
    """The share of benign tasks a defence passes; 1 when the scenario has none."""
    if not report or not report.get("total"):
        return Decimal(1)
    return Decimal(report["passed"]) / Decimal(report["total"])


@dataclass(frozen=True)
class AgentRun:
    reply: TargetReply
    verdict: SuiteVerdict
    trace: dict[str, Any]


async def agent_pairing_run_async(
    *,
    challenge: RedBlueChallenge,
    slots: dict[str, str],
    system_prompt: str,
    defences: list,
    user: str = "",
) -> AgentRun:
    """Red's slots against Blue's defence: the run, and its verdict as a one-category
    suite verdict (`GOAL` breached when the win rule is met), so pairings, points, the
    regression set and the boards treat it as any other."""
    scenario = challenge.agent
    outcome = await _run(
        challenge=challenge,
        system_prompt=system_prompt,
        defences=defences,
        task=scenario["task"],
        slots=slots,
        user=user,
    )
    outcome.won, outcome.why = run_verdict(scenario=scenario, outcome=outcome)
    verdict = SuiteVerdict(
        categories=(
            CategoryVerdict(
                code=GOAL,
                breached=outcome.won,
                rating=None,
                feedback=outcome.why,
            ),
        ),
        rating_scale=10,
        details={"judged_by": "win_rule"},
    )
    reply = TargetReply(
        text=outcome.final_answer,
        tokens_total=outcome.tokens_total,
        elapsed_ms=outcome.elapsed_ms,
    )
    return AgentRun(reply=reply, verdict=verdict, trace=trace_of(outcome))

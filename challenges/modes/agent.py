"""`agent`: the player writes content an agent with tools reads (SPEC §9, docs/agents.md).

A run takes the checks of an attempt (window, level, rate limits, the in-flight cap, the
budget hold, the target by the challenge's assignment: `play_start`), runs the agent loop
(challenges/agents/loop.py) with the player's slot texts and then, unless an earlier run of
the same configuration on the same target ran them (`agent_benign_known`), the scenario's
benign tasks, and records it with `agent_run_record`. No thread or database connection
waits on the model: the ORM runs before and after the awaits.
"""

import json
from decimal import Decimal
from typing import ClassVar

from django.contrib.auth.models import AbstractBaseUser

from challenges.agents.loop import agent_loop, benign_passed, run_verdict
from challenges.bridge.services import BridgeCall, EvaluationPlan
from challenges.models import Challenge
from challenges.modes import PlayMode
from challenges.selectors.agent_runs import (
    BenignKey,
    agent_benign_known,
    agent_run_latest,
    agent_run_steps,
    benign_key,
)
from challenges.services.agent_runs import (
    AgentRunResult,
    BenignCheck,
    agent_run_record,
    slots_prompt,
)
from challenges.services.budgets import budget_release
from challenges.services.play import PROMPT_MAX_CHARS, PlayPlan, play_start, target_failed
from challenges.services.secrets import fill_secret
from core.errors import ApplicationError
from core.ratelimit import in_flight_release
from core.threads import run_orm
from judging.agent_models import agent_complete_async
from judging.targets import TargetError
from players.models import EndUser

SLOT_KIND_WORDS = {
    "email": "email",
    "web_page": "web page",
    "document": "document",
    "tool_result": "tool result",
}
NOT_ONE_PROMPT = (
    "This challenge is an agent scenario: write the content its agent reads and start a run "
    "(POST /web/api/challenges/{id}/runs with {slots})."
)
NOT_ON_THE_BRIDGE = (
    "This challenge is an agent scenario played on this site (its runs call tools here); "
    "a Dify workflow's output cannot be judged as one."
)


def _slot_errors(challenge: Challenge, slots: object) -> dict[str, list[str]]:
    return slot_errors(challenge.agent, slots)


def slot_errors(scenario: dict, slots: object) -> dict[str, list[str]]:
    """What is wrong with a player's slot texts for `scenario` (red/blue's Red too)."""
    names = [slot["name"] for slot in scenario["slots"]]
    if not isinstance(slots, dict):
        return {"slots": ["An object of slot name to text: " + ", ".join(names) + "."]}
    errors: dict[str, list[str]] = {}
    for name, text in slots.items():
        if name not in names:
            errors.setdefault("slots", []).append(
                f"No slot '{name}' here; the slots are: {', '.join(names)}."
            )
        elif not isinstance(text, str):
            errors.setdefault("slots", []).append(f"'{name}': text.")
        elif len(text) > PROMPT_MAX_CHARS:
            errors.setdefault("slots", []).append(
                f"'{name}': at most {PROMPT_MAX_CHARS} characters."
            )
        elif "\x00" in text:
            errors.setdefault("slots", []).append(f"'{name}': text may not contain NUL characters.")
    if not errors and not any(isinstance(text, str) and text.strip() for text in slots.values()):
        errors["slots"] = ["Write something in a slot first: " + ", ".join(names) + "."]
    return errors


def _run_start(*, challenge: Challenge, account, slots, ip: str, codename: str):
    errors = _slot_errors(challenge, slots)
    if errors:
        raise ApplicationError(next(iter(errors.values()))[0], fields=errors)
    texts = {slot["name"]: slots.get(slot["name"], "") for slot in challenge.agent["slots"]}
    plan, claim = play_start(
        challenge=challenge,
        account=account,
        prompt=slots_prompt(texts),
        ip=ip,
        codename=codename,
    )
    return plan, claim, texts


async def _loop(plan: PlayPlan, *, task: str, slots: dict[str, str]):
    scenario = plan.challenge.agent
    meter = plan.meter

    async def ask(messages, tools):
        try:
            return await agent_complete_async(
                messages=messages,
                tools=tools,
                user=plan.end_user.external_id,
                config=plan.target_config,
            )
        except TargetError as exc:
            raise target_failed(challenge=plan.challenge, error=exc) from None

    return await agent_loop(
        scenario=scenario,
        system_prompt=fill_secret(scenario.get("system_prompt") or "", plan.secret),
        task=task,
        slots=slots,
        defences=plan.challenge.defences,
        ask=ask,
        cost_of=(lambda tokens, sent: meter.cost(tokens_total=tokens, input_text=sent))
        if meter
        else None,
    )


async def _benign_check(plan: PlayPlan, *, key: BenignKey, slot_names) -> BenignCheck:
    """The scenario's benign tasks on the run's defences and target, every slot empty."""
    benign, tokens, costs, usage = [], 0, [], []
    empty = {name: "" for name in slot_names}
    for item in plan.challenge.agent.get("benign_tasks") or []:
        checked = await _loop(plan, task=item["task"], slots=empty)
        benign.append(
            {"task": item["task"], "passed": benign_passed(expect=item["expect"], outcome=checked)}
        )
        tokens += checked.tokens_total
        usage.extend(checked.check_usage)
        if checked.cost is not None:
            costs.append(checked.cost)
    return BenignCheck(
        key=key,
        benign=benign,
        tokens=tokens,
        cost=sum(costs, Decimal(0)) if costs else None,
        check_usage=tuple(usage),
    )


async def agent_run_async(
    *,
    challenge: Challenge,
    account: AbstractBaseUser,
    slots,
    ip: str,
    source: str,
    codename: str = "",
) -> AgentRunResult:
    plan, claim, texts = await run_orm(
        _run_start, challenge=challenge, account=account, slots=slots, ip=ip, codename=codename
    )
    scenario = challenge.agent
    try:
        key = benign_key(
            challenge=challenge,
            target_config=plan.target_config,
            system_prompt=fill_secret(scenario.get("system_prompt") or "", plan.secret),
        )
        benign = await run_orm(agent_benign_known, challenge=challenge, key=key)
        outcome = await _loop(plan, task=scenario["task"], slots=texts)
        outcome.won, outcome.why = run_verdict(scenario=scenario, outcome=outcome)
        check = None
        if benign is None:
            check = await _benign_check(plan, key=key, slot_names=texts)
            benign = check.benign
    except BaseException:
        await run_orm(budget_release, plan.meter)
        raise
    finally:
        await run_orm(in_flight_release, claim)
    return await run_orm(
        agent_run_record,
        plan=plan,
        slots=texts,
        outcome=outcome,
        benign=benign,
        benign_check=check,
        source=source,
    )


class AgentPlay(PlayMode):
    name = "agent"
    # A run calls the model and the tools here; the lane records only replies made elsewhere.
    lane_records = False
    play_template = "challenges/_play_agent.html"
    # The scenario has its own sections (challenges/admin_agent.py), not fields here.
    admin_fields: ClassVar[tuple[str, ...]] = ()

    @classmethod
    def admin_sections(cls, classes: tuple[str, ...]) -> list[tuple[str, dict]]:
        from challenges.admin_agent import agent_fieldsets

        return [
            *agent_fieldsets(classes),
            (
                "Agent scenario as JSON (advanced)",
                {"classes": ("collapse", *classes[-1:]), "fields": ("agent",)},
            ),
        ]

    async def attempt_async(self, *, challenge, account, prompt, ip, source, codename=""):
        raise self.refused(NOT_ONE_PROMPT)

    async def attempt_stream_start(self, *, challenge, account, prompt, ip, source, codename=""):
        raise self.refused(NOT_ONE_PROMPT)

    async def run_async(self, *, challenge, account, slots, ip, source, codename=""):
        return await agent_run_async(
            challenge=challenge,
            account=account,
            slots=slots,
            ip=ip,
            source=source,
            codename=codename,
        )

    async def bridge_evaluate(self, *, call: BridgeCall, plan: EvaluationPlan):
        raise self.refused(NOT_ON_THE_BRIDGE)

    def page_context(self, *, challenge: Challenge, end_user: EndUser | None) -> dict:
        run = agent_run_latest(challenge=challenge, end_user=end_user)
        steps = agent_run_steps(run=run) if run else []
        for step in steps:
            step.args_text = json.dumps(step.args or {}, ensure_ascii=False, indent=1)
        written = run.slots if run else {}
        return {
            "agent_run": run,
            "agent_steps": steps,
            "agent_tools": challenge.agent.get("tools", []),
            # Each slot with the player's text of their last run, to edit and run again.
            "agent_slot_fields": [
                {
                    **slot,
                    "kind_words": SLOT_KIND_WORDS.get(slot["kind"], slot["kind"]),
                    "text": written.get(slot["name"], ""),
                }
                for slot in challenge.agent.get("slots", [])
            ],
        }
